"""Turn the base with the joints: a reorientation planner from curvature, landing on the exact eq. 9.

A free-floating robot at zero momentum turns its base by moving its joints along closed loops: the
net rotation of a loop (its holonomy) is what [Mishra2023] eq. 9 integrates, and for small loops the
area integral of the curvature (Theorem 2, eq. 11).  :func:`plan_reorientation` inverts this:

1. **Joints and first loop (curvature, eq. 11).**  The curvature at the start shape projected on the
   target axis is a 2-form ``F_theta`` on the joints; a small loop ``q0 + a (cos s - 1) + b sin s``
   turns the base about the axis by ``-pi a^T F_theta b`` (Stokes).  In joint coordinates scaled by the
   speed limits, the largest singular pair of ``F_theta`` is the best such plane; its largest-weight
   joints are the loop's joints and the plane, scaled to the position limits, is the first guess.
2. **The fastest loop (exact eq. 9).**  A truncated Fourier series per joint [Fernandes1994] is
   optimized (SLSQP, one harmonic more at a time, from both sides of the first guess) for the rotation
   about the axis per second at constant path speed, with no rotation about the two other axes, within
   the position, speed and acceleration limits (each a soft minimum over dense samples) and at most
   ``MAX_CYCLE_ROTATION`` per cycle.  The holonomy is the exact eq. 9 (``holonomy.py``), its gradient the
   curvature transported along the loop (Theorem 2), not finite differences.  If that loop brings the
   arm closer to the base than the clearance (their URDF collision geometry, ``clearance.py``), it is
   shrunk until clear and optimized again with the clearance as a constraint.
3. **Landing (exact eq. 9).**  ``N`` cycles of one loop turn the base by ``H^N``; with
   ``log H = theta / N`` exactly (``theta`` the target's rotation vector, ``N`` the smallest number of
   cycles of the fastest loop that reach it) ``H^N`` is the target.  Gauss-Newton on the loop's
   coefficients (minimum-norm steps, the curvature gradient) solves ``log H = theta / N`` to round-off,
   from the fastest loop scaled to ``theta / N`` (or, if the scaled loop leaves the limits, from the
   shortest loop SLSQP finds for ``theta / N``), on an integration refined until it is converged.
   All cycles are the same loop, repeated as [Vafa1990]'s cyclic motions, so there is no fractional last
   cycle; rotations about any axis come from one loop in several joints (its projected areas in the
   joint planes combine, including the non-commuting parts that eq. 11 misses).  One cycle fewer still
   (at most ``GROWTH`` times the fastest loop's rotation per cycle) is tried first with a loop grown for it:
   SLSQP from the fastest loop raises its rotation about the axis to ``theta / N`` within the position
   limits and the clearance (from a loop within them, where a scaled loop outside them may not come
   back), then the shortest such cycle, landed; it is kept if its rate is at least ``GROWN_RATE`` of the
   fastest's.  About the orbital robot's x-y axes the fastest loop is small (~5 deg per cycle, against
   11 about z), and the grown one halves the cycles at about the same rate.
4. **Timing.**  The ``N`` cycles are timed as one path from rest to rest, time-optimally within the
   speed and acceleration limits [Pham2018] (``timing.py``); at zero momentum the rotation depends on
   the path only, so the timing does not change it.  A different final shape adds a straight move at
   the end, whose own rotation the loops compensate.
5. **Prediction.**  The base attitude along the timed trajectory by eq. 9 (with the momentum's drift if
   there is momentum), at the trajectory's samples.  With momentum the plan also waits at ``q0`` for
   the drift to bring the end time where the loops can land (:func:`_momentum_plan`).

:func:`~.baseline.naive_baseline` (``baseline.py``) is the comparison: the best single circle of the CCF maps
(Algorithm 1) in one joint plane, repeated.  Steps 1-3 are ``loops.py`` (one loop family) and ``loop_search.py``
(the loops for an axis).
"""
import math
import time

import numpy as np

from .. import validation as check
from ..dynamics.centroidal import center_of_mass
from ..validation import InputError
from .clearance import _base_clearance
from .holonomy import attitudes_along, momentum_at_rest, path_rotation, rotation_matrix, rotation_vector
from .limits import DEFAULT_MARGIN, _check_within, _joint_indices, joint_limits
from .loop_search import _LoopSearch
from .loops import LANDING_STEPS, _LoopFamily
from .paths import FourierLoop, LinePath
from .rotations import checked_rotation, rotation_angle
from .timing import Hold, TimedPath, Trajectory, TrajectoryWindow, time_path

#: Fourier harmonics per joint of the loop.
HARMONICS = 3
#: Joints in the loop (the strongest for the axis by curvature, unless given).
LOOP_JOINTS = 4
#: Distance (m) kept between the base's and the arm's collision geometries, by default.
CLEARANCE = 0.02
#: Timing grid intervals per cycle.
TIMING_INTERVALS = 256
#: Refuse targets that need more cycles than this.
MAX_CYCLES = 400
#: With momentum: the drift's time step (s) and the end-time grid's; the plans screened; the loops' rate
#: discount when screening end times; the slack kept for the corrections; the fixed-point iterations.
DRIFT_STEP, MOMENTUM_SEARCHES, RATE_SCREEN, MOMENTUM_SLACK, MOMENTUM_ITERATIONS = 0.05, 8, 0.9, 0.25, 16
#: With momentum: the end attitude's tolerance (rad) of the corrections (a plan that does not reach it is refused);
#: of a remainder's (its loops' time-optimal timing jumps by a few percent between nearby loops, where the grid's
#: check finds the limits exceeded or not, and the anisotropic drift makes that ~5e-5 rad at the end: far below
#: what an attitude estimate resolves).
MOMENTUM_TOLERANCE, REMAINDER_TOLERANCE = 1e-8, 1e-4
#: Longest plan with momentum (s).
MAX_DURATION = 300.0
#: Sample period (s) of the plan's trajectory and attitude.
SAMPLE_PERIOD = 0.01


# -- the plan ----------------------------------------------------------------------------------------

class ReorientationPlan:
    """A joint trajectory that turns the base by ``target``, and what eq. 9 predicts along it.

    ``times``, ``positions``, ``velocities``, ``accelerations``: the trajectory sampled every
    ``SAMPLE_PERIOD`` (and at its end); :meth:`evaluate` gives it at any time.  ``attitudes``: the
    predicted base rotation ``R1(0)^T R1(t)`` at ``times``.  ``loop``: one cycle of the loop, repeated
    ``cycles`` times; ``cycle_times`` (cycles + 1,): when each cycle starts (and the last ends), s from the
    plan's start, ``cycle_speeds``: the loop's path speed then (rad of its parameter per second).
    ``momentum``: the momentum ``J`` of the prediction (:func:`~.holonomy.momentum_at_rest`; ``None``: zero).
    """

    def __init__(self, model, trajectory, target, loop, cycles, loop_rotation, limits, momentum=None,
                 sample_period=SAMPLE_PERIOD, name="planner"):
        self.joint_names = model.joint_names
        self.trajectory, self.target, self.loop, self.cycles = trajectory, target, loop, cycles
        self.loop_rotation = loop_rotation    #: rotation vector (rad) of one cycle at zero momentum
        self.limits, self.name, self.momentum = limits, name, momentum
        self.planning_time = None             #: s (wall clock), set by the planner when the plan is complete
        self.planning_cpu_time = None         #: s of the process's CPU time meanwhile (a loaded machine's wall time
                                              #: is longer; this is what the planning costs)
        self.cycle_times, self.cycle_speeds = _cycle_boundaries(trajectory, cycles)
        self.duration = trajectory.duration
        self.times = np.append(np.arange(0.0, self.duration, sample_period), self.duration)
        if self.times[-1] - self.times[-2] < 1e-9:
            self.times = self.times[:-1]
        self.positions, self.velocities, self.accelerations = trajectory.evaluate(self.times)
        self.attitudes = attitudes_along(model, trajectory, self.times, momentum)
        self.predicted_rotation = self.attitudes[-1]

    def evaluate(self, t):
        """``(q, qdot, qddot)`` at time(s) ``t`` (s from the plan's start)."""
        return self.trajectory.evaluate(t)

    @property
    def error(self):
        """Angle (rad) of ``target^T predicted_rotation``."""
        return rotation_angle(self.target.T @ self.predicted_rotation)

    @property
    def rotation_per_cycle(self):
        """Rotation (rad) about the target axis per cycle of the loop (predicted, eq. 9)."""
        return self.loop_rotation @ self.axis if self.cycles else 0.0

    @property
    def axis(self):
        phi = rotation_vector(self.target)
        return phi / max(np.linalg.norm(phi), 1e-300)

    def summary(self):
        """The plan's numbers (degrees, seconds) as a flat dict."""
        pos_margin = np.minimum(self.positions - self.limits.lower, self.limits.upper - self.positions).min()
        return {"name": self.name,
                "target_rotation_deg": math.degrees(rotation_angle(self.target)),
                "predicted_error_deg": math.degrees(self.error),
                "cycles": self.cycles, "duration_s": self.duration, "planning_time_s": self.planning_time,
                "planning_cpu_s": self.planning_cpu_time,
                "rotation_per_cycle_deg": math.degrees(self.rotation_per_cycle),
                "rotation_rate_deg_s": math.degrees(rotation_angle(self.target)) / self.duration,
                "loop_joints": [self.joint_names[j] for j in self.loop.joints] if self.loop is not None else [],
                "max_joint_speed_ratio": float((np.abs(self.velocities) / self.limits.velocity).max()),
                "max_joint_acceleration_ratio": float((np.abs(self.accelerations) / self.limits.acceleration).max()),
                "min_joint_limit_margin_rad": float(pos_margin + self.limits.margin),
                "min_margin_beyond_required_rad": float(pos_margin)}


def _cycle_boundaries(trajectory, cycles):
    """``(times, path speeds)`` of the loop's cycle boundaries in ``trajectory`` (empty without a loop): the
    timing grid has ``TIMING_INTERVALS`` intervals per cycle, so the boundaries are grid points."""
    for start, piece in zip(trajectory.starts, trajectory.pieces):
        if isinstance(piece, TimedPath) and isinstance(piece.path, FourierLoop):
            i = np.arange(cycles + 1) * ((len(piece.timing.s) - 1) // cycles)
            return start + piece.timing.t[i], piece.timing.sdot[i]
    return np.zeros(0), np.zeros(0)


def attitude_change(model, plan, start, end, J=None):
    """``R1(start)^T R1(end)``: what ``plan`` turns the base by between two of its times (eq. 9; ``J``: the
    momentum in the base frame at ``start``, :func:`~.holonomy.momentum_at_rest`; default none)."""
    window = TrajectoryWindow(plan.trajectory, start, end)
    return attitudes_along(model, window, [0.0, window.duration], J)[-1]


# -- the planner -------------------------------------------------------------------------------------

def plan_reorientation(model, q0, target, *, mu=None, joints=None, q_final=None, margin=DEFAULT_MARGIN,
                       position_limits=None, velocity_limits=None, acceleration_limits=None,
                       harmonics=HARMONICS, loop_joints=LOOP_JOINTS, cycles=None, max_cycles=MAX_CYCLES,
                       clearance=CLEARANCE, max_duration=MAX_DURATION, sample_period=SAMPLE_PERIOD):
    """A :class:`ReorientationPlan` that turns the base by ``target`` (3x3, ``R1(0)^T R1(T)``: see
    :func:`rotation_from_axis_angle`) from shape ``q0``, ending at ``q_final`` (default ``q0``).

    ``mu``: the locked velocity ``[omega; v]`` at the start (the base's twist if the joints were at rest;
    default zero).  With momentum the base drifts; the plan waits at ``q0`` first, then moves, so that the
    attitude at its end (at most ``max_duration`` s) is the target (:func:`_momentum_plan`).
    ``joints``: names or indices of the joints the loops may use (default all).  ``cycles``: the number of
    loop cycles to try first (default: the fewest the fastest loop needs).  Limits: see :func:`joint_limits`.
    ``clearance``: the distance (m) the arm keeps from the base, between their URDF collision geometries
    (``clearance.py``; ``None``: not checked; nothing is checked if the URDF has no collision geometry).
    Method: the module doc.  Raises :class:`InputError` with the reason if the target cannot be reached
    within the limits.
    """
    start = _clocks()
    q0 = check.vector("q0", q0, model.n)
    target = checked_rotation("target", target)
    limits = joint_limits(model, margin, position_limits, velocity_limits, acceleration_limits)
    q_final = q0 if q_final is None else check.vector("q_final", q_final, model.n)
    for name, q in (("q0", q0), ("q_final", q_final)):
        _check_within(model, name, q, limits)
    base = _base_clearance(model, clearance)
    for name, q in (("q0", q0), ("q_final", q_final)):
        if base is not None and base[0].distances([q])[0] < base[1]:
            raise InputError(f"{name}: the arm is closer than the clearance {base[1]} m to the base")
    loops = _LoopSearch(model, q0, _joint_indices(model, joints), limits, harmonics, loop_joints, max_cycles,
                        base)
    moves = [] if np.array_equal(q_final, q0) else [LinePath(q0, q_final)]
    R_moves = path_rotation(model, loops.ws, moves[0], LANDING_STEPS) if moves else np.eye(3)
    J = None if mu is None else momentum_at_rest(model, q0, check.vector("mu", mu, 6))
    if J is None or not J.any():
        loop, n, phi = loops.land(rotation_vector(target @ R_moves.T), cycles)
        trajectory, J = _trajectory(q0, loop, moves, limits), None
    else:
        loop, n, phi, trajectory = _momentum_plan(model, q0, target, J, loops, moves, R_moves, limits, cycles,
                                                  max_duration, sample_period)
    plan = ReorientationPlan(model, trajectory, target, None if loop is None else loop.with_coefficients(
        loop.coefficients, 1), n, phi, limits, J, sample_period)
    plan.planning_time, plan.planning_cpu_time = _elapsed(start)
    return plan


def _clocks():
    return time.perf_counter(), time.process_time()


def _elapsed(start):
    """``(wall, CPU)`` seconds since ``start = _clocks()``."""
    return tuple(now - then for now, then in zip(_clocks(), start))


def _trajectory(q0, loop, moves, limits, wait=0.0):
    """A wait at ``q0``, the loop's cycles, then the moves, each timed from rest to rest."""
    v, a = limits.velocity, limits.acceleration
    pieces = [Hold(q0, wait)]
    if loop is not None:
        pieces.append(TimedPath(loop, time_path(loop, v, a, TIMING_INTERVALS * loop.cycles)))
    pieces += [TimedPath(p, time_path(p, v, a, TIMING_INTERVALS)) for p in moves]
    if all(p.duration <= 0 for p in pieces):
        pieces = [Hold(q0, SAMPLE_PERIOD)]
    return Trajectory(pieces)


def _momentum_plan(model, q0, target, J, loops, moves, R_moves, limits, cycles, max_duration, sample_period):
    """``(loop, cycles, phi, trajectory)`` ending at the target with the momentum ``J`` (``momentum_at_rest``).

    The base drifts: with the joints at rest it turns as the locked rigid body, ``D(t)`` (eq. 9 with the
    joints still, integrated once).  Were the locked inertia isotropic, the drift and the joints'
    zero-momentum rotation ``G`` would compose exactly, ``R1(T) = D(T) G``: the spin about the conserved
    momentum is the same whatever the joints do (the dynamic and the geometric phase [Shammas2007]).  So
    the joints must add ``G(T) = D(T)^T target`` by the end ``T``.  The plan takes the first ``T`` of a grid
    at which the loops for ``G(T)`` fit in time (screened with the loops' rate, then planned), waits at
    ``q0`` for the rest of ``T``, and corrects ``G`` for the real, anisotropic inertia by the fixed point
    ``G <- G R1(T)^T target`` on the exact prediction, ``T`` fixed (the wait absorbs the loops' timing).
    """
    grid = np.arange(0.0, max_duration + DRIFT_STEP / 2, DRIFT_STEP)
    drift = attitudes_along(model, Trajectory([Hold(q0, grid[-1])]), grid, J)
    needed = np.einsum("tji,jk->tik", drift, target) @ R_moves.T           # D(T)^T target, then the moves
    angles = np.array([rotation_angle(G) for G in needed])
    move_time = sum(time_path(p, limits.velocity, limits.acceleration, TIMING_INTERVALS).duration for p in moves)
    rate = RATE_SCREEN * loops.for_axis(rotation_vector(target @ R_moves.T)).best.rate
    best = None
    for _ in range(MOMENTUM_SEARCHES):
        fits = np.flatnonzero(grid * (1 - MOMENTUM_SLACK) >= move_time + angles / rate)
        if fits.size == 0:
            break
        i = fits[0]
        search = loops.for_axis(rotation_vector(needed[i]))
        loop, n, _ = search.land(rotation_vector(needed[i]), cycles, grow=False)     # screening: the fast way
        loop_time = _trajectory(q0, loop, [], limits).duration
        if loop_time + move_time <= grid[i] * (1 - MOMENTUM_SLACK):
            found = _momentum_corrected(model, q0, target, J, search, cycles or n, moves, R_moves, limits, grid[i],
                                        needed[i] @ R_moves, sample_period)
            if found is not None and found[0] < MOMENTUM_TOLERANCE:
                return found[1]
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        rate = min(rate, angles[i] / loop_time) * RATE_SCREEN
    kin = model.kinematics(q0)
    k = J[:3] - np.cross(center_of_mass(kin), J[3:])                 # about the CoM
    drift_rate = math.degrees(np.linalg.norm(np.linalg.solve(kin.M_b, J)[:3]))
    raise InputError(f"with the momentum (angular momentum {np.round(k, 4).tolist()} N m s about the CoM, a drift "
                     f"of {drift_rate:.3g} deg/s at rest), no end time within max_duration {max_duration} s was "
                     "found at which the loops reach the target" + (
                         "" if best is None else f" (closest: {math.degrees(best[0]):.3g} deg)"))


def _momentum_corrected(model, q0, target, J, search, cycles, moves, R_moves, limits, end, G0, sample_period):
    """The corrections of :func:`_momentum_plan` from the joints' rotation ``G0`` (loops, then moves), landed by
    :func:`_land_by_prediction` with a wait at ``q0``, then the loops and moves, until ``end``.  Each landing
    continues from the last one's loop."""
    last = [None, cycles]

    def land(G):
        loop, n, phi = search.land(rotation_vector(G @ R_moves.T), last[1], last[0])
        last[:] = loop, n
        return loop, n, phi

    def trajectory_of(loop):
        loop_time = _trajectory(q0, loop, moves, limits).duration
        return None if loop_time > end else _trajectory(q0, loop, moves, limits, wait=end - loop_time)
    return _land_by_prediction(model, J, target, G0, land, trajectory_of, sample_period)


def _land_by_prediction(model, J, target, G0, land, trajectory_of, sample_period):
    """The joints' rotation ``G = G0 exp(x)`` whose trajectory ends at ``target`` with the momentum ``J``:
    ``x`` solves ``log(R1(end)^T target) = 0`` by Broyden's method from the isotropic model's Jacobian ``-1``
    (its first step is the fixed point ``G <- G R1(end)^T target``), predicted on the plan's samples.
    ``land(G)`` gives ``(loop, cycles, phi)`` turning the base by ``G`` at zero momentum, ``trajectory_of(loop)``
    its timed trajectory (``None`` if the loops outgrow the time).  ``(error, (loop, cycles, phi,
    trajectory))`` of the best iterate, or ``None``."""
    x, B, previous, best = np.zeros(3), -np.eye(3), None, None
    for _ in range(MOMENTUM_ITERATIONS):
        loop, cycles, phi = land(G0 @ rotation_matrix(x))
        trajectory = trajectory_of(loop)
        if trajectory is None:
            break
        times = np.append(np.arange(0.0, trajectory.duration, sample_period), trajectory.duration)
        r = rotation_vector(attitudes_along(model, trajectory, times, J)[-1].T @ target)
        if best is None or np.linalg.norm(r) < best[0]:
            best = (np.linalg.norm(r), (loop, cycles, phi, trajectory))
        if np.linalg.norm(r) < MOMENTUM_TOLERANCE:
            break
        if previous is not None:
            dx, dr = x - previous[0], r - previous[1]
            B += np.outer(dr - B @ dx, dx) / (dx @ dx)
        previous = (x, r)
        x = x - np.linalg.solve(B, r)
    return best


def plan_remainder(model, plan, cycle, target, J=None, end=None, clearance=CLEARANCE, sample_period=SAMPLE_PERIOD):
    """The rest of ``plan`` from the start of its cycle ``cycle`` (``1 <= cycle < plan.cycles``), landed anew.

    A :class:`ReorientationPlan` that starts there (at the loop's base, moving at the plan's path speed then) and
    turns the base by ``target`` (3x3, in the base frame then) in the plan's remaining cycles (or one more, if a
    loop within the limits needs it), of a loop near its own with the same velocity at the base (Gauss-Newton from
    it, the steps keeping ``q'(0)``: the trajectory goes on without a step in velocity).  With the momentum ``J``
    (:func:`~.holonomy.momentum_at_rest`, in the base frame then) the attitude ``end`` s later (default: when
    ``plan`` ends, or when the remaining loops end if later) is the target: the loops, then rest at the loop's base
    until then (:func:`_land_by_prediction`; the plan's own wait came first, so loops needing more time end later).
    What an executor calls when its attitude estimate differs from the prediction (``planning/execution.py``).
    Raises :class:`InputError` if no such loop is found within the limits."""
    start = _clocks()
    if plan.loop is None or not 1 <= cycle < plan.cycles or len(plan.trajectory.pieces) > 2:
        raise InputError(f"a remainder starts at a cycle in [1, {plan.cycles}) of a plan of loops (no final move), "
                         f"got cycle {cycle}")
    target = checked_rotation("target", target)
    theta = rotation_vector(target)
    axis = theta / np.linalg.norm(theta) if np.linalg.norm(theta) > 0 else plan.axis
    family = _LoopFamily(model, plan.loop.q_base, plan.loop.joints, plan.loop.harmonics, plan.limits, axis,
                         _base_clearance(model, clearance))
    J = None if J is None or not np.any(J) else J
    end = None if J is None else plan.duration - plan.cycle_times[cycle] if end is None else float(end)
    for remaining in (plan.cycles - cycle, plan.cycles - cycle + 1):
        try:
            trajectory, loop, phi = _remainder(model, plan, cycle, target, J, end, family, remaining, sample_period)
            break
        except InputError as exc:
            reason = exc
    else:
        raise reason
    out = ReorientationPlan(model, trajectory, target, loop.with_coefficients(loop.coefficients, 1), remaining, phi,
                            plan.limits, J, sample_period, name="remainder")
    out.planning_time, out.planning_cpu_time = _elapsed(start)
    return out


def _remainder(model, plan, cycle, target, J, end, family, remaining, sample_period):
    """``(trajectory, loop, phi)`` of :func:`plan_remainder` in ``remaining`` cycles."""
    loop, limits = plan.loop, plan.limits
    current = [loop.coefficients]

    def land(G):
        phi = rotation_vector(G) / remaining
        c = family.landed(None, phi, current[0], keep_start_velocity=True)
        if c is None:
            raise InputError(f"no loop near the plan's turns the base by {math.degrees(np.linalg.norm(phi)):.4g} deg "
                             f"per cycle within the limits")
        current[0] = c
        return family.loop(c, remaining), remaining, phi

    def timed(loop_n):
        return TimedPath(loop_n, time_path(loop_n, limits.velocity, limits.acceleration, TIMING_INTERVALS * remaining,
                                           plan.cycle_speeds[cycle]))
    if J is None:
        loop_n, _, phi = land(target)
        return Trajectory([timed(loop_n)]), loop_n, phi
    drift = attitudes_along(model, Trajectory([Hold(loop.q_base, end)]), [0.0, end], J)[-1]

    def trajectory_of(loop_n):
        piece = timed(loop_n)
        return Trajectory([piece, Hold(loop.q_base, max(end - piece.duration, 0.0))])
    found = _land_by_prediction(model, J, target, drift.T @ target, land, trajectory_of, sample_period)
    if found is None or found[0] >= REMAINDER_TOLERANCE:
        raise InputError(f"{remaining} cycles cannot end at the target with the momentum"
                         + ("" if found is None else f" (closest: {math.degrees(found[0]):.3g} deg)"))
    loop_n, _, phi, trajectory = found[1]
    return trajectory, loop_n, phi
