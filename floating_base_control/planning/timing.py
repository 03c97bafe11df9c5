"""Time-optimal timing of a geometric joint path under joint speed and acceleration limits.

A path ``q(s)`` (``s`` from 0 to ``length``) is timed by ``s(t)``: with ``x = sdot^2`` and
``u = sddot``, the joint velocities and accelerations are ``q' sdot`` and ``q' u + q'' x``, so the
limits ``|qdot_j| <= v_j`` and ``|qddot_j| <= a_j`` are linear in ``(u, x)`` at each ``s``.  On a grid
``s_i`` with ``u`` constant on each interval (``x_{i+1} = x_i + 2 u_i ds``) the fastest timing to rest
(from rest, or from a given path speed: a plan replacing another mid-motion) is found by two passes
[Pham2018] (TOPP-RA; the phase-plane method of [Bobrow1985]): backward, the largest ``x_i`` from which
the end can still be reached at rest; forward, the largest acceleration that stays within those bounds.
The limits hold at the grid points; between them the path's ``q'`` and ``q''`` change a little, which
:func:`time_path` absorbs by timing against limits scaled by ``1 - SAFETY`` and, if the check on a denser
grid still finds an excess, by timing it again within limits scaled as slowing the whole piece uniformly
would (``t -> k t`` divides speeds by ``k``, accelerations by ``k^2``).
"""
import math
from typing import NamedTuple

import numpy as np

from ..compiled import R1, R2, W1, F, kernel
from ..validation import InputError

#: Fraction of the limits kept in reserve by the grid timing (the exact check follows).
SAFETY = 0.01
#: Check points per grid interval for the dense limit check.
CHECK_SUBSAMPLES = 4
#: Largest step (s) between the knots of a hold.
HOLD_STEP = 0.05
#: Relative extra slow-down when the dense check finds an excess (rounding must not reach the limit), and the
#: timings tried.
STRETCH_ROUNDING, RETIMINGS = 1e-9, 4
#: Relative shortfall of a given start speed that a timing may make: a step down in velocity of this fraction (a
#: plan replacing another with a loop that cannot carry the speed at its start; the tracking's damping takes it).
START_TOLERANCE = 0.1
#: Bisection steps for the largest controllable ``sdot^2`` (relative resolution 2^-60).
BISECTIONS = 60


@kernel(R1, R1, R1, R1, F)
def _acceleration_bounds(dq, ddq, vmax, amax, x):
    """``(L, U)``: the path accelerations ``u`` allowed at ``sdot^2 = x`` by ``|q' u + q'' x| <= a``
    (``L > U``: none; joints with ``q' = 0`` need ``|q'' x| <= a``, reported as ``L = inf``)."""
    lo, hi = -math.inf, math.inf
    for j in range(len(dq)):
        if abs(dq[j]) > 1e-12:
            a = (-amax[j] - ddq[j] * x) / dq[j]
            b = (amax[j] - ddq[j] * x) / dq[j]
            if a > b:
                a, b = b, a
            lo, hi = max(lo, a), min(hi, b)
        elif abs(ddq[j]) * x > amax[j]:
            lo = math.inf
    return lo, hi


@kernel(R1, R1, R1, R1)
def _speed_bound(dq, ddq, vmax, amax):
    """Largest ``sdot^2`` allowed by the speed limits (and by the acceleration limits of joints at rest)."""
    x = 1e300
    for j in range(len(dq)):
        if abs(dq[j]) > 1e-12:
            x = min(x, (vmax[j] / dq[j]) ** 2)
        elif abs(ddq[j]) > 1e-12:
            x = min(x, amax[j] / abs(ddq[j]))
    return x


@kernel(R1, R1, R1, R1, F, F)
def _controllable(dq, ddq, vmax, amax, beta_next, ds):
    """Largest ``x`` in ``[0, speed bound]`` from which some allowed ``u`` reaches ``[0, beta_next]``
    (a convex condition in ``x``, so the feasible set is an interval from 0: bisection)."""
    def feasible(x):
        lo, hi = _acceleration_bounds(dq, ddq, vmax, amax, x)
        return lo <= hi and lo <= (beta_next - x) / (2.0 * ds) and hi >= -x / (2.0 * ds)
    top = _speed_bound(dq, ddq, vmax, amax)
    if feasible(top):
        return top
    a, b = 0.0, top
    for _ in range(BISECTIONS):
        m = 0.5 * (a + b)
        if feasible(m):
            a = m
        else:
            b = m
    return a


@kernel(R2, R2, R1, R1, F, W1, W1)
def _two_passes(dq, ddq, vmax, amax, ds, x, u):
    """[Pham2018]: ``x_i = sdot^2`` at the grid points (at rest at the end; from ``x[0]`` as given, lowered to
    the largest from which the end can be reached) and ``u_i`` on the intervals."""
    N = dq.shape[0] - 1
    beta = np.empty(N + 1)
    beta[N] = 0.0
    for i in range(N - 1, -1, -1):
        beta[i] = _controllable(dq[i], ddq[i], vmax, amax, beta[i + 1], ds)
    x[0] = min(x[0], beta[0])
    for i in range(N):
        lo, hi = _acceleration_bounds(dq[i], ddq[i], vmax, amax, x[i])
        u[i] = min(hi, (beta[i + 1] - x[i]) / (2.0 * ds))
        x[i + 1] = max(0.0, x[i] + 2.0 * ds * u[i])


class PathTiming(NamedTuple):
    """``s(t)`` on a grid: piecewise constant path acceleration ``u`` between the grid points."""

    s: np.ndarray        #: (N+1,) grid of the path parameter
    t: np.ndarray        #: (N+1,) times at the grid points, from 0
    sdot: np.ndarray     #: (N+1,) path speed at the grid points
    u: np.ndarray        #: (N,) path acceleration on each interval

    @property
    def duration(self):
        return float(self.t[-1])

    def at(self, t):
        """``(s, sdot, sddot)`` at times ``t`` (array, clipped to ``[0, duration]``; at rest from the end on)."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.t[-1])
        i = np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, len(self.u) - 1)
        tau = t - self.t[i]
        u = self.u[i]
        return (np.minimum(self.s[i] + self.sdot[i] * tau + 0.5 * u * tau**2, self.s[-1]),
                np.maximum(self.sdot[i] + u * tau, 0.0), np.where(t < self.t[-1], u, 0.0))


def time_path(path, vmax, amax, intervals, sdot_start=0.0):
    """Time-optimal :class:`PathTiming` of ``path`` to rest within ``|qdot| <= vmax``, ``|qddot| <= amax``,
    checked on ``CHECK_SUBSAMPLES`` points per interval, from rest or from the path speed ``sdot_start``.

    ``path.derivatives(s)`` gives ``(q, q', q'')`` at an array of ``s`` and ``path.length`` is the end of
    ``s``.  ``intervals`` is the size of the timing grid.  An excess found by the dense check is removed by
    timing again within the limits scaled as a uniform slow-down ``t -> k t`` would (``vmax / k``,
    ``amax / k^2``: from rest the result is that slow-down, the passes being time-scaling covariant), which
    keeps the start speed.  A start speed the limits do not allow (a joint too fast, or too fast to stop in
    time) by more than ``START_TOLERANCE`` is an :class:`InputError`.
    """
    s = np.linspace(0.0, path.length, int(intervals) + 1)
    _, dq, ddq = path.derivatives(s)
    scale = 1.0
    for _ in range(RETIMINGS):
        x, u = np.empty(len(s)), np.empty(len(s) - 1)
        x[0] = sdot_start ** 2
        _two_passes(dq, ddq, (1 - SAFETY) * vmax / scale, (1 - SAFETY) * amax / scale**2, s[1] - s[0], x, u)
        if math.sqrt(x[0]) < sdot_start * (1 - START_TOLERANCE):
            raise InputError(f"the path cannot be timed from path speed {sdot_start:.4g} within the limits (at most "
                             f"{math.sqrt(x[0]):.4g})")
        sdot = np.sqrt(x)
        gaps = sdot[:-1] + sdot[1:]
        if (gaps <= 0).any():
            raise InputError("the path cannot be timed within the limits: it must stop in its middle "
                             f"(at s = {s[np.argmax(gaps <= 0)]:.4g} of {path.length:.4g})")
        timing = PathTiming(s, np.concatenate([[0.0], np.cumsum(2 * (s[1] - s[0]) / gaps)]), sdot, u)
        excess = max(limit_ratios(path, timing, vmax, amax))
        if excess <= 1.0:
            return timing
        scale *= excess * (1 + STRETCH_ROUNDING)
    raise InputError(f"the path's timing still exceeds the limits by {excess - 1:.2g} after {RETIMINGS} retimings")


def limit_ratios(path, timing, vmax, amax):
    """``(max |qdot| / vmax, sqrt(max |qddot| / amax))`` of a timed path on a grid denser than its timing's.

    Each interval is checked at ``CHECK_SUBSAMPLES`` points with the interval's own ``u`` (the
    acceleration jumps at grid points; both sides are checked).
    """
    k = np.arange(CHECK_SUBSAMPLES + 1) / CHECK_SUBSAMPLES
    ds = np.diff(timing.s)
    s = (timing.s[:-1, None] + k * ds[:, None]).ravel()
    x = np.maximum((timing.sdot[:-1, None] ** 2 + 2 * timing.u[:, None] * k * ds[:, None]).ravel(), 0.0)
    u = np.repeat(timing.u, len(k))
    _, dq, ddq = path.derivatives(s)
    speed = np.abs(dq) * np.sqrt(x)[:, None] / vmax
    accel = np.abs(dq * u[:, None] + ddq * x[:, None]) / amax
    return float(speed.max()), float(np.sqrt(accel.max()))


class TimedPath(NamedTuple):
    """A path and its timing: one piece of a :class:`Trajectory`."""

    path: object
    timing: PathTiming

    @property
    def duration(self):
        return self.timing.duration

    @property
    def knots(self):
        """Times where the path acceleration may jump (the timing's grid)."""
        return self.timing.t

    def evaluate(self, t):
        """``(q, qdot, qddot)`` at times ``t`` from the piece's start (arrays ``(len(t), n)``)."""
        s, sdot, sddot = self.timing.at(t)
        q, dq, ddq = self.path.derivatives(s)
        return q, dq * sdot[:, None], dq * sddot[:, None] + ddq * (sdot**2)[:, None]


class Hold(NamedTuple):
    """The joints at rest at ``q`` for ``duration`` seconds."""

    q: np.ndarray
    duration: float

    @property
    def knots(self):
        """Every ``HOLD_STEP`` (an integrator along the trajectory steps there: the base may drift)."""
        return np.linspace(0.0, self.duration, max(1, math.ceil(self.duration / HOLD_STEP)) + 1)

    def evaluate(self, t):
        q = np.tile(self.q, (len(np.atleast_1d(t)), 1))
        return q, np.zeros_like(q), np.zeros_like(q)


class Trajectory:
    """Pieces (:class:`TimedPath`, :class:`Hold`) played one after the other, each from rest to rest."""

    def __init__(self, pieces):
        self.pieces = tuple(p for p in pieces if p.duration > 0)
        if not self.pieces:
            raise InputError("a trajectory needs at least one piece of positive duration")
        self.starts = np.concatenate([[0.0], np.cumsum([p.duration for p in self.pieces])])

    @property
    def duration(self):
        return float(self.starts[-1])

    @property
    def knots(self):
        """Times where the joint accelerations may jump: the pieces' grids and ends (the joint trajectory is
        smooth in between, so an integrator along it keeps its order if its steps end there)."""
        return np.unique(np.concatenate([start + p.knots for start, p in zip(self.starts, self.pieces)]))

    def evaluate(self, t):
        """``(q, qdot, qddot)`` at times ``t`` (scalar or array; clipped to ``[0, duration]``)."""
        scalar = np.ndim(t) == 0
        t = np.clip(np.atleast_1d(np.asarray(t, dtype=float)), 0.0, self.duration)
        which = np.clip(np.searchsorted(self.starts, t, side="right") - 1, 0, len(self.pieces) - 1)
        n = len(self.pieces[0].evaluate(np.zeros(1))[0][0])
        out = [np.empty((len(t), n)) for _ in range(3)]
        for k, piece in enumerate(self.pieces):
            sel = which == k
            if sel.any():
                for o, v in zip(out, piece.evaluate(t[sel] - self.starts[k])):
                    o[sel] = v
        return tuple(o[0] for o in out) if scalar else tuple(out)


class TrajectoryWindow:
    """The part of a trajectory between ``start`` and ``end`` (s), timed from ``start``."""

    def __init__(self, trajectory, start, end):
        self.trajectory, self.start, self.duration = trajectory, float(start), float(end) - float(start)
        if not self.duration > 0:
            raise InputError(f"a trajectory window needs end > start, got {start} to {end}")

    @property
    def knots(self):
        knots = self.trajectory.knots - self.start
        return np.concatenate([[0.0], knots[(knots > 0) & (knots < self.duration)], [self.duration]])

    def evaluate(self, t):
        return self.trajectory.evaluate(np.asarray(t, dtype=float) + self.start)
