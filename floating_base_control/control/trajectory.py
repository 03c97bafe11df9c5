"""Joint references: waypoint trajectories interpolated like ros2_control's joint_trajectory_controller.

A :class:`JointTrajectory` starts from a state ``(t0, q0, v0, a0)`` (where the
reference was when it was commanded) and passes through waypoints at absolute
times.  Each segment is interpolated from what the waypoints give, as the
joint_trajectory_controller does: positions only -> linear, positions and
velocities -> cubic (Hermite), positions, velocities and accelerations ->
quintic.  Before its start the previous reference holds; after its last point
the last position is held at rest.

:class:`TrajectoryReference` is what a task tracks: a new trajectory (or a
set-point) replaces the rest of the current one from its start time on, starting
from the state the current one has at that time, and is refused (``InputError``
with the reason, the current one kept) if it leaves the position range or exceeds
the velocity or acceleration limits.  A set-point becomes a quintic rest-to-rest
move whose duration keeps those limits.
"""
from typing import NamedTuple, Optional

import numpy as np

from floating_base_control import validation as check
from floating_base_control.validation import InputError

#: Samples per segment at which a new trajectory is checked against the limits.
CHECK_SAMPLES = 64


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
    up to the velocity (cubic) or the acceleration (quintic)."""
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
        times = [t0]
        self.segments = []
        q0, v0, a0 = start
        for i, w in enumerate(waypoints):
            if (w.velocities is not None) != given_v or (w.accelerations is not None) != given_a:
                raise InputError(f"waypoint {i}: every waypoint must give the same fields (positions, "
                                 "velocities, accelerations)")
            t1 = t0 + float(check.array(f"waypoint {i} time_from_start", w.time_from_start, ()))
            if t1 <= times[-1]:
                raise InputError(f"waypoint {i}: time_from_start must increase (got {w.time_from_start:g} s "
                                 f"after {times[-1] - t0:g} s)")
            q1 = check.vector(f"waypoint {i} positions", w.positions, n)
            v1 = np.zeros(n) if not given_v else check.vector(f"waypoint {i} velocities", w.velocities, n)
            a1 = np.zeros(n) if not given_a else check.vector(f"waypoint {i} accelerations", w.accelerations, n)
            self.segments.append(_hermite_coefficients(t1 - times[-1], q0, v0, a0, q1, v1, a1, self.degree))
            times.append(t1)
            q0, v0, a0 = q1, v1, a1
        self.times = np.array(times)
        self.final = ReferenceSample(q0, np.zeros(n), np.zeros(n))

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

    def peaks(self):
        """Largest ``|qdot|`` and ``|qddot|`` per joint over the trajectory (sampled; a linear segment's corners
        are velocity steps, whose acceleration is not counted)."""
        vmax = np.zeros_like(self.final.q)
        amax = np.zeros_like(self.final.q)
        for i, c in enumerate(self.segments):
            for s in np.linspace(0.0, self.times[i + 1] - self.times[i], CHECK_SAMPLES):
                r = _evaluate(c, s)
                vmax = np.maximum(vmax, np.abs(r.qdot))
                amax = np.maximum(amax, np.abs(r.qddot))
        return vmax, amax


def rest_to_rest_duration(distance, velocity_limit, acceleration_limit):
    """Shortest duration of a quintic rest-to-rest move of ``|distance|`` per joint within the limits
    (peak velocity ``15/8 d/T``, peak acceleration ``10/sqrt(3) d/T^2``)."""
    d = np.abs(distance)
    return float(max(np.max(15 / 8 * d / velocity_limit), np.max(np.sqrt(10 / np.sqrt(3) * d / acceleration_limit))))


class TrajectoryReference:
    """The joint reference a task tracks: a set-point or a trajectory, replaced at run time.

    ``position_limits`` ``(n, 2)``, ``velocity_limits`` and ``acceleration_limits`` ``(n,)`` bound what is
    tracked: a command that would leave them is refused and the current reference kept.
    """

    def __init__(self, q0, position_limits, velocity_limits, acceleration_limits, t0=0.0):
        self.position_limits = np.asarray(position_limits, dtype=float)
        self.velocity_limits = np.asarray(velocity_limits, dtype=float)
        self.acceleration_limits = np.asarray(acceleration_limits, dtype=float)
        self.n = self.velocity_limits.shape[0]
        q0 = check.vector("q0", q0, self.n)
        self._check_positions("initial reference", q0)
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

    def command(self, start_time, waypoints):
        """Replace the reference from ``start_time`` on by a trajectory through ``waypoints`` (times from
        ``start_time``), starting from the current reference's state there.  Returns the trajectory."""
        start_time = float(check.array("start_time", start_time, ()))
        kept = [tr for tr in self.trajectories if tr.start_time < start_time] or self.trajectories[:1]
        start = self._sample_of(kept, start_time)
        trajectory = JointTrajectory(start_time, start, list(waypoints))
        for i, w in enumerate(waypoints):
            self._check_positions(f"waypoint {i}", np.asarray(w.positions, dtype=float))
        vmax, amax = trajectory.peaks()
        self._check_rate("velocity", vmax, self.velocity_limits)
        if trajectory.degree > 1:
            self._check_rate("acceleration", amax, self.acceleration_limits)
        self.trajectories = kept + [trajectory]
        return trajectory

    def setpoint(self, t, q_d):
        """Move to ``q_d`` from ``t`` on: a quintic rest-to-rest move as fast as the limits allow."""
        q_d = check.vector("set-point", q_d, self.n)
        self._check_positions("set-point", q_d)
        start = self._sample_of(self.trajectories, t)
        T = max(rest_to_rest_duration(q_d - start.q, self.velocity_limits, self.acceleration_limits), 1e-3)
        zero = np.zeros(self.n)
        for _ in range(20):        # from a moving state the rest-to-rest duration may not suffice
            try:
                return self.command(t, [Waypoint(T, q_d, zero, zero)])
            except InputError:
                T *= 1.5
        raise InputError("set-point: no move within the velocity and acceleration limits from the current state")

    @staticmethod
    def _sample_of(trajectories, t):
        current = [tr for tr in trajectories if tr.start_time <= t] or trajectories[:1]
        return current[-1].sample(max(t, current[-1].start_time))

    def _check_positions(self, what, q):
        lo, hi = self.position_limits.T
        bad = np.flatnonzero((q < lo) | (q > hi))
        if bad.size:
            raise InputError(f"{what}: joints {bad.tolist()} outside their position limits "
                             f"({q[bad].tolist()} not in {self.position_limits[bad].tolist()})")

    @staticmethod
    def _check_rate(what, peak, limit):
        bad = np.flatnonzero(peak > limit * (1 + 1e-9))
        if bad.size:
            raise InputError(f"trajectory exceeds the {what} limits of joints {bad.tolist()} "
                             f"(peaks {np.round(peak[bad], 4).tolist()} > {limit[bad].tolist()})")
