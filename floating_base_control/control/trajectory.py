"""Joint references: waypoint trajectories interpolated like ros2_control's joint_trajectory_controller.

A :class:`JointTrajectory` starts from a state ``(t0, q0, v0, a0)`` (where the
reference was when it was commanded) and passes through waypoints at absolute
times.  Each segment is interpolated from what the waypoints give, as the
joint_trajectory_controller does: positions only -> linear, positions and
velocities -> cubic (Hermite), positions, velocities and accelerations ->
quintic.  Before its start the previous reference holds; after its last point
the last position is held at rest.

:class:`TrajectoryReference` is what a task tracks.  A new trajectory, stamped
``start_time`` and received at ``now``, is taken as joint_trajectory_controller's
documented trajectory replacement takes it (ros2_controllers,
``joint_trajectory_controller/doc/trajectory.rst``, "Trajectory Replacement"):

* it replaces the current one from ``t_s = max(start_time, now)`` on, starting from
  the state the current one has at ``t_s`` (a future stamp: the current one runs
  until then; a stamp in the past: from now);
* waypoints before ``t_s`` are discarded (a stamp in the past); if none is left
  (the trajectory ends in the past) it is refused;
* a waypoint at ``t_s`` itself (MoveIt's first point, ``time_from_start = 0``, the
  current state) must be within ``start_tolerance`` of the current positions (the
  measured ones if given, as MoveIt compares its start with them, with its own
  ``allowed_start_tolerance`` of 0.01 rad; else the reference's); it is then
  dropped: the trajectory starts from the reference's state, which never jumps;
* joints the trajectory does not name keep the reference's position at ``t_s``
  (joint_trajectory_controller's ``allow_partial_joints_goal``; whether partial goals
  are allowed is the caller's choice);
* its last waypoint must be at rest, unless ``allow_moving_end`` (joint_trajectory_
  controller's ``allow_nonzero_velocity_at_trajectory_end``, false by default since
  Iron: a streaming client such as MoveIt Servo replaces each trajectory before its
  end); after the end the last position is held.

Joint_trajectory_controller itself (Jazzy) samples a trajectory whose stamp is in
the past where it would be now, from its own points, which can make the command
jump; discarding the past waypoints keeps the reference continuous and reaches
the next waypoint at its stamped time.  A trajectory is refused (``InputError``
with the reason, the current one kept) if its path, not only its waypoints,
leaves the position range or exceeds the velocity or acceleration limits: each
segment's extrema are computed exactly (:func:`polynomial_extremes`).  A
set-point becomes a quintic rest-to-rest move whose duration keeps those limits.

One coherent module: the trajectory, its interpolation and the checks joint_trajectory_controller's
semantics ask of a command (start tolerance, stamps, limits along the path).
"""
import copy
from typing import NamedTuple, Optional

import numpy as np

from floating_base_control import validation as check
from floating_base_control.validation import InputError

#: Largest distance (rad or m) between a waypoint at a trajectory's start and the reference there, as
#: MoveIt's ``trajectory_execution.allowed_start_tolerance`` (its default).
START_TOLERANCE = 0.01
#: Waypoints this close (s) to a trajectory's start are at its start (stamps have 1 ns resolution; seconds
#: since the epoch in a float, about 0.2 us).
SAME_TIME = 1e-6


class Waypoint(NamedTuple):
    """One point of a trajectory (``trajectory_msgs/JointTrajectoryPoint`` without effort)."""

    time_from_start: float
    positions: np.ndarray
    velocities: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None


class ReferenceSample(NamedTuple):
    """``(q_r, qdot_r, qddot_r)`` at one time."""

    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray


def _hermite_coefficients(T, q0, v0, a0, q1, v1, a1, degree):
    """Polynomial coefficients ``c[k]`` (``q(s) = sum c_k s^k``, ``0 <= s <= T``) matching the boundary data
    up to the velocity (cubic) or the acceleration (quintic); element-wise (arrays: many segments at once)."""
    if degree == 1:
        return np.array([q0, (q1 - q0) / T])
    if degree == 3:
        c2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T**2
        c3 = (2 * (q0 - q1) + (v0 + v1) * T) / T**3
        return np.array([q0, v0, c2, c3])
    h = q1 - q0
    c3 = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T**2) / (2 * T**5)
    return np.array([q0, v0, a0 / 2, c3, c4, c5])


def _evaluate(c, s):
    """``(q, qdot, qddot)`` of the polynomial ``c`` (rows: powers) at ``s``."""
    k = np.arange(len(c))
    q = (s ** k) @ c
    v = (k[1:] * s ** (k[1:] - 1)) @ c[1:]
    a = (k[2:] * (k[2:] - 1) * s ** np.maximum(k[2:] - 2, 0)) @ c[2:] if len(c) > 2 else np.zeros_like(q)
    return ReferenceSample(q, v, a)


class JointTrajectory:
    """A trajectory from a start state through waypoints (see the module doc); immutable once built."""

    def __init__(self, t0, start, waypoints):
        if not waypoints:
            raise InputError("a trajectory needs at least one waypoint")
        n = start.q.shape[0]
        given_v = waypoints[0].velocities is not None
        given_a = waypoints[0].accelerations is not None
        if given_a and not given_v:
            raise InputError("waypoints with accelerations need velocities too")
        self.degree = 5 if given_a else 3 if given_v else 1
        times, q, v, a = [t0], [start.q], [start.qdot], [start.qddot]
        for i, w in enumerate(waypoints):
            if (w.velocities is not None) != given_v or (w.accelerations is not None) != given_a:
                raise InputError(f"waypoint {i}: every waypoint must give the same fields (positions, "
                                 "velocities, accelerations)")
            t1 = t0 + float(check.array(f"waypoint {i} time_from_start", w.time_from_start, ()))
            if t1 <= times[-1]:
                raise InputError(f"waypoint {i}: time_from_start must increase (got {w.time_from_start:g} s "
                                 f"after {times[-1] - t0:g} s)")
            times.append(t1)
            q.append(check.vector(f"waypoint {i} positions", w.positions, n))
            v.append(np.zeros(n) if not given_v else check.vector(f"waypoint {i} velocities", w.velocities, n))
            a.append(np.zeros(n) if not given_a else check.vector(f"waypoint {i} accelerations", w.accelerations, n))
        self.times = np.array(times)
        q, v, a = np.array(q), np.array(v), np.array(a)
        #: (segments, powers, joints): every segment's polynomial at once
        self.segments = np.moveaxis(_hermite_coefficients(np.diff(self.times)[:, None], q[:-1], v[:-1], a[:-1],
                                                          q[1:], v[1:], a[1:], self.degree), 0, 1)
        self.final = ReferenceSample(q[-1], np.zeros(n), np.zeros(n))

    @property
    def start_time(self):
        return self.times[0]

    @property
    def end_time(self):
        return self.times[-1]

    def sample(self, t):
        """:class:`ReferenceSample` at ``t >= start_time`` (the last position, at rest, after the end)."""
        if t >= self.times[-1]:
            return self.final
        i = max(int(np.searchsorted(self.times, t, side="right")) - 1, 0)
        return _evaluate(self.segments[i], max(t - self.times[i], 0.0))

    def shifted(self, dt):
        """This trajectory ``dt`` s later."""
        out = copy.copy(self)
        out.times = self.times + dt
        return out

    def bounds(self, position_limits=None, velocity_limit=None, acceleration_limit=None):
        """``(lowest q, highest q, largest |qdot|, largest |qddot|)`` per joint over the whole path, exact
        (:func:`polynomial_extremes`; a linear segment's corners are velocity steps, whose acceleration is
        not counted).  Given limits (``(n, 2)``, ``(n,)``, ``(n,)``), only what may leave them is searched:
        the others' values are within their limits, not necessarily their extremes."""
        c, T = self.segments, np.diff(self.times)
        v = derivative(c)
        symmetric = lambda limit: None if limit is None else (-limit, limit)      # noqa: E731
        lo, hi = polynomial_extremes(c, T, None if position_limits is None else tuple(position_limits.T))
        v_lo, v_hi = polynomial_extremes(v, T, symmetric(velocity_limit))
        a_lo, a_hi = polynomial_extremes(derivative(v), T, symmetric(acceleration_limit))
        return lo, hi, np.maximum(-v_lo, v_hi), np.maximum(-a_lo, a_hi)


def derivative(c):
    """Coefficients (segments, powers, joints) of the derivatives of the polynomials ``c``."""
    if c.shape[1] == 1:
        return np.zeros_like(c)
    return c[:, 1:] * np.arange(1, c.shape[1])[None, :, None]


def polynomial_extremes(c, T, within=None):
    """``(lowest, highest)`` per joint of the polynomials ``c`` (segments, powers, joints), segment ``i`` on
    ``[0, T_i]``: their values at both ends and at the real roots of their derivatives in between, which is
    where a polynomial's extrema are.  ``within = (lo, hi)`` (per joint): a polynomial that cannot leave
    ``[lo, hi]`` (``|c_0| + sum_k |c_k| T^k`` says so) is not searched (finding roots is the cost)."""
    k = np.arange(c.shape[1])
    powers = T[:, None] ** k
    ends = np.concatenate((c[:, 0], np.einsum("skn,sk->sn", c, powers)))
    lo, hi = ends.min(axis=0), ends.max(axis=0)
    search = np.ones(c.shape[::2], bool)
    if within is not None:
        reach = np.einsum("skn,sk->sn", np.abs(c[:, 1:]), powers[:, 1:])
        search = (c[:, 0] - reach < within[0]) | (c[:, 0] + reach > within[1])
    segment, joint, s = _critical_points(c, T, search)
    values = np.einsum("ik,ik->i", c[segment, :, joint], s[:, None] ** k)
    np.minimum.at(lo, joint, values)
    np.maximum.at(hi, joint, values)
    return lo, hi


def _critical_points(c, T, search):
    """``(segment, joint, s)`` of the roots ``0 < s < T_segment`` of the derivatives of the polynomials ``c``
    where ``search`` (segments, joints) is set, as eigenvalues of companion matrices (batched per degree; in
    ``x = s / T``, where a coefficient below 1e-12 of the largest is a zero, so the leading one is not).
    Complex roots are kept by their real part: a point of the path, never beyond its extrema, and a root
    found slightly complex is still found."""
    segments, powers, n = c.shape
    if powers < 3:
        return np.zeros(0, int), np.zeros(0, int), np.zeros(0)
    j = np.arange(1, powers)
    scaled = c[:, 1:] * (j[None, :] * T[:, None] ** (j - 1))[:, :, None]       # d/ds in powers of x
    p = scaled.transpose(0, 2, 1).reshape(segments * n, powers - 1)
    significant = np.abs(p) > 1e-12 * np.abs(p).max(axis=1, keepdims=True)
    degree = np.where(significant.any(axis=1) & search.ravel(),
                      powers - 2 - np.argmax(significant[:, ::-1], axis=1), 0)
    rows, xs = [np.zeros(0, int)], [np.zeros(0)]
    for d in range(1, powers - 1):
        which = np.flatnonzero(degree == d)
        if which.size:
            companion = np.zeros((which.size, d, d))
            companion[:, 1:, :-1] = np.eye(d - 1)
            companion[:, :, -1] = -p[which, :d] / p[which, d:d + 1]
            x = np.linalg.eigvals(companion).real
            r, i = np.nonzero((x > 0) & (x < 1))
            rows.append(which[r])
            xs.append(x[r, i])
    segment, joint = np.divmod(np.concatenate(rows), n)
    return segment, joint, np.concatenate(xs) * T[segment]


def rest_to_rest_duration(distance, velocity_limit, acceleration_limit):
    """Shortest duration of a quintic rest-to-rest move of ``|distance|`` per joint within the limits
    (peak velocity ``15/8 d/T``, peak acceleration ``10/sqrt(3) d/T^2``)."""
    d = np.abs(distance)
    return float(max(np.max(15 / 8 * d / velocity_limit), np.max(np.sqrt(10 / np.sqrt(3) * d / acceleration_limit))))


class TrajectoryReference:
    """The joint reference a task tracks: a set-point or a trajectory, replaced at run time (module doc).

    ``position_limits`` ``(n, 2)``, ``velocity_limits`` and ``acceleration_limits`` ``(n,)`` bound what is
    tracked: a command that would leave them is refused and the current reference kept.  ``names`` (one
    per joint) name the joints in the reasons; ``start_tolerance`` and ``allow_moving_end``: see the module
    doc.
    """

    def __init__(self, q0, position_limits, velocity_limits, acceleration_limits, t0=0.0, names=None):
        self.position_limits = np.asarray(position_limits, dtype=float)
        self.velocity_limits = np.asarray(velocity_limits, dtype=float)
        self.acceleration_limits = np.asarray(acceleration_limits, dtype=float)
        self.n = self.velocity_limits.shape[0]
        self.names = list(names) if names is not None else list(range(self.n))
        self.start_tolerance = START_TOLERANCE
        self.allow_moving_end = False
        q0 = check.vector("q0", q0, self.n)
        lo, hi = self.position_limits.T
        self._check_range("initial reference", q0, q0, lo, hi)
        self.trajectories = [JointTrajectory(t0, ReferenceSample(q0, np.zeros(self.n), np.zeros(self.n)),
                                             [Waypoint(1.0, q0)])]

    def sample(self, t):
        """:class:`ReferenceSample` at ``t``."""
        while len(self.trajectories) > 1 and t >= self.trajectories[1].start_time:
            self.trajectories.pop(0)
        return self.trajectories[0].sample(t)

    @property
    def end_time(self):
        return self.trajectories[-1].end_time

    @property
    def goal(self):
        """The last position of the newest trajectory."""
        return self.trajectories[-1].final.q

    def command(self, start_time, waypoints, now=None, joints=None, current=None):
        """Take a trajectory through ``waypoints`` (``time_from_start`` from ``start_time``) received at
        ``now`` (default: ``start_time``), giving the joints ``joints`` (indices; default: all), with the
        robot at ``current`` (positions; default: the reference's), as the module doc says.  Returns the
        trajectory."""
        return self.take(self.plan(start_time, waypoints, now, joints, current))

    def take(self, trajectory, now=None):
        """Follow ``trajectory`` (from :meth:`plan`, with no command taken since) from its start on.  ``now``:
        it was planned to start when it was received (a zero stamp) and is taken at ``now``, after its check:
        if the reference has stayed where it starts (at rest), it starts at ``now``, so that the check's time
        is not taken from its motion; else at its start, as a stamp in the past."""
        start = trajectory.sample(trajectory.start_time)
        if now is not None and now > trajectory.start_time and all(
                np.allclose(a, b, rtol=0.0, atol=1e-12) for a, b in zip(self.sample(now), start)):
            trajectory = trajectory.shifted(now - trajectory.start_time)
        t_s = trajectory.start_time
        self.trajectories = [tr for tr in self.trajectories if tr.start_time < t_s] or self.trajectories[:1]
        self.trajectories.append(trajectory)
        return trajectory

    def plan(self, start_time, waypoints, now=None, joints=None, current=None):
        """The trajectory :meth:`command` would take, checked, without taking it (``InputError`` with the
        reason): what a loop runs off its tick (``floating_base_control/background.py``, on a copy of the
        reference) before it :meth:`take` s the result."""
        start_time = float(check.array("start_time", start_time, ()))
        t_s = start_time if now is None else max(start_time, float(check.array("now", now, ())))
        kept = [tr for tr in self.trajectories if tr.start_time < t_s] or self.trajectories[:1]
        start = self._sample_of(kept, t_s)
        full = self._complete(list(waypoints), joints, start.q)
        self._check_at_rest(full[-1] if full else None)
        current = start.q if current is None else check.vector("current positions", current, self.n)
        trajectory = JointTrajectory(t_s, start, self._upcoming(full, t_s - start_time, current))
        lo, hi, vmax, amax = trajectory.bounds(self.position_limits, self.velocity_limits, self.acceleration_limits)
        self._check_range("trajectory", lo, hi, *self.position_limits.T)
        self._check_rate("velocity", vmax, self.velocity_limits)
        if trajectory.degree > 1:
            self._check_rate("acceleration", amax, self.acceleration_limits)
        return trajectory

    def setpoint(self, t, q_d):
        """Move to ``q_d`` from ``t`` on: a quintic rest-to-rest move as fast as the limits allow."""
        q_d = check.vector("set-point", q_d, self.n)
        lo, hi = self.position_limits.T
        self._check_range("set-point", q_d, q_d, lo, hi)
        start = self._sample_of(self.trajectories, t)
        T = max(rest_to_rest_duration(q_d - start.q, self.velocity_limits, self.acceleration_limits), 1e-3)
        zero = np.zeros(self.n)
        for _ in range(20):        # from a moving state the rest-to-rest duration may not suffice
            try:
                return self.command(t, [Waypoint(T, q_d, zero, zero)])
            except InputError:
                T *= 1.5
        raise InputError("set-point: no move within the velocity and acceleration limits from the current state")

    def _complete(self, waypoints, joints, q_held):
        """``waypoints`` for every joint: those not in ``joints`` at ``q_held``, at rest."""
        if joints is None:
            return waypoints
        joints = list(joints)
        out = []
        for i, w in enumerate(waypoints):
            fields = []
            for what, given, default in (("positions", w.positions, q_held), ("velocities", w.velocities, 0.0),
                                         ("accelerations", w.accelerations, 0.0)):
                if given is None:
                    fields.append(None)
                    continue
                full = np.zeros(self.n) + default
                full[joints] = check.vector(f"waypoint {i} {what}", given, len(joints))
                fields.append(full)
            out.append(Waypoint(w.time_from_start, *fields))
        return out

    def _upcoming(self, waypoints, offset, current):
        """The waypoints later than ``offset`` s after the stamp, timed from then; one at ``offset`` must be
        within ``start_tolerance`` of ``current`` and is dropped (module doc)."""
        out, previous = [], -np.inf
        for i, w in enumerate(waypoints):
            t = float(check.array(f"waypoint {i} time_from_start", w.time_from_start, ()))
            if t < 0:
                raise InputError(f"waypoint {i}: time_from_start must be >= 0 (got {t:g} s)")
            if t <= previous:
                raise InputError(f"waypoint {i}: time_from_start must increase (got {t:g} s after {previous:g} s)")
            previous = t
            if t > offset + SAME_TIME:
                out.append(w._replace(time_from_start=t - offset))
            elif t >= offset - SAME_TIME:
                off = np.abs(check.vector(f"waypoint {i} positions", w.positions, self.n) - current)
                bad = np.flatnonzero(off > self.start_tolerance)
                if bad.size:
                    raise InputError(f"waypoint {i} is at the trajectory's start but joints {self._named(bad)} "
                                     f"are {np.round(off[bad], 4).tolist()} from their current positions "
                                     f"(start tolerance {self.start_tolerance:g})")
        if not out and previous >= offset - SAME_TIME:
            raise InputError("no waypoint after the trajectory's start: nothing to move to")
        if not out:
            raise InputError(f"the trajectory ends in the past: {offset - previous:.3f} s before it was taken "
                             "(its stamp plus its last time_from_start)")
        return out

    def _check_at_rest(self, last):
        """The last waypoint must be at rest, as joint_trajectory_controller requires by default (the reference
        stops there: a velocity left would be a step)."""
        if last is None or last.velocities is None or self.allow_moving_end:
            return
        v = check.vector("last waypoint velocities", last.velocities, self.n)
        bad = np.flatnonzero(np.abs(v) > np.finfo(np.float32).eps)
        if bad.size:
            raise InputError(f"the last waypoint's velocities must be zero (joints {self._named(bad)}: "
                             f"{v[bad].tolist()})")

    @staticmethod
    def _sample_of(trajectories, t):
        current = [tr for tr in trajectories if tr.start_time <= t] or trajectories[:1]
        return current[-1].sample(max(t, current[-1].start_time))

    def _named(self, indices):
        return [self.names[i] for i in indices]

    def _check_range(self, what, low, high, lo, hi):
        """``InputError`` naming the joints whose ``[low, high]`` leaves ``[lo, hi]``."""
        margin = 1e-9 * np.maximum(np.abs(lo), np.abs(hi))
        bad = np.flatnonzero((low < lo - margin) | (high > hi + margin))
        if bad.size:
            reached = np.where(low[bad] < lo[bad], low[bad], high[bad])
            raise InputError(f"{what} leaves the position limits of joints {self._named(bad)}: reaches "
                             f"{np.round(reached, 4).tolist()}, limits "
                             f"{np.round(np.c_[lo[bad], hi[bad]], 4).tolist()}")

    def _check_rate(self, what, peak, limit):
        bad = np.flatnonzero(peak > limit * (1 + 1e-9))
        if bad.size:
            raise InputError(f"trajectory exceeds the {what} limits of joints {self._named(bad)} "
                             f"(peaks {np.round(peak[bad], 4).tolist()} > {limit[bad].tolist()})")
