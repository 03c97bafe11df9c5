"""Executing a reorientation with feedback: the plan tracked with momentum compensation, corrected every cycle.

:class:`ReorientTask` is a motion task of :class:`~floating_base_control.robots.orbital.controller.
OrbitalController` (as :class:`~floating_base_control.control.tracking.JointTask`, which it uses to track the
plan's joint trajectory with the compensation of [Mishra2023] eq. 45).  Given a target attitude of the base
(world frame) it asks a planner for a plan from the observer's attitude estimate, tracks it, and re-plans:

* **Every cycle.**  The loop's cycle is the unit whose net rotation the plan predicts: the shape is back at
  the loop's base.  ``lead_s`` before each cycle boundary but the last, the task sends the planner the
  observer's estimate ``R_hat`` (never the simulator's truth) and its locked velocity; the planner predicts the
  attitude at the boundary from there along the running plan (eq. 9) and lands the remaining cycles on the
  target anew (:func:`~.reorientation.plan_remainder`: same velocity at the boundary, so the trajectory goes on
  without a step).  The new plan replaces the running one at the boundary, so model and tracking errors do not
  accumulate over the cycles; a result that comes after its boundary is dropped (the running plan goes on).
* **At rest** (before a plan and at the end) the task waits ``settle_s``, averaging the estimate's error to the
  target over the second half (the estimate's noise, ~0.03 deg with the ideal scenario's pose sensor, averages
  down); at the end, above ``tolerance``, it plans a correction from rest (at most ``max_corrections``).  With
  momentum the target is an attitude at an instant, the plan's end (the base drifts on afterwards): the
  corrections are the cycles'.
* **Off the tick.**  Planning never runs in :meth:`ReorientTask.torque`: requests go to a planner object with
  ``submit(request)`` and ``poll(t)`` (results ready by ``t``), which a node runs in a worker process
  (``planning/worker.py``) and the ROS-free scenario in the caller's thread between ticks (:class:`SynchronousPlanner`,
  optionally delaying results by a fixed latency, as a worker would deliver them).  The tick keeps tracking the
  running plan meanwhile; a plan from rest with momentum starts at a set time (``start_delay_s`` after the
  request), without momentum as soon as it is ready (the base is still meanwhile).
* **A new target** while a plan runs: at the next cycle boundary the running loop's next cycle brings the arm
  to rest (no new loop), then a plan for the new target starts from rest.  A target the planner refuses (out of
  reach within the limits) is reported with the planner's reason (:attr:`ReorientTask.refusals`), the arm held.

One coherent module: the executor's protocol with its planner (requests, results, the in-process planner)
and the motion task that drives it, one state machine over the plan's cycles.
"""
import itertools
import math
from typing import NamedTuple, Optional

import numpy as np

from ..control.shape import ShapeGains
from ..control.stability import shape_joint_gains
from ..control.trajectory import ReferenceSample
from ..control.tracking import JointTask
from ..dynamics.centroidal import center_of_mass, com_from_locked_inertia
from ..validation import FloatingBaseError, InputError
from . import reorientation as ro
from .holonomy import attitudes_along, momentum_at_rest, rotation_matrix, rotation_vector
from .rotations import checked_rotation, rotation_angle
from .timing import Hold, TimedPath, Trajectory, time_path

#: Seconds before a cycle boundary at which the estimate is taken for the remainder's plan (the planner's time).
LEAD_S = 1.0
#: Seconds at rest before the end's comparison (the estimate settles after the motion).
SETTLE_S = 2.0
#: Attitude error (rad) at rest below which no correction is planned.
TOLERANCE = math.radians(0.05)
#: Corrections from rest at most.
MAX_CORRECTIONS = 2
#: Locked angular speed (rad/s) of the estimate below which the momentum is taken as zero.
MOMENTUM_THRESHOLD = math.radians(0.05)
#: Change of the momentum's estimate over a settling window, as a drift rate (rad/s), below which the observer is
#: taken to have converged; the longest settling (s) waiting for it.
MOMENTUM_STEADY, MAX_SETTLE_S = math.radians(0.01), 30.0
#: The plan's samples (every ``SAMPLE_PERIOD``) whose shapes the tracking gains are made stable at: every 5th.
GAIN_SAMPLES = 5
#: Options of :func:`~.reorientation.plan_reorientation` the executor passes on (the rest are its defaults).
PLAN_OPTIONS = ("joints", "margin", "velocity_limits", "acceleration_limits", "harmonics", "loop_joints",
                "max_cycles", "clearance", "max_duration")


class PlanRequest(NamedTuple):
    """What the planner needs, observed at ``time`` (all in the world frame unless said)."""

    id: int
    kind: str                      #: "plan" (from rest at ``q``), "remainder" or "stop" (of plan ``plan_id``)
    time: float                    #: when ``attitude`` and ``mu`` were estimated
    q: np.ndarray                  #: the shape then (a plan from rest starts there)
    attitude: np.ndarray           #: the observer's base attitude then (3x3)
    mu: Optional[np.ndarray]       #: the observer's locked velocity then (base frame, [omega; v]); None: no momentum
    target: np.ndarray             #: the target attitude (3x3)
    start_time: float = 0.0        #: "plan": when it starts (with momentum; without, when ready)
    plan_id: int = -1              #: "remainder", "stop": the running plan
    plan_start: float = math.nan   #: "remainder", "stop": when the running plan started (the executor's clock)
    cycle: int = 0                 #: "remainder", "stop": the cycle the new plan starts at
    end_time: float = math.nan     #: with momentum: when the attitude must be the target


class PlanResult(NamedTuple):
    """A plan for the executor (what a worker sends back: the trajectory, not the plan's dense samples)."""

    request: PlanRequest
    plan_id: int                   #: the planner's id of the plan (-1: refused)
    start_time: float              #: when it starts (absolute)
    trajectory: Optional[Trajectory]
    cycle_times: np.ndarray        #: from ``start_time``
    summary: dict                  #: ``ReorientationPlan.summary()`` (or the refusal's ``reason``)
    gains: Optional[tuple] = None  #: ``(K, D)`` stable with the loop's delay on the plan's shapes


def refusal(request, reason):
    """The :class:`PlanResult` refusing ``request`` for ``reason``."""
    return PlanResult(request, -1, math.nan, None, np.zeros(0), {"reason": reason})


class Planner:
    """Answers :class:`PlanRequest` s: plans and re-plans for one model, keeping the plans it made (by id), with
    the tracking gains of each (``control/stability.py``'s delay-robust gains on the plan's shapes for
    ``control_period``)."""

    def __init__(self, model, options=None, control_period=1e-3):
        self.model, self.options, self.control_period = model, dict(options or {}), control_period
        unknown = set(self.options) - set(PLAN_OPTIONS)
        if unknown:
            raise InputError(f"planner options {sorted(unknown)} unknown (known: {list(PLAN_OPTIONS)})")
        self.plans, self._ids = {}, itertools.count()

    def solve(self, request):
        """The :class:`PlanResult` of ``request``; a refusal (the planner's :class:`InputError`) is a result with
        ``plan_id = -1`` and ``summary = {"reason": ...}``."""
        try:
            plan, start = {"plan": self._plan, "remainder": self._remainder, "stop": self._stop}[request.kind](request)
        except FloatingBaseError as exc:
            return refusal(request, str(exc))
        plan_id = next(self._ids)
        self.plans = {k: v for k, v in self.plans.items() if k >= plan_id - 3}     # the running ones
        self.plans[plan_id] = plan
        gains = shape_joint_gains(self.model, plan.positions[::GAIN_SAMPLES], self.control_period)
        return PlanResult(request, plan_id, start, plan.trajectory, plan.cycle_times, plan.summary(), gains)

    def _momentum(self, request, attitude):
        """``J`` of the estimate in the base frame of ``attitude``: the angular momentum about the CoM (its world
        value from ``request``'s estimate, conserved), no linear momentum (it does not turn the base)."""
        if request.mu is None:
            return None
        J = momentum_at_rest(self.model, request.q, request.mu)
        k = request.attitude @ (J[:3] - np.cross(center_of_mass(self.model.kinematics(request.q)), J[3:]))
        return np.r_[attitude.T @ k, np.zeros(3)]

    def _plan(self, request):
        attitude = request.attitude
        J = self._momentum(request, attitude)
        if J is not None and request.start_time > request.time:       # the drift until the plan starts
            wait = Hold(request.q, request.start_time - request.time)
            attitude = attitude @ attitudes_along(self.model, Trajectory([wait]), [0.0, wait.duration], J)[-1]
            J = self._momentum(request, attitude)
        mu = None if J is None else np.linalg.solve(self.model.kinematics(request.q).M_b, J)
        plan = ro.plan_reorientation(self.model, request.q, attitude.T @ request.target, mu=mu, **self.options)
        return plan, request.start_time

    def _running(self, request):
        if request.plan_id not in self.plans:
            raise InputError(f"plan {request.plan_id} is not the planner's (any more)")
        plan, start = self.plans[request.plan_id], request.plan_start
        if not 1 <= request.cycle < plan.cycles:
            raise InputError(f"cycle {request.cycle} is not a boundary inside plan {request.plan_id}")
        return plan, start, start + plan.cycle_times[request.cycle]

    def _remainder(self, request):
        """The remaining cycles from the boundary, landed on the target from the attitude predicted there: the
        estimate moved along the running plan (eq. 9, with the estimate's momentum)."""
        plan, start, boundary = self._running(request)
        J = self._momentum(request, request.attitude)
        attitude = request.attitude @ ro.attitude_change(self.model, plan, request.time - start, boundary - start, J)
        end = None if J is None else request.end_time - boundary
        remainder = ro.plan_remainder(self.model, plan, request.cycle, attitude.T @ request.target,
                                      self._momentum(request, attitude), end,
                                      self.options.get("clearance", ro.CLEARANCE))
        return remainder, boundary

    def _stop(self, request):
        """One more cycle of the running loop from the boundary, to rest."""
        plan, start, boundary = self._running(request)
        loop, limits = plan.loop, plan.limits
        piece = TimedPath(loop, time_path(loop, limits.velocity, limits.acceleration, ro.TIMING_INTERVALS,
                                          plan.cycle_speeds[request.cycle]))
        stop = ro.ReorientationPlan(self.model, Trajectory([piece]), plan.target, loop, 1, plan.loop_rotation,
                                    limits, name="stop")
        return stop, boundary


def _waits(trajectory, duration):
    """Whether ``trajectory`` starts with a wait at rest of at least ``duration`` (a plan with momentum waits first:
    starting it that much late, from its own start time, changes nothing)."""
    first = trajectory.pieces[0]
    return isinstance(first, Hold) and first.duration >= duration


class SynchronousPlanner:
    """A :class:`Planner` run in the caller's thread at :meth:`submit`; a result is ready ``latency_s`` after its
    request's time (the caller's clock), as a worker taking that long would deliver it."""

    def __init__(self, model, options=None, latency_s=0.0, control_period=1e-3):
        self.planner, self.latency_s, self._done = Planner(model, options, control_period), latency_s, []

    def submit(self, request):
        self._done.append(self.planner.solve(request))

    def poll(self, t):
        """The results ready at ``t``."""
        ready = [r for r in self._done if r.request.time + self.latency_s <= t]
        self._done = [r for r in self._done if r.request.time + self.latency_s > t]
        return ready


class PlanReference:
    """The joint reference of the task: ``q_hold`` at rest, then each trajectory from its start time on (the
    latest started one; after its end, its last shape at rest)."""

    def __init__(self, q_hold):
        self.q_hold = np.array(q_hold, dtype=float)
        self.pieces = []                      # (start time, trajectory), by start time

    def play(self, start, trajectory):
        """``trajectory`` from ``start`` on (replacing what would have played from then)."""
        self.pieces = [p for p in self.pieces if p[0] < start][-1:] + [(start, trajectory)]

    def sample(self, t):
        while len(self.pieces) > 1 and self.pieces[1][0] <= t:
            self.pieces.pop(0)
        if not self.pieces or t < self.pieces[0][0]:
            return ReferenceSample(self.q_hold, np.zeros_like(self.q_hold), np.zeros_like(self.q_hold))
        start, trajectory = self.pieces[0]
        return ReferenceSample(*trajectory.evaluate(t - start))


class ReorientTask:
    """Turn the base to a target attitude with joint loops (module doc); a motion task of ``OrbitalController``.

    ``planner``: an object with ``submit`` and ``poll`` (:class:`SynchronousPlanner`, ``planning/worker.py``'s
    ``BackgroundPlanner``); ``q0``: the shape held until the first plan.  ``gains``: the tracking gains
    (:class:`~..control.shape.ShapeGains`); default: each plan's (:class:`PlanResult`, from its start), ``q0``'s
    until then, for ``control_period``.  :meth:`command` sets a target; :attr:`status`, :meth:`progress` and
    :attr:`log` say how it goes.
    """

    name = "reorient"

    def __init__(self, model, planner, q0, gains=None, control_period=1e-3, lead_s=LEAD_S, settle_s=SETTLE_S,
                 tolerance=TOLERANCE, max_corrections=MAX_CORRECTIONS, start_delay_s=0.0,
                 momentum_threshold=MOMENTUM_THRESHOLD):
        self.model, self.planner, self.fixed_gains = model, planner, gains is not None
        self.reference = PlanReference(q0)
        self.tracker = JointTask(model, self.reference, gains or ShapeGains(*shape_joint_gains(model, [q0],
                                                                                                control_period)))
        self._gains_from = []     # (start time, ShapeGains) of the plans to come
        self.lead_s, self.settle_s, self.tolerance, self.max_corrections = lead_s, settle_s, tolerance, max_corrections
        self.start_delay_s, self.momentum_threshold = start_delay_s, momentum_threshold
        self._ids = itertools.count()
        self.target = self.pending_target = None
        self.status = "idle"      #: idle, settling, planning, executing, done, refused
        self.refusals = []        #: reasons, in order
        self.log = []             #: (time, event, details) of every plan, swap, correction and refusal
        self.first_plan = None    #: the first plan's summary (planning time, cycles, ...)
        self.running = None       #: the running plan: (PlanResult, next boundary index to observe)
        self.outstanding = None   #: the id of the request awaited
        self.corrections = self.cycles = 0
        self.end_time = self.at_rest_since = None
        self.motion_end = None    #: when the last plan ended
        self._error_sum, self._error_count = np.zeros(3), 0
        self.momentum = False
        self._g_hat, self._mu, self._q = None, None, np.array(q0, dtype=float)

    @property
    def gains(self):
        return self.tracker.gains

    @gains.setter
    def gains(self, gains):
        self.tracker.gains = gains

    @property
    def error(self):
        """``q - q_r`` at the last tick."""
        return self.tracker.error

    def command(self, target):
        """Turn the base to the attitude ``target`` (3x3, world frame): planned from rest after ``settle_s``, or,
        while a plan runs, once its next cycle has brought the arm to rest."""
        self.pending_target = checked_rotation("target", target)
        if self.status != "executing":
            self._settle()

    def torque(self, t, q, qdot, terms, mu, compensation, g_hat=None):
        self._g_hat, self._mu, self._q, self._M_b = g_hat, mu, q, terms.M_b
        self._update(t)
        while self._gains_from and self._gains_from[0][0] <= t:
            self.tracker.gains = self._gains_from.pop(0)[1]
        return self.tracker.torque(t, q, qdot, terms, mu, compensation, g_hat)

    # -- the state machine (no planning here: requests and results only) --

    def _update(self, t):
        for result in self.planner.poll(t):
            if result.request.id == self.outstanding:
                self.outstanding = None
                self._take(t, result)
        if self.status == "executing":
            self._follow(t)
        elif self.status == "settling" and self._g_hat is not None:
            self._settling(t)

    def _settle(self):
        """At rest: wait ``settle_s``, averaging the estimate's error over its second half (module doc)."""
        self.status, self.outstanding, self.at_rest_since = "settling", None, None
        self._settling_since = None
        self._window()

    def _window(self):
        self._error_sum, self._error_count, self._k_window = np.zeros(3), 0, None

    def _settling(self, t):
        """The window's averages; at its end, a plan or the verdict, unless the momentum's estimate still changes
        (:meth:`_steady`), which restarts the window."""
        if self.at_rest_since is None:
            self.at_rest_since = self._settling_since = t
        target = self.pending_target if self.pending_target is not None else self.target
        if t >= self.at_rest_since + 0.5 * self.settle_s:
            self._error_sum += rotation_vector(target.T @ self._g_hat[:3, :3])
            self._error_count += 1
            if self._k_window is None:
                self._k_window = self._angular_momentum()
        if t < self.at_rest_since + self.settle_s:
            return
        if not self._steady() and t < self._settling_since + MAX_SETTLE_S:
            self.at_rest_since = t - 0.5 * self.settle_s
            self._window()
            return
        averaged = target @ rotation_matrix(self._error_sum / self._error_count)
        if self.pending_target is not None:              # a new target: its own plans, cycles and end
            self.target, self.pending_target = self.pending_target, None
            self.momentum = bool(np.linalg.norm(np.asarray(self._mu)[:3]) > self.momentum_threshold)
            self.end_time = self.first_plan = self.motion_end = None
            self.cycles = self.corrections = 0
            self._plan_from_rest(t, None if self.momentum else averaged)
            return
        error = rotation_angle(self.target.T @ averaged)
        if error <= self.tolerance or self.corrections >= self.max_corrections:
            self.status = "done"
            self.log.append((t, "done", f"estimated error {math.degrees(error):.4f} deg"))
            return
        self.corrections += 1
        self.log.append((t, "correction", f"estimated error {math.degrees(error):.4f} deg"))
        self._plan_from_rest(t, averaged)

    def _request(self, t, kind, attitude=None, **fields):
        q = self.reference.sample(t).q if kind == "plan" else self._q
        mu = np.array(self._mu, dtype=float) if self.momentum else None
        attitude = self._g_hat[:3, :3].copy() if attitude is None else attitude
        request = PlanRequest(next(self._ids), kind, t, np.array(q, dtype=float), attitude, mu, self.target, **fields)
        self.outstanding = request.id
        self.planner.submit(request)

    def _plan_from_rest(self, t, attitude):
        """A plan from rest from ``attitude`` (``None``: the estimate now)."""
        self.status = "planning"
        self._request(t, "plan", attitude, start_time=t + self.start_delay_s if self.momentum else t)

    def _take(self, t, result):
        """A planner's result: a refusal, a plan from rest, or a plan from a boundary of the running one."""
        kind = result.request.kind
        if result.plan_id < 0:
            reason = result.summary["reason"]
            self.log.append((t, f"{kind} refused", reason))
            if kind == "plan":
                self.refusals.append(reason)
                self.status, self.running = "refused", None
            return
        if kind == "plan":
            start = result.start_time if self.momentum else max(t, result.start_time)
            if start < t and not _waits(result.trajectory, t - start):   # with momentum, its time is the plan's
                self.log.append((t, "plan late", f"{t - start:.3f} s after its start"))
                self._plan_from_rest(t, None)
                return
            result = result._replace(start_time=start)
            if self.first_plan is None:
                self.first_plan = dict(result.summary, start_time_s=start)
            if self.momentum and self.end_time is None:
                self.end_time = start + result.summary["duration_s"]
        elif result.start_time < t:              # after its boundary: the running plan goes on
            self.log.append((t, f"{kind} late", f"{t - result.start_time:.3f} s after its boundary"))
            return
        else:
            self.cycles += result.request.cycle  # the running plan's cycles until the boundary
            if self.momentum and kind == "remainder":      # its loops may end later: the target is then
                self.end_time = result.start_time + result.summary["duration_s"]
        self.reference.play(result.start_time, result.trajectory)
        if not self.fixed_gains:
            self._gains_from = [g for g in self._gains_from if g[0] < result.start_time] + [
                (result.start_time, ShapeGains(*result.gains))]
        self.running = (result, 1)
        self.status = "executing"
        self.log.append((t, f"{kind} from {result.start_time:.3f} s", result.summary))

    def _follow(self, t):
        """The running plan: its end, and the observations ``lead_s`` before its boundaries but the last."""
        result, j = self.running
        start, times = result.start_time, result.cycle_times
        if t < start:
            return
        if t >= start + result.summary["duration_s"]:
            self.cycles += result.summary["cycles"]
            self.running, self.motion_end = None, start + result.summary["duration_s"]
            if self.momentum and self.pending_target is None:
                self.status = "done"
                self.log.append((t, "done", "at the plan's end (with momentum the base drifts on)"))
            else:
                self._settle()
            return
        while j < len(times) - 1 and t >= start + times[j] - self.lead_s:
            if t < start + times[j] and self.outstanding is None:
                kind = "stop" if self.pending_target is not None else "remainder"
                self._request(t, kind, plan_id=result.plan_id, plan_start=start, cycle=j,
                              end_time=self.end_time if self.momentum else math.nan)
            j += 1
        self.running = (result, j)

    def _angular_momentum(self):
        """``(k, I)``: the estimate's angular momentum about the CoM in world axes (conserved), and the locked
        system's mean principal inertia, from ``M_b`` and ``mu_hat`` of the tick ([Mishra2023] Def. 2)."""
        M_b = self._M_b
        J = M_b @ np.asarray(self._mu, dtype=float)
        c = np.array(com_from_locked_inertia(M_b))
        inertia = (np.trace(M_b[:3, :3]) - 2 * M_b[3, 3] * c @ c) / 3
        return self._g_hat[:3, :3] @ (J[:3] - np.cross(c, J[3:])), inertia

    def _steady(self):
        """Whether the momentum's estimate changed over the window by less than ``MOMENTUM_STEADY`` of drift rate:
        the observer has converged (the true momentum is conserved)."""
        (k0, inertia), (k1, _) = self._k_window, self._angular_momentum()
        return np.linalg.norm(k1 - k0) / inertia < MOMENTUM_STEADY

    def estimated_error(self):
        """Angle (rad) between the target and the observer's attitude estimate (nan without either)."""
        if self.target is None or self._g_hat is None:
            return math.nan
        return rotation_angle(self.target.T @ self._g_hat[:3, :3])

    def progress(self):
        """What a node shows: the state, the cycles done, the errors (deg), the first plan's numbers."""
        first = self.first_plan or {}
        return {"status": self.status, "cycles_done": self.cycles, "corrections": self.corrections,
                "momentum": self.momentum, "estimated_error_deg": math.degrees(self.estimated_error()),
                "planned_cycles": first.get("cycles", 0), "planned_duration_s": first.get("duration_s", math.nan),
                "planning_time_s": first.get("planning_time_s", math.nan),
                "last_refusal": self.refusals[-1] if self.refusals else "none"}
