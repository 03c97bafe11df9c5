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

:func:`naive_baseline` is the comparison: the best single circle of the CCF maps (Algorithm 1) in one
joint plane, repeated.
"""
import math
import time
from itertools import combinations
from typing import NamedTuple

import numpy as np
from scipy.interpolate import RegularGridInterpolator
from scipy.linalg import null_space
from scipy.optimize import minimize

from .. import validation as check
from ..analysis.locomotion import ccf_map
from ..conventions import quat_wxyz_to_matrix, xyzw_to_wxyz
from ..dynamics.centroidal import center_of_mass
from ..validation import InputError
from .clearance import BaseClearance
from .holonomy import (attitudes_along, loop_holonomy_gradient, momentum_at_rest, path_rotation,
                       right_jacobian_inverse, rotation_matrix, rotation_vector)
from .paths import FourierLoop, LinePath
from .timing import Hold, TimedPath, Trajectory, TrajectoryWindow, time_path

#: Joint position margin (rad) inside the limits, by default.
DEFAULT_MARGIN = 0.05
#: Without acceleration limits (URDFs have none), a joint reaches its speed limit from rest in this time
#: (s): 7.25 rad/s^2 on the Panda's joints 1-4, under Franka's published 7.5-20 rad/s^2.
ACCELERATION_TIME = 0.3
#: Fourier harmonics per joint of the loop.
HARMONICS = 3
#: Joints in the loop (the strongest for the axis by curvature, unless given).
LOOP_JOINTS = 4
#: RKMK4 steps per cycle: in the search (~1e-5 relative), and when landing (at first).
SEARCH_STEPS, LANDING_STEPS = 16, 64
#: SLSQP iterations: choosing among the first guesses (one harmonic), the search and the landing; and
#: the tolerance on the objective (relative).
SELECTION_ITERATIONS, SEARCH_ITERATIONS, SEARCH_TOLERANCE = 25, 100, 1e-6
#: Samples per cycle of the limit constraints, and the sharpness (1/rad, 1/(rad/rad)) of their soft minimum.
CONSTRAINT_SAMPLES, SHARPNESS = 128, 300.0
#: Largest rotation (rad) per cycle of the fastest loop: its rotation vector stays far from the logarithm's cut
#: at pi (a light base, as the LWR's, can turn by more than that in one large loop).
MAX_CYCLE_ROTATION = 2 * np.pi / 3
#: Samples per cycle at which a landed loop's positions are checked, and its clearance from the base.
CHECK_SAMPLES, CLEARANCE_SAMPLES = 4096, 512
#: Bisection steps shrinking a loop that touches the base.
SHRINK_BISECTIONS = 10
#: Distance (m) kept between the base's and the arm's collision geometries, by default; the samples per cycle
#: of its constraint (its evaluation dominates a search that needs it).
CLEARANCE, CLEARANCE_CONSTRAINT_SAMPLES = 0.02, 64
#: A loop grown beyond the fastest one (:meth:`_AxisLoops.land`): at most this many times its rotation per cycle,
#: at least this fraction of its rate.  Its clearance constraint is on the samples the check uses
#: (``CLEARANCE_SAMPLES``): a large loop sweeps the arm past the base between 64 samples (~2 cm closer than they
#: say on the orbital robot), and between 256 by enough to fail the check.
GROWTH, GROWN_RATE = 2.5, 0.8
#: Timing grid intervals per cycle.
TIMING_INTERVALS = 256
#: Rotation-vector tolerance (rad) of one cycle when landing, and of the integration's discretization (the
#: landing integration's steps double, up to MAX_LANDING_STEPS, until doubling changes less).
LANDING_TOLERANCE, DISCRETIZATION_TOLERANCE, MAX_LANDING_STEPS = 1e-11, 1e-9, 1024
#: Gauss-Newton iterations allowed when landing; from a given loop, the largest change of its rotation (relative)
#: landed at once (larger ones go through intermediate rotations).
LANDING_ITERATIONS, CONTINUATION = 12, 0.25
#: Refuse targets that need more cycles than this; the numbers of cycles a landing tries (from the fewest).
MAX_CYCLES, LANDING_ATTEMPTS = 400, 8
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
#: The baseline's CCF grid (points per joint) and the circles it checks on the exact eq. 9.
BASELINE_GRID, BASELINE_CANDIDATES = 15, 8
FRAMES = ("base", "world")


# -- targets ---------------------------------------------------------------------------------------

def rotation_from_axis_angle(axis, angle, frame="base", start_attitude=None):
    """The target rotation ``R = R1(0)^T R1(T)`` (base frame at the start) of turning by ``angle`` (rad)
    about ``axis``, given in the base frame at the start or in the world frame (then ``start_attitude``,
    the base's attitude ``R1(0)`` in the world, is needed)."""
    axis = check.vector("axis", axis, 3)
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        raise InputError("axis must be a non-zero vector")
    angle = float(check.vector("angle", [angle], 1)[0])
    return _in_base_frame(rotation_matrix(axis / norm * angle), frame, start_attitude)


def rotation_from_quaternion(quaternion, frame="base", start_attitude=None):
    """The target rotation of the unit quaternion ``(x, y, z, w)`` (ROS order), a rotation in the base frame
    at the start or in the world frame (see :func:`rotation_from_axis_angle`)."""
    q = check.vector("quaternion", quaternion, 4)
    norm = np.linalg.norm(q)
    if abs(norm - 1.0) > 1e-6:
        raise InputError(f"quaternion must have unit norm, got {norm:.6g}")
    return _in_base_frame(quat_wxyz_to_matrix(xyzw_to_wxyz(q)), frame, start_attitude)


def relative_rotation(target_attitude, start_attitude):
    """The target rotation ``R1(0)^T R1_target`` of an absolute attitude target (both in the world)."""
    return checked_rotation("start_attitude", start_attitude).T @ checked_rotation("target_attitude", target_attitude)


def _in_base_frame(R, frame, start_attitude):
    if frame not in FRAMES:
        raise InputError(f"frame must be one of {FRAMES}, got {frame!r}")
    if frame == "base":
        return R
    if start_attitude is None:
        raise InputError("a rotation in the world frame needs start_attitude (the base's attitude in the world)")
    R0 = checked_rotation("start_attitude", start_attitude)
    return R0.T @ R @ R0


def checked_rotation(name, R, tol=1e-6):
    """``R`` (3x3), or :class:`InputError` naming ``name`` if it is not a rotation matrix."""
    R = check.array(name, R, (3, 3))
    if np.abs(R.T @ R - np.eye(3)).max() > tol or np.linalg.det(R) < 0:
        raise InputError(f"{name} is not a rotation matrix (orthonormal, determinant +1; tolerance {tol})")
    return R


def rotation_angle(R):
    """The angle (rad) of a rotation matrix."""
    return float(np.linalg.norm(rotation_vector(R)))


# -- limits ------------------------------------------------------------------------------------------

class JointLimits(NamedTuple):
    """The limits a plan keeps: positions already narrowed by the margin."""

    lower: np.ndarray            #: (n,) lowest position allowed (limit + margin), rad
    upper: np.ndarray            #: (n,) highest position allowed (limit - margin), rad
    velocity: np.ndarray         #: (n,) speed limits, rad/s
    acceleration: np.ndarray     #: (n,) acceleration limits, rad/s^2
    margin: float                #: rad


def joint_limits(model, margin=DEFAULT_MARGIN, position_limits=None, velocity_limits=None,
                 acceleration_limits=None):
    """:class:`JointLimits` from the model's URDF limits, or the given ones (``(n, 2)`` positions; ``(n,)``
    or a scalar for speeds and accelerations).  Accelerations default to ``velocity / ACCELERATION_TIME``."""
    n = model.n
    margin = float(check.vector("margin", [margin], 1)[0])
    if margin < 0:
        raise InputError(f"margin must be >= 0, got {margin}")
    pos = model.position_limits if position_limits is None else np.asarray(position_limits, dtype=float)
    if pos.shape != (n, 2) or np.isnan(pos).any():
        raise InputError(f"position_limits must be ({n}, 2) without NaN, got shape {pos.shape}")
    vel = _per_joint(model, "velocity_limits", model.velocity_limits if velocity_limits is None
                     else velocity_limits)
    acc = _per_joint(model, "acceleration_limits", vel / ACCELERATION_TIME if acceleration_limits is None
                     else acceleration_limits)
    lower, upper = pos[:, 0] + margin, pos[:, 1] - margin
    narrow = np.flatnonzero(~(upper > lower))
    if narrow.size:
        j = narrow[0]
        raise InputError(f"the margin {margin} rad leaves no room to move {model.joint_names[j]} "
                         f"(limits {pos[j].tolist()})")
    return JointLimits(lower, upper, vel, acc, margin)


def _per_joint(model, name, value):
    v = np.broadcast_to(np.asarray(value, dtype=float), (model.n,)).copy()
    bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
    if bad.size:
        j = bad[0]
        raise InputError(f"{name}: {model.joint_names[j]} has {v[j]:g}; a plan needs a finite positive limit "
                         f"for every joint (pass {name} where the URDF gives none)")
    return v


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


def _base_clearance(model, clearance):
    """``(BaseClearance, clearance)``, or ``None`` if not asked for or the URDF has no collision geometry."""
    if clearance is None:
        return None
    clearance = float(check.vector("clearance", [clearance], 1)[0])
    base = BaseClearance(model)
    return (base, clearance) if base.available else None


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


class _LoopSearch:
    """The fastest loops for any axis (searched on demand, cached) and the loops landing on a rotation."""

    def __init__(self, model, q0, allowed, limits, harmonics, loop_joints, max_cycles, clearance):
        self.model, self.q0, self.allowed, self.limits = model, q0, allowed, limits
        self.harmonics, self.loop_joints, self.max_cycles = harmonics, loop_joints, max_cycles
        self.clearance = clearance          #: (BaseClearance, metres) or None
        self.ws = model.create_data()

    def for_axis(self, theta):
        return _AxisLoops(self, theta / np.linalg.norm(theta))

    def land(self, theta, cycles=None):
        """``(loop, cycles, phi)`` turning the base by ``exp(theta)`` at zero momentum (``(None, 0, 0)`` for
        no rotation)."""
        if np.linalg.norm(theta) < LANDING_TOLERANCE:
            return None, 0, np.zeros(3)
        return self.for_axis(theta).land(theta, cycles)


class _AxisLoops:
    """The fastest loop about ``axis`` (first guesses from curvature, then the search of the module doc)."""

    def __init__(self, loops, axis):
        self.loops, self.axis = loops, axis
        model, q0, limits = loops.model, loops.q0, loops.limits
        self.joints = _loop_joints(model, q0, axis, loops.allowed, limits, loops.loop_joints)
        self.family, self.best = self._search()
        if not self.family.clear(self.best.x[:-1]):
            self.family, self.best = self._clear_of_the_base()

    def _search(self):
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, 1, loops.limits, self.axis, loops.clearance)
        best = max((family.fastest(x0, iterations=SELECTION_ITERATIONS) for x0 in family.stokes_guesses()),
                   key=lambda r: r.rate)
        for harmonics in range(2, loops.harmonics + 1):       # one more harmonic at a time, never worse
            family = _LoopFamily(loops.model, loops.q0, self.joints, harmonics, loops.limits, self.axis,
                                 loops.clearance)
            start = best._replace(x=family.padded(best))
            best = max(family.fastest(start.x), start, key=lambda r: r.rate)
        return family, best

    def _clear_of_the_base(self):
        """The fastest loop touches the base: shrink it towards ``q0`` until it is clear (bisection), then
        search again from there with the clearance as a constraint."""
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, loops.harmonics, loops.limits, self.axis,
                             loops.clearance, avoid_base=True)
        lo, hi = 0.0, 1.0
        for _ in range(SHRINK_BISECTIONS):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if family.clear(mid * self.best.x[:-1]) else (lo, mid)
        start = family.evaluated(lo * self.best.x)
        found = family.fastest(start.x)
        return family, found if found.rate > start.rate and family.clear(found.x[:-1]) else start

    @property
    def per_cycle(self):
        return float(self.best.phi @ self.axis)

    def _grown(self, phi_target):
        """Coefficients of a cycle turning the base by exactly ``phi_target``, more than the fastest loop turns, or
        ``None``: the fastest loop grown until it turns that much about the axis (:meth:`_LoopFamily.grown`), the
        shortest such cycle from there (:meth:`_LoopFamily.fastest`), landed; kept if its rate at constant path speed
        is at least ``GROWN_RATE`` times the fastest's (fewer, larger cycles, not a much slower plan)."""
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, self.family.shape[0] // 2, loops.limits, self.axis,
                             loops.clearance, avoid_base=True, clearance_samples=CLEARANCE_SAMPLES)
        grown = family.grown(self.best.x, np.linalg.norm(phi_target))
        if grown is None:
            return None
        shortest = family.fastest(grown.x, phi_target)
        c = family.landed(self.best, phi_target, start=shortest.x[:-1])
        if c is None or family.evaluated(np.append(c, 1.0)).rate < GROWN_RATE * self.best.rate:
            return None
        return c

    def land(self, theta, cycles=None, start=None, grow=True):
        """``(loop, cycles, phi)``: ``cycles`` cycles of ``loop`` turn the base by ``exp(theta)``, ``phi =
        theta / cycles`` each (zero momentum); ``cycles`` is the number the fastest loop needs rounded down less
        one (a loop grown for it, :meth:`_grown`, if within ``GROWTH``), rounded down (a larger loop may do with
        one fewer: fewer, larger cycles are faster than more, smaller ones) or up, or at least the given number.
        ``start``: a loop of the family to land from (continuation); ``grow``: whether to try the grown loop (the
        momentum plan's screening of end times lands many targets: without)."""
        max_cycles = self.loops.max_cycles
        names = [self.loops.model.joint_names[j] for j in self.joints]
        needed = np.linalg.norm(theta) / max(self.per_cycle, 1e-300)
        if self.per_cycle <= 0 or needed > max_cycles:
            raise InputError(f"the joints {names} cannot turn the base about {np.round(self.axis, 4).tolist()} "
                             f"within the limits: the best loop turns {math.degrees(self.per_cycle):.3g} deg per "
                             f"cycle about it (and {math.degrees(self.best.off_axis):.3g} deg about other axes); "
                             f"{math.degrees(np.linalg.norm(theta)):.4g} deg would need {needed:.4g} cycles "
                             f"(max_cycles {max_cycles})")
        first = cycles or max(1, math.floor(needed))   # the needed number rounded down may land on a larger loop
        if grow and cycles is None and start is None and first > 1 and needed / (first - 1) <= GROWTH:
            c = self._grown(theta / (first - 1))      # one cycle fewer still, of a loop grown for it
            if c is not None:
                return self.family.loop(c, first - 1), first - 1, theta / (first - 1)
        last = min(first + LANDING_ATTEMPTS - 1, max_cycles)
        for n in range(first, last + 1):
            c = self.family.landed(self.best, theta / n, None if start is None or n != first else start.coefficients)
            if c is not None:
                return self.family.loop(c, n), n, theta / n
        raise InputError(f"no loop of the joints {names} lands on the target within the limits in {first} to "
                         f"{last} cycles")


def _check_within(model, name, q, limits):
    bad = np.flatnonzero((q < limits.lower) | (q > limits.upper))
    if bad.size:
        j = bad[0]
        raise InputError(f"{name}: {model.joint_names[j]} = {q[j]:.4g} rad is outside its limits minus the "
                         f"margin [{limits.lower[j]:.4g}, {limits.upper[j]:.4g}]")


def _joint_indices(model, joints):
    if joints is None:
        return np.arange(model.n)
    out = []
    for j in joints:
        if isinstance(j, str):
            if j not in model.joint_names:
                raise InputError(f"joints: unknown joint {j!r} (the model's: {list(model.joint_names)})")
            out.append(model.joint_names.index(j))
        elif isinstance(j, (int, np.integer)) and 0 <= j < model.n:
            out.append(int(j))
        else:
            raise InputError(f"joints: {j!r} is neither a joint name nor an index in [0, {model.n})")
    out = np.unique(out)
    if len(out) < 2:
        raise InputError(f"joints: a loop needs at least two joints, got {[model.joint_names[j] for j in out]}")
    return out


def _loop_joints(model, q0, axis, allowed, limits, count):
    """The ``count`` allowed joints with the largest weight in the best Stokes plane for ``axis`` (see
    :meth:`_LoopFamily.stokes_guesses`)."""
    if len(allowed) <= count:
        return allowed
    U, _, Vt = np.linalg.svd(_stokes_form(model, q0, axis, allowed, limits))
    weight = U[:, 0] ** 2 + Vt[0] ** 2
    return np.sort(allowed[np.argsort(weight)[::-1][:count]])


def _stokes_form(model, q0, axis, joints, limits):
    """``S = -D F_theta D``: the rotation about ``axis`` per unit area of a small loop (eq. 11, Theorem 2),
    as a bilinear form on joint offsets scaled by the speed limits ``D``: ``q = q0 + D (alpha (cos s - 1)
    + beta sin s)`` turns the base by ``pi alpha^T S beta`` to first order in the area."""
    F = np.einsum("a,aij->ij", axis, model.curvature_tensor(q0)[:3])[np.ix_(joints, joints)]
    D = limits.velocity[joints]
    return -(D[:, None] * F * D[None, :])


class _Lazy:
    """A value computed when called (SLSQP asks for gradients only at its iterates, not in line searches)."""

    def __init__(self, compute):
        self.compute = compute

    def __call__(self):
        return self.compute()


class _Fastest(NamedTuple):
    x: np.ndarray          #: [coefficients (raveled); tau], tau = seconds per radian of the loop parameter
    phi: np.ndarray        #: rotation vector of one cycle
    rate: float            #: rotation about the axis per second at constant path speed (rad/s)
    off_axis: float        #: rotation about the other axes per cycle (rad)


class _LoopFamily:
    """Fourier loops of ``harmonics`` harmonics in ``joints`` based at ``q0``: their holonomy about ``axis``
    with its gradient, and their limits as soft-minimum constraints over dense samples (with ``avoid_base``,
    the clearance from the base too; ``clearance``: ``(BaseClearance, metres)`` or ``None``)."""

    def __init__(self, model, q0, joints, harmonics, limits, axis, clearance=None, avoid_base=False,
                 clearance_samples=CLEARANCE_CONSTRAINT_SAMPLES):
        self.model, self.ws, self.axis, self.limits = model, model.create_data(), axis, limits
        self.clearance, self.avoid_base = clearance, avoid_base and clearance is not None
        self.template = FourierLoop(q0, joints, np.zeros((2 * harmonics, len(joints))))
        self.shape = self.template.coefficients.shape
        self.off_axes = np.linalg.svd(axis[None])[2][1:]
        self.B = self.template.basis(np.linspace(0, 2 * np.pi, CONSTRAINT_SAMPLES, endpoint=False))
        self.dense = self.template.basis(np.linspace(0, 2 * np.pi, CHECK_SAMPLES, endpoint=False))[0]
        self.sparse = self.template.basis(np.linspace(0, 2 * np.pi, CLEARANCE_SAMPLES, endpoint=False))[0]
        self.B_clear = self.template.basis(np.linspace(0, 2 * np.pi, clearance_samples, endpoint=False))[0]
        self.q0, self.lo, self.hi = q0[joints], limits.lower[joints], limits.upper[joints]
        self.v, self.a = limits.velocity[joints], limits.acceleration[joints]
        self._cache = {}

    def loop(self, c, cycles=1):
        return self.template.with_coefficients(np.reshape(c, self.shape), cycles)

    def rotation(self, c, steps=SEARCH_STEPS):
        """``phi``: the rotation vector of one cycle (one CRBA per integration node; cached)."""
        return self._cached(("phi", c.tobytes(), steps),
                            lambda: rotation_vector(path_rotation(self.model, self.ws, self.loop(c), steps)))

    def rotation_jacobian(self, c):
        """``dphi/dc`` (3, 2K x J) from the curvature along the loop (cached)."""
        def compute():
            H, G = loop_holonomy_gradient(self.model, self.ws, self.loop(c), SEARCH_STEPS)
            return right_jacobian_inverse(rotation_vector(H)) @ G
        return self._cached(("dphi", c.tobytes()), compute)

    def _cached(self, key, compute):
        if key not in self._cache:
            if len(self._cache) > 32:
                self._cache.clear()
            self._cache[key] = compute()
        return self._cache[key]

    # -- first guesses and the search --

    def stokes_guesses(self):
        """The best plane of :func:`_stokes_form` as a circle-like loop, centred on either side of ``q0``,
        scaled to 90 % of the room the position limits leave, at the constant path speed the limits allow."""
        U, _, Vt = np.linalg.svd(_stokes_form(self.model, self.template.q_base, self.axis,
                                              self.template.joints, self.limits))
        K = self.shape[0] // 2
        for sign in (1.0, -1.0):
            c = np.zeros(self.shape)
            c[0], c[K] = sign * self.v * U[:, 0], sign * self.v * Vt[0]
            c *= 0.9 * self._room(c)
            yield np.append(c.ravel(), self._path_speed_bound(c) * 1.001)

    def padded(self, found):
        """A :class:`_Fastest` of fewer harmonics as a start in this family."""
        K_old = (len(found.x) - 1) // (2 * self.shape[1])
        K = self.shape[0] // 2
        c_old = found.x[:-1].reshape(2 * K_old, -1)
        c = np.zeros(self.shape)
        c[:K_old], c[K:K + K_old] = c_old[:K_old], c_old[K_old:]
        return np.append(c.ravel(), found.x[-1])

    def _room(self, c, B=None):
        """Largest factor ``l`` with ``q0 + l B c`` within the position limits on the samples (of ``B``)."""
        dev = (self.B[0] if B is None else B) @ c
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(dev > 0, (self.hi - self.q0) / dev, np.where(dev < 0, (self.lo - self.q0) / dev, np.inf))
        return float(r.min())

    def _path_speed_bound(self, c):
        """Seconds per radian of the loop parameter at the limits (constant path speed)."""
        return max(float((np.abs(self.B[1] @ c) / self.v).max()), float(np.sqrt(np.abs(self.B[2] @ c) / self.a).max()))

    def fastest(self, x0, phi_target=None, iterations=SEARCH_ITERATIONS, keep_start_velocity=False):
        """SLSQP from ``x0``: the loop that turns the base most about the axis per second at constant path
        speed, with no rotation about the other axes; or, given ``phi_target``, the shortest cycle that
        turns it by ``phi_target`` (module doc), with ``keep_start_velocity`` the velocity at its base ``q'(0)``
        that of ``x0``."""
        if phi_target is None:
            if self._rate(x0)[0] > 0:
                x0 = self._reversed(x0)
            scale = 1.0 / max(abs(self._rate(x0)[0]), 1e-12)

            def objective(x):
                f, g = self._rate(x)
                return scale * f, _Lazy(lambda: scale * g())
            E, target = self.off_axes, np.zeros(2)
            extra = [{"type": "ineq", "fun": lambda x: MAX_CYCLE_ROTATION - self.axis @ self.rotation(x[:-1]),
                      "jac": lambda x: np.append(-(self.axis @ self.rotation_jacobian(x[:-1])), 0.0)}]
        else:
            def objective(x):
                return x[-1] / x0[-1], _Lazy(lambda: np.append(np.zeros(len(x) - 1), 1 / x0[-1]))
            E, target, extra = np.eye(3), phi_target, []
            if keep_start_velocity:
                C = np.hstack([self._start_velocity_map(), np.zeros((self.shape[1], 1))])
                extra = [{"type": "eq", "fun": lambda x: C @ (x - x0), "jac": lambda x: C}]
        res = minimize(lambda x: objective(x)[0], x0, jac=lambda x: objective(x)[1](), method="SLSQP",
                       options={"maxiter": iterations, "ftol": SEARCH_TOLERANCE},
                       constraints=[{"type": "eq", "fun": lambda x: E @ self.rotation(x[:-1]) - target,
                                     "jac": lambda x: np.hstack([E @ self.rotation_jacobian(x[:-1]),
                                                                 np.zeros((len(E), 1))])},
                                    {"type": "ineq", "fun": lambda x: self.limit_margins(x)[0],
                                     "jac": lambda x: self.limit_margins(x)[1]}] + extra)
        x = res.x
        if phi_target is None and self._rate(x)[0] > 0:
            x = self._reversed(x)
        return self.evaluated(x)

    def grown(self, x0, goal, iterations=SEARCH_ITERATIONS):
        """SLSQP from the loop ``x0``: a loop turning the base by ``goal`` (rad) about the axis per cycle, none about
        the others, within the limits (the path speed free): the rotation about the axis is maximized up to ``goal``
        (from a loop within the limits the iterates stay near them, where a landing from a scaled loop outside them
        may not come back).  Its :class:`_Fastest` record, or ``None`` if it falls short of ``goal``."""
        def about(x):
            return self.axis @ self.rotation(x[:-1])

        def d_about(x):
            return np.append(self.axis @ self.rotation_jacobian(x[:-1]), 0.0)
        x0 = np.append(x0[:-1], 10 * self._path_speed_bound(x0[:-1].reshape(self.shape)))
        res = minimize(lambda x: -about(x) / goal, x0, jac=lambda x: -d_about(x) / goal, method="SLSQP",
                       options={"maxiter": iterations, "ftol": SEARCH_TOLERANCE},
                       constraints=[{"type": "ineq", "fun": lambda x: goal - about(x), "jac": lambda x: -d_about(x)},
                                    {"type": "eq", "fun": lambda x: self.off_axes @ self.rotation(x[:-1]),
                                     "jac": lambda x: np.hstack([self.off_axes @ self.rotation_jacobian(x[:-1]),
                                                                 np.zeros((2, 1))])},
                                    {"type": "ineq", "fun": lambda x: self.limit_margins(x)[0],
                                     "jac": lambda x: self.limit_margins(x)[1]}])
        return self.evaluated(res.x) if about(res.x) > goal * (1 - 1e-3) else None

    def _reversed(self, x):
        """The loop traversed backwards, ``q(-s)``: its cycle turns the base by exactly the inverse rotation."""
        c = x[:-1].reshape(self.shape).copy()
        c[self.shape[0] // 2:] *= -1
        return np.append(c.ravel(), x[-1])

    def evaluated(self, x):
        """The :class:`_Fastest` record of the loop ``x`` at its constant path speed."""
        x = np.append(x[:-1], self._path_speed_bound(x[:-1].reshape(self.shape)))
        phi = self.rotation(x[:-1])
        return _Fastest(x, phi, float(phi @ self.axis / (2 * np.pi * x[-1])),
                        float(np.linalg.norm(self.off_axes @ phi)))

    def _rate(self, x):
        """``(-rate, its gradient)``; the gradient is computed (the curvature) only when asked for."""
        phi, tau = self.rotation(x[:-1]), x[-1]
        return -(self.axis @ phi) / tau, _Lazy(lambda: np.append(
            -(self.axis @ self.rotation_jacobian(x[:-1])) / tau, (self.axis @ phi) / tau**2))

    def limit_margins(self, x):
        return self._cached(("limits", x.tobytes()), lambda: self._limit_margins(x))

    def _limit_margins(self, x):
        """Soft minima over the samples (>= 0 when the limits hold; each at most its true minimum) of the
        position room and of ``tau - |q'| / v`` and ``tau^2 - |q''| / a`` per joint, with their Jacobian."""
        c, tau = x[:-1].reshape(self.shape), x[-1]
        B0, B1, B2 = self.B
        Q, D1, D2 = self.q0 + B0 @ c, B1 @ c, B2 @ c
        one = np.ones_like(self.v)
        blocks = ((self.hi - Q, -one, B0, 0.0), (Q - self.lo, one, B0, 0.0),
                  (tau - D1 / self.v, -1 / self.v, B1, 1.0), (tau + D1 / self.v, 1 / self.v, B1, 1.0),
                  (tau**2 - D2 / self.a, -1 / self.a, B2, 2 * tau), (tau**2 + D2 / self.a, 1 / self.a, B2, 2 * tau))
        J = self.shape[1]
        values, rows = [], []
        for g, beta, B, dtau in blocks:
            low = g.min(axis=0)
            e = np.exp(-SHARPNESS * (g - low))
            total = e.sum(axis=0)
            values.append(low - np.log(total) / SHARPNESS)
            dC = (B.T @ (e / total)) * beta                     # (2K, J): constraint j depends on column j
            jac = np.zeros((J, self.shape[0], J))
            jac[np.arange(J), :, np.arange(J)] = dC.T
            rows.append(np.hstack([jac.reshape(J, -1), np.full((J, 1), dtau)]))
        if self.avoid_base:
            value, row = self._clearance_margin(self.q0 + self.B_clear @ c, self.B_clear)
            values.append([value])
            rows.append(row)
        return np.concatenate(values), np.vstack(rows)

    def _full_shapes(self, Q):
        q = np.tile(self.template.q_base, (len(Q), 1))
        q[:, self.template.joints] = Q
        return q

    def _clearance_margin(self, Q, B0):
        """Soft minimum over the samples of the base-arm distance minus the clearance, and its gradient (the
        distance's gradient only where the soft minimum's weight is not negligible)."""
        clearance, required = self.clearance
        q = self._full_shapes(Q)
        g = clearance.distances(q) - required
        low = g.min()
        e = np.exp(-SHARPNESS * (g - low))
        w = e / e.sum()
        used = w > 1e-6 * w.max()
        dq = clearance.gradients(q[used])[:, self.template.joints]              # (m, J)
        dC = np.einsum("m,mk,mj->kj", w[used], B0[used], dq)
        return low - np.log(e.sum()) / SHARPNESS, np.append(dC.ravel(), 0.0)[None]

    def clear(self, c):
        """Whether the loop keeps the clearance from the base on ``CLEARANCE_SAMPLES`` samples (or nothing is
        required)."""
        if self.clearance is None:
            return True
        clearance, required = self.clearance
        q = self._full_shapes(self.q0 + self.sparse @ np.reshape(c, self.shape))
        return bool(clearance.distances(q).min() >= required)

    # -- landing --

    def landed(self, best, phi_target, start=None, keep_start_velocity=False):
        """Coefficients of a cycle that turns the base by exactly ``phi_target``, or ``None`` if none is found
        within the position limits: from ``start`` (coefficients), or the fastest loop ``best`` scaled to the
        target (or, if the scaled loop leaves the limits, :meth:`fastest` with the target from it), then
        Gauss-Newton (minimum-norm steps) to round-off on the finer integration.  ``keep_start_velocity``: the
        steps keep ``q'(0)``, the loop's velocity at its base, that of ``start`` (a plan replacing another
        mid-motion continues its velocity)."""
        if start is None:
            scale = math.sqrt(np.linalg.norm(phi_target) / (best.phi @ self.axis))
            c = best.x[:-1] * scale
            if self._room(c.reshape(self.shape)) < 1.0:
                c = self.fastest(np.append(c, best.x[-1] * scale), phi_target).x[:-1]
        else:
            c = np.ravel(start)
        free = self._start_velocity_kept() if keep_start_velocity else None
        if start is not None:        # from afar Gauss-Newton may not converge: through intermediate rotations
            phi0 = self.rotation(c, LANDING_STEPS)
            stages = math.ceil(np.linalg.norm(phi_target - phi0) / (CONTINUATION * max(np.linalg.norm(phi0), 1e-3)))
            for k in range(1, stages):
                c = self._gauss_newton(c, phi0 + k / stages * (phi_target - phi0), LANDING_STEPS, free)
                if c is None:
                    return None
            if self._room(c.reshape(self.shape)) < 1.0:       # the minimum-norm steps left the limits
                c = self.fastest(np.append(c, self._path_speed_bound(c.reshape(self.shape))), phi_target,
                                 keep_start_velocity=keep_start_velocity).x[:-1]
        steps = LANDING_STEPS
        while c is not None:
            c = self._gauss_newton(c, phi_target, steps, free)
            if c is None or steps >= MAX_LANDING_STEPS or np.linalg.norm(
                    self.rotation(c, 2 * steps) - self.rotation(c, steps)) <= DISCRETIZATION_TOLERANCE:
                break
            steps *= 2                          # the integration is not converged: land on a finer one
        return c if c is not None and self._room(c.reshape(self.shape), self.dense) >= 1.0 and self.clear(c) else None

    def _start_velocity_map(self):
        """``C`` with ``q'(0) = C c``: the loop's velocity at its base from its coefficients (raveled)."""
        dB0 = self.template.basis(np.zeros(1))[1][0]
        J = self.shape[1]
        C = np.zeros((J, self.shape[0], J))
        C[np.arange(J), :, np.arange(J)] = dB0
        return C.reshape(J, -1)

    def _start_velocity_kept(self):
        """A basis (columns) of the coefficient changes that keep ``q'(0)``."""
        return null_space(self._start_velocity_map())

    def _gauss_newton(self, c, phi_target, steps, free=None):
        """Coefficients near ``c`` whose cycle (integrated in ``steps`` steps) turns the base by ``phi_target``
        to ``LANDING_TOLERANCE`` (minimum-norm steps, within the columns of ``free`` if given; the curvature
        Jacobian of the search), or ``None``."""
        for _ in range(LANDING_ITERATIONS):
            r = phi_target - self.rotation(c, steps)
            if np.linalg.norm(r) < LANDING_TOLERANCE:
                return c
            G = self.rotation_jacobian(c)
            c = c + (np.linalg.lstsq(G, r, rcond=None)[0] if free is None
                     else free @ np.linalg.lstsq(G @ free, r, rcond=None)[0])
        return None


# -- the naive baseline ------------------------------------------------------------------------------

class BaselineCircle(NamedTuple):
    """The best single circle of the CCF maps for an axis (see :func:`naive_baseline`)."""

    joints: tuple            #: the plane's two joints (indices)
    center: np.ndarray       #: (2,) centre in the plane's coordinates (offsets from q0, rad)
    radius: float            #: rad
    clockwise: bool
    estimate: float          #: rotation about the axis per cycle from the CCF map (eq. 11), rad
    loop: FourierLoop        #: the circle as a loop based at its start point
    phi: np.ndarray          #: exact rotation vector per cycle (eq. 9), rad


def naive_baseline(model, q0, axis, joints=None, margin=DEFAULT_MARGIN, position_limits=None,
                   velocity_limits=None, clearance=CLEARANCE, grid=BASELINE_GRID, candidates=BASELINE_CANDIDATES):
    """The naive loop: the single circle in one joint plane through ``q0`` that the CCF maps
    ([Mishra2023] Algorithm 1, in the base frame) say turns the base most about ``axis`` per cycle.

    For every pair of allowed joints, the CCF map over the plane's position limits (minus the margin,
    ``grid`` x ``grid`` points); every grid point is a centre, with the largest circle the limits allow
    and half and three quarters of it; eq. 11 (the map's volume under the circle) ranks them, and the exact
    eq. 9 decides among the best ``candidates`` whose circle and moves from and to ``q0`` keep the
    clearance from the base (as :func:`plan_reorientation`'s).
    """
    q0 = check.vector("q0", q0, model.n)
    axis = check.vector("axis", axis, 3)
    axis = axis / np.linalg.norm(axis)
    limits = joint_limits(model, margin, position_limits, velocity_limits)
    allowed = _joint_indices(model, joints)
    base = _base_clearance(model, clearance)
    ranked = sorted((c for i, j in combinations(allowed, 2)
                     for c in _plane_circles(model, q0, axis, (i, j), limits, grid)),
                    key=lambda c: -abs(c[-1]))
    ws = model.create_data()
    best, tried = None, 0
    for (i, j), center, radius, estimate in ranked:
        loop = _circle_loop(model, q0, (i, j), center, radius, clockwise=estimate < 0)
        if base is not None and not _clear_path(base, [LinePath(q0, loop.q_base), loop]):
            continue
        tried += 1
        if tried > candidates:
            break
        phi = rotation_vector(path_rotation(model, ws, loop, LANDING_STEPS))
        if best is None or phi @ axis > best.phi @ axis:
            best = BaselineCircle((i, j), center, radius, estimate < 0, abs(estimate), loop, phi)
    return best


def _clear_path(base, paths):
    """Whether the paths keep the clearance from the base (``CLEARANCE_SAMPLES`` samples each)."""
    clearance, required = base
    return all(clearance.distances(p.derivatives(np.linspace(0.0, p.length, CLEARANCE_SAMPLES))[0]).min()
               >= required for p in paths)


def _plane_circles(model, q0, axis, pair, limits, grid):
    """``(pair, centre, radius, estimated rotation about axis for a counter-clockwise cycle)`` of the
    candidate circles in the plane of ``pair`` (eq. 11 on the CCF map, polar quadrature)."""
    i, j = pair
    lo, hi = limits.lower[[i, j]] - q0[[i, j]], limits.upper[[i, j]] - q0[[i, j]]
    r1, r2 = np.linspace(lo[0], hi[0], grid), np.linspace(lo[1], hi[1], grid)
    Psi = np.zeros((model.n, 2))
    Psi[i, 0] = Psi[j, 1] = 1.0
    ccf = np.einsum("a,ayx->yx", axis, ccf_map(model, Psi, r1, r2, q_c=q0, frame="base")[:3])
    interp = RegularGridInterpolator((r2, r1), ccf)
    centers = np.stack(np.meshgrid(r1, r2), axis=-1).reshape(-1, 2)
    room = np.minimum(centers - lo, hi - centers).min(axis=1)
    u, wu = np.polynomial.legendre.leggauss(8)
    rho, w_rho = (u + 1) / 2, wu / 2                     # radial fraction on [0, 1]
    ang = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    offsets = rho[:, None, None] * np.stack([np.cos(ang), np.sin(ang)], -1)[None]     # (8, 32, 2)
    weights = (w_rho * rho)[:, None] * (2 * np.pi / len(ang))                          # r dr dtheta
    out = []
    for fraction in (0.5, 0.75, 1.0):
        radius = fraction * room
        ok = radius > 1e-3
        points = centers[ok, None, None] + radius[ok, None, None, None] * offsets
        values = interp(np.clip(points, [lo[0], lo[1]], [hi[0], hi[1]])[..., ::-1])
        volume = (values * weights).sum(axis=(1, 2)) * radius[ok] ** 2
        out += [(pair, c, r, -v) for c, r, v in zip(centers[ok], radius[ok], volume)]
    return out


def _circle_loop(model, q0, pair, center, radius, clockwise):
    """The circle as a :class:`FourierLoop` based at its point of angle pi (as ``PlanarGait.circle``)."""
    i, j = pair
    q_start = q0.copy()
    q_start[i] += center[0] - radius
    q_start[j] += center[1]
    return FourierLoop(q_start, [i, j], [[-radius, 0.0], [0.0, radius if clockwise else -radius]])


def baseline_plan(model, q0, target, circle=None, margin=DEFAULT_MARGIN, position_limits=None,
                  velocity_limits=None, acceleration_limits=None, joints=None, clearance=CLEARANCE,
                  sample_period=SAMPLE_PERIOD):
    """The naive plan: move to the start of the :func:`naive_baseline` circle for the target's axis, repeat it
    until the rotation about the axis is reached (rounded up to whole cycles), move back; nothing corrects
    the rotation about the other axes."""
    start = _clocks()
    target = checked_rotation("target", target)
    theta = rotation_vector(target)
    axis = theta / np.linalg.norm(theta)
    limits = joint_limits(model, margin, position_limits, velocity_limits, acceleration_limits)
    if circle is None:
        circle = naive_baseline(model, q0, axis, joints, margin, position_limits, velocity_limits, clearance)
    cycles = math.ceil(np.linalg.norm(theta) / (circle.phi @ axis) - 1e-9)
    loop = circle.loop.with_coefficients(circle.loop.coefficients, cycles)
    paths = [LinePath(q0, loop.q_base), loop, LinePath(loop.q_base, q0)]
    pieces = [TimedPath(p, time_path(p, limits.velocity, limits.acceleration,
                                     TIMING_INTERVALS * (cycles if p is loop else 1))) for p in paths]
    plan = ReorientationPlan(model, Trajectory(pieces), target, circle.loop, cycles, circle.phi, limits,
                             sample_period=sample_period, name="baseline")
    plan.planning_time, plan.planning_cpu_time = _elapsed(start)
    return plan
