"""Base state observer of the orbital robot: [Mishra2023] Sec. V-A1-2 (eqs. 37-42, 51).

Inputs: joint positions and velocities at the control rate, and base pose
samples at a slow rate (with a time stamp; they may arrive late).  Outputs: the
estimate ``g_hat`` of the base pose and ``mu_hat`` of the locked velocity; the
controller uses ``mu_hat_o = Ad_eta^-1 mu_hat``, the estimate of ``mu``
expressed in the base frame {1} (the paper's transport operator).

Continuous observer (eq. 37, 42, 51; ``eta = g_hat^-1 g1``, ``eps = log(eta)``)::

    g_hat_dot = g_hat (mu_hat - Ad_eta A_l qdot + Ad_eta K eps)^                      (37)
    M_b Ad_eta^-1 mu_hat_dot = -(1/2 P(qdot) - ad~_(M_b mu_hat_o)) mu_hat_o
                               -(1/2 S(mu_hat_o) + ad~_(M_b mu_hat_o) A_l) qdot
                               + F_o - M_b ad_(K eps) mu_hat_o                        (42)
    F_o = H(eps)^T L eps + P(qdot) mu_hat_o + ad_(A_l qdot)^T M_b mu_hat_o
          + M_b ad_(A_l qdot) mu_hat_o                                                 (51)

Two choices the paper leaves open, made here:

* **Gains.** ``K = k I`` as in the paper.  Eq. 51 uses ``k H^T eps``; the proof
  of Lemma 11 goes through with any constant SPD ``L`` in place of ``k I``
  (take ``W_1 = 1/2 eps^T L eps``), and the paper's "k = l = 100" suggests a
  second gain ``l``.  We use ``L = diag(l_rot I_3, l_trans I_3)``: with the
  locked inertia ``M`` the linearized error dynamics of each direction are
  ``eps'' + k eps' + (l / M) eps = 0``, so ``l`` sets the bandwidth and ``k`` the
  damping.  With ``k = l = 100`` and the orbital robot's ``M`` (60-80 kg m^2,
  317 kg) the slow pole is at ``l / (k M)``, a time constant of about a
  minute: the "large settling time" the paper mentions.  The defaults settle
  in a few seconds.
* **Slow, delayed samples.** ``eta`` needs ``g1`` at every tick.  Between
  samples the observer uses a prediction ``g1_pred`` of the measurement,
  propagated with the estimated base twist ``V1_hat = mu_hat_o - A_l qdot``
  (eq. 9); a new sample taken at ``t_s`` replaces it, carried forward from
  ``t_s`` to now with the twists since then (latency compensation).  The
  observer keeps the odometry ``D`` of the prediction (the product of its
  increments, never reset) at every tick, so carrying a sample forward is
  ``g_meas D(t_s)^-1 D(now)``: one lookup, whatever the latency.
  Between samples ``eps_dot = -k eps`` exactly (the prediction and the
  observer move with the same estimated twist), so the injection relaxes
  ``g_hat`` onto the prediction; every sample is an innovation.  With a pose
  at every tick this is the paper's observer.

Lemma 11 requires ``tr(eta(0)) != -1`` (a rotation error of pi, where the
logarithm is not unique).  The observer is initialized from the first sample
(``eta(0) = I``); an explicit initial pose with a rotation error of pi is
rejected, and a sample that would give one later resets the pose estimate onto
the sample (counted in ``resets``, as are restarts after a diverged estimate,
:meth:`reset`).

Inside, the observer works in Pinocchio's ordering (twists ``[v; omega]``, wrenches
``[force; moment]``) on 4x4 arrays it updates in place, with compiled kernels
(``compiled.py``; the SE(3) ones in ``lie.py``): the control tick calls
:meth:`MomentumObserver.advance`, :meth:`MomentumObserver.screened_error` (the health checks of
``health.py``, at most one sample folded in and the error, in one call whose Python path is the
same with or without a sample: a pose tick costs about what any tick does) and
:meth:`MomentumObserver.update_rates` with the REL kernel's buffers.  Anything unusual (an implausible
state, a sample the gate refuses, several samples) takes the checked path: :meth:`add_pose`,
:meth:`error` and ``EstimatorHealth`` in Python, with the same results.
Its public attributes and :meth:`MomentumObserver.estimate` are in the paper's notation
(4x4 poses, ``[omega; v]``).
"""
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from floating_base_control.compiled import B, F, R1, R2, R3, RI1, W1, W2, W3, WI1, kernel
from floating_base_control.conventions import swap_halves, swap_rows_and_columns
from floating_base_control.lie import (exp6_parts, log6_jlog6, rotation_angle, rotation_trace_between,
                                       se3, se3_action, se3_action_inverse, se3_between, se3_compose,
                                       se3_right_multiply)
from floating_base_control.linalg import cholesky_solve
from floating_base_control.validation import InputError

#: Smallest accepted ``1 + tr(R_eta)``: rotation errors closer to pi count as pi.
TRACE_MARGIN = 1e-6


class Estimate(NamedTuple):
    """The observer's errors and estimate at one instant."""

    eta: np.ndarray          #: g_hat^-1 g1_pred (4x4)
    eps: np.ndarray          #: log(eta), [omega; v]
    H: np.ndarray            #: H(eps), eq. 39
    mu_hat_o: np.ndarray     #: Ad_eta^-1 mu_hat: the estimate of mu in the base frame


class Error(NamedTuple):
    """:class:`Estimate` in Pinocchio's ordering, as the control tick uses it."""

    eta: np.ndarray          #: g_hat^-1 g1_pred (4x4)
    eps: np.ndarray          #: log(eta), [v; omega]
    H_T_L_eps: np.ndarray    #: H(eps)^T L eps (eqs. 39, 51), [force; moment]
    mu_hat_o: np.ndarray     #: Ad_eta^-1 mu_hat, [v; omega]


@dataclass(frozen=True)
class ObserverGains:
    """Gains of the observer (see the module docstring).  Immutable: ``L`` is derived once;
    to retune, set a new ``ObserverGains`` (as the ROS node does)."""

    k: float = 2.0            #: K = k I, eq. 37 (1/s)
    l_rot: float = 70.0       #: F_o stiffness on the rotation error, eq. 51 (N m/rad)
    l_trans: float = 300.0    #: F_o stiffness on the translation error, eq. 51 (N/m)

    def __post_init__(self):
        for name in ("k", "l_rot", "l_trans"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise InputError(f"observer gain {name} must be finite and > 0, got {value}")
        L = np.diag([self.l_rot] * 3 + [self.l_trans] * 3)      # diag(l_rot I_3, l_trans I_3), eq. 51
        L.setflags(write=False)
        object.__setattr__(self, "L", L)
        # for the compiled tick: L's diagonal in Pinocchio's order [v; omega], and -k per component
        for name, value in (("L_pin", swap_halves(np.diag(L))), ("minus_k", np.full(6, -self.k))):
            value.setflags(write=False)
            object.__setattr__(self, name, value)


@kernel(R1, R2, R1, W1)
def group_observer_twist(mu_hat, eta, w, out):
    """``V_hat = mu_hat - Ad_eta (A_l qdot - K eps)`` ([Mishra2023] eq. 37) into ``out``, Pinocchio's
    order; ``w = A_l qdot - K eps``."""
    se3_action(eta, w, out)
    for i in range(6):
        out[i] = mu_hat[i] - out[i]
    return out


@kernel(R1, R1, R2, R1, R1, W1)
def momentum_observer_force(H_T_L_eps, base_mu_mu, M_b, w, mu_hat_o, out):
    """Right-hand side of eq. 42 with ``F_o`` of eq. 51 ([Mishra2023]) into ``out``, Pinocchio's order.

    ``F_o`` was designed to cancel the ``qdot`` terms of eq. 42: ``P(qdot) mu_hat_o`` and
    ``ad~_(M_b mu_hat_o) A_l qdot`` (what ``1/2 P(qdot) mu_hat_o + 1/2 S(mu_hat_o) qdot`` sums to,
    eq. 27) appear in both with opposite signs.  What is left, with ``w = A_l qdot - K eps``::

        ad~_(M_b mu_hat_o) mu_hat_o + H^T L eps + M_b ad_w mu_hat_o

    where ``ad~_(M_b mu) mu = -base_mu_mu`` (the REL terms' ``(mu, mu)`` base forces) and
    ``ad_w mu = [w_omega x mu_v + w_v x mu_omega; w_omega x mu_omega]``.
    """
    v0, v1, v2, w0, w1, w2 = w[0], w[1], w[2], w[3], w[4], w[5]
    m0, m1, m2, n0, n1, n2 = mu_hat_o[0], mu_hat_o[1], mu_hat_o[2], mu_hat_o[3], mu_hat_o[4], mu_hat_o[5]
    bracket = (w1 * m2 - w2 * m1 + v1 * n2 - v2 * n1, w2 * m0 - w0 * m2 + v2 * n0 - v0 * n2,
               w0 * m1 - w1 * m0 + v0 * n1 - v1 * n0, w1 * n2 - w2 * n1, w2 * n0 - w0 * n2, w0 * n1 - w1 * n0)
    for i in range(6):
        out[i] = H_T_L_eps[i] - base_mu_mu[i] + (M_b[i, 0] * bracket[0] + M_b[i, 1] * bracket[1]
                                                 + M_b[i, 2] * bracket[2] + M_b[i, 3] * bracket[3]
                                                 + M_b[i, 4] * bracket[4] + M_b[i, 5] * bracket[5])
    return out


@kernel(R2, R2, R1, R1, W2, W1, W2, W1, W1)
def observer_error(g_hat, g_pred, mu_hat, L, eta, eps, J, H_T_L_eps, mu_hat_o):
    """The observer's errors (eqs. 37-39, 51) into the buffers: ``eta = g_hat^-1 g1_pred``,
    ``eps = log(eta)``, ``J = H(eps)`` (Pinocchio's ``Jlog6``), ``H^T L eps`` and
    ``mu_hat_o = Ad_eta^-1 mu_hat``."""
    se3_between(g_hat, g_pred, eta)
    log6_jlog6(eta, eps, J)
    for j in range(6):
        H_T_L_eps[j] = 0.0
    for i in range(6):
        L_eps = L[i] * eps[i]
        for j in range(6):
            H_T_L_eps[j] += L_eps * J[i, j]
    se3_action_inverse(eta, mu_hat, mu_hat_o)


@kernel(R1, R1, R1, R1, R1, R2, R2, R2, R1, R1, W2, W1, W2)
def observer_rates(eps, minus_k, A_qdot, H_T_L_eps, base_mu_mu, M_b, M_b_chol, eta, mu_hat, mu_hat_o,
                   rates, V1_hat, scratch):
    """``rates = [V_hat; mu_hat_dot]`` of eqs. 37 and 42 and the estimated base twist
    ``V1_hat = mu_hat_o - A_l qdot`` (eq. 9), with ``w = A_l qdot - K eps``; ``scratch``: 2x6."""
    w, rhs = scratch[0], scratch[1]
    for i in range(6):
        w[i] = eps[i] * minus_k[i] + A_qdot[i]
        V1_hat[i] = mu_hat_o[i] - A_qdot[i]
    momentum_observer_force(H_T_L_eps, base_mu_mu, M_b, w, mu_hat_o, rhs)
    group_observer_twist(mu_hat, eta, w, rates[0])
    se3_action(eta, cholesky_solve(M_b_chol, rhs), rates[1])


@kernel(F, R2, R1, W3, W1)
def observer_advance(dt, rates, V1_hat, poses, mu_hat):
    """A Lie-Euler step of ``dt`` (eqs. 37, 42 and the prediction, eq. 9): ``g_hat exp(V_hat dt)``,
    ``mu_hat + mu_hat_dot dt``, and ``exp(V1_hat dt)`` applied to the prediction and the odometry
    (``poses = [g_hat, g1_pred, D]``)."""
    R, p = exp6_parts(rates[0], dt)
    se3_right_multiply(poses[0], R, p)
    for i in range(6):
        mu_hat[i] += rates[1, i] * dt
    R, p = exp6_parts(V1_hat, dt)
    se3_right_multiply(poses[1], R, p)
    se3_right_multiply(poses[2], R, p)


@kernel(R1, R1, R2, R3, RI1, R2, F, W2)
def odometry_at(start, dt, V1, D, span, now, t, out):
    """``D(t)`` into ``out``: the prediction's odometry at ``t`` from the increments of rows
    ``span = [head, tail)`` of a :class:`PredictionHistory` (an older ``t`` counts as their start, a later
    one as ``now``)."""
    head, tail = span[0], span[1]
    lo, hi = head, tail                     # the first row starting after t
    while lo < hi:
        mid = (lo + hi) // 2
        if start[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    if i < head:
        out[:] = D[head] if tail > head else now
    elif t - start[i] == 0.0:               # samples taken on a tick
        out[:] = D[i]
    elif t - start[i] < dt[i]:
        out[:] = D[i]
        R, p = exp6_parts(V1[i], t - start[i])
        se3_right_multiply(out, R, p)
    else:
        out[:] = D[i + 1] if i + 1 < tail else now
    return out


@kernel(R1, R1, R2, R3, RI1, R2, F, R2, R2, R2, W2)
def carry_sample(start, dt, V1, D, span, now, t_meas, g_meas, g_pred, g_hat, carried):
    """A sample ``g_meas`` taken at ``t_meas`` carried forward to now, ``g_meas D(t_meas)^-1 D(now)``
    (latency compensation: :func:`odometry_at` over a :class:`PredictionHistory`'s rows), into
    ``carried``.  Returns, of the residual ``g_pred^-1 carried``, the angle of its rotation and the length
    of its translation (the innovation), and ``tr`` of the rotation of ``g_hat^-1 carried`` (Lemma 11's
    condition)."""
    odometry_at(start, dt, V1, D, span, now, t_meas, carried)
    se3_between(carried, now, carried)
    se3_compose(g_meas, carried, carried)
    d0, d1, d2 = carried[0, 3] - g_pred[0, 3], carried[1, 3] - g_pred[1, 3], carried[2, 3] - g_pred[2, 3]
    return (rotation_angle(rotation_trace_between(g_pred, carried)), math.sqrt(d0 * d0 + d1 * d1 + d2 * d2),
            rotation_trace_between(g_hat, carried))


#: :func:`implausibility` codes
PLAUSIBLE, NON_FINITE, TOO_FAST = 0, 1, 2


@kernel(R2, R1, F, F)
def implausibility(g_hat, mu_hat, max_angular_rate, max_speed):
    """:data:`NON_FINITE` if an entry of ``g_hat`` or ``mu_hat = [v; omega]`` is not finite (their sum is
    not), :data:`TOO_FAST` if ``|omega|`` or ``|v|`` exceeds its bound, else :data:`PLAUSIBLE`."""
    total = 0.0
    for i in range(4):
        for j in range(4):
            total += g_hat[i, j]
    omega2 = mu_hat[3] * mu_hat[3] + mu_hat[4] * mu_hat[4] + mu_hat[5] * mu_hat[5]
    v2 = mu_hat[0] * mu_hat[0] + mu_hat[1] * mu_hat[1] + mu_hat[2] * mu_hat[2]
    if not math.isfinite(total + omega2 + v2):
        return NON_FINITE
    if omega2 > max_angular_rate * max_angular_rate or v2 > max_speed * max_speed:
        return TOO_FAST
    return PLAUSIBLE


@kernel(F, F, F)
def innovation_size(theta, distance, length):
    """The size of a pose sample's residual against the prediction (``health.py``):
    ``sqrt(theta^2 + (distance / length)^2)`` of its rotation angle ``theta`` and translation length
    ``distance``, ``length`` the robot's characteristic length (``distance`` NaN: an attitude-only sample,
    whose rotation is all it says)."""
    if not math.isfinite(distance):
        return theta if math.isfinite(theta) else math.inf
    return math.hypot(theta, distance / length)


#: :func:`observer_screen` codes: no sample, a sample folded in, anything unusual (nothing changed)
SCREENED, SCREENED_SAMPLE, UNUSUAL = 0, 1, 2


@kernel(R1, R1, R2, R3, RI1, W3, R1, R2, F, F, B, F, F, F, F, F, R1, W2, W1, W2, W1, W1, W2)
def observer_screen(start, dt, V1, D, span, poses, mu_hat, g_meas, t_meas, t_now, has_sample, max_angular_rate,
                    max_speed, history_s, threshold, length, L, eta, eps, J, H_T_L_eps, mu_hat_o, carried):
    """The common tick of the estimate's health checks (``health.py``) and the observer, in one call:
    the state is plausible (:func:`implausibility`), the sample ``g_meas`` taken at ``t_meas`` (if
    ``has_sample``) is within the history, passes the innovation gate and leaves Lemma 11's condition
    intact, so it replaces the prediction as :meth:`MomentumObserver.add_pose` does; then
    :func:`observer_error` into the buffers.  Returns :data:`SCREENED` or :data:`SCREENED_SAMPLE`, or
    :data:`UNUSUAL`, having changed nothing, for the checked path to handle with its counts and reasons.
    ``poses = [g_hat, g1_pred, D]``, ``carried``: 4x4 scratch.

    A tick without a sample does the sample's work too, on ``g_meas`` as if taken in the middle of the newest
    increment, and discards it: a constant-time tick, as real-time code is written, whose usual case is its
    worst.  Run on 1 % of the ticks only, that code is out of the caches when a sample comes: the sample's part
    of the call then took 4-8 us instead of about 1 (measured in the orbital scenario's loop)."""
    if implausibility(poses[0], mu_hat, max_angular_rate, max_speed) != PLAUSIBLE:
        return UNUSUAL
    if has_sample and t_now - t_meas > history_s:
        return UNUSUAL
    head, tail = span[0], span[1]
    if not has_sample and tail > head:
        t_meas = start[tail - 1] + 0.5 * dt[tail - 1]
    theta, distance, eta_trace = carry_sample(start, dt, V1, D, span, poses[2], t_meas, g_meas, poses[1], poses[0],
                                              carried)
    size = innovation_size(theta, distance, length)
    if has_sample:
        if size > threshold or not 1.0 + eta_trace > TRACE_MARGIN:
            return UNUSUAL
        if math.isfinite(distance):
            poses[1, :, :] = carried
        else:                                   # attitude only: the prediction's translation stays
            poses[1, :3, :3] = carried[:3, :3]
    observer_error(poses[0], poses[1], mu_hat, L, eta, eps, J, H_T_L_eps, mu_hat_o)
    return SCREENED_SAMPLE if has_sample else SCREENED


_NO_SAMPLE = np.eye(4)
_NO_SAMPLE.flags.writeable = False


def _pose(g):
    """A 4x4 float array of a pose given as an array or a ``pin.SE3``."""
    return g.homogeneous if isinstance(g, pin.SE3) else np.asarray(g, dtype=float)


@kernel(W1, W1, W2, W3, WI1, F, F, F, R1, R2)
def record_increment(start, dt, V1, D, span, horizon, t0, dt0, V1_0, D0):
    """:meth:`PredictionHistory.record` on its arrays (room for one more row); ``span = [head, tail]``
    is updated in place."""
    head, tail = span[0], span[1]
    while head < tail and start[head] < horizon:
        head += 1
    if t0 >= horizon:                       # (after a gap beyond the history: none kept)
        start[tail], dt[tail] = t0, dt0
        V1[tail] = V1_0
        D[tail] = D0
        tail += 1
    span[0], span[1] = head, tail


class PredictionHistory:
    """The prediction's increments within the observer's history, oldest first, in preallocated arrays
    (a tick writes one row and allocates nothing; the arrays grow, rarely, when the history outgrows
    half of them, and the live rows move to the front when they reach the end).

    Rows ``head .. tail - 1``: ``start`` time, duration ``dt``, the estimated twist ``V1`` (eq. 9,
    Pinocchio's order) and the odometry ``D`` at the start (4x4; ``D`` is the product of every
    increment of the prediction, never reset).
    """

    def __init__(self, capacity=1024):
        self.start, self.dt = np.zeros(capacity), np.zeros(capacity)
        self.V1, self.D = np.zeros((capacity, 6)), np.zeros((capacity, 4, 4))
        self.span = np.zeros(2, dtype=np.int64)         # [head, tail]: the kernel moves them

    @property
    def head(self):
        return int(self.span[0])

    @property
    def tail(self):
        return int(self.span[1])

    def __len__(self):
        return self.tail - self.head

    def record(self, start, dt, V1, D, horizon):
        """Forget the increments that start before ``horizon``, then append one (``D``: 4x4, copied) unless
        it starts before ``horizon`` too."""
        if self.tail == len(self.start):
            self._make_room()
        record_increment(self.start, self.dt, self.V1, self.D, self.span, horizon, start, dt, V1, D)

    def clear(self):
        self.span[:] = 0

    def _make_room(self):
        """Move the live rows to the front, into arrays twice as long if they fill half of these."""
        live = slice(self.head, self.tail)
        n = self.tail - self.head
        arrays = (self.start, self.dt, self.V1, self.D)
        if 2 * n > len(self.start):
            self.start, self.dt, self.V1, self.D = (np.zeros((2 * len(a),) + a.shape[1:]) for a in arrays)
        for old, new in zip(arrays, (self.start, self.dt, self.V1, self.D)):
            new[:n] = old[live]
        self.span[:] = 0, n


class MomentumObserver:
    """SE(3) group observer (eq. 37) and Euler-Poincare observer (eq. 42) of [Mishra2023].

    At every tick: :meth:`advance` to the current time (with the rates of the
    previous tick), :meth:`add_pose` for each new sample, read
    :meth:`error` (or :meth:`estimate`), then :meth:`update_rates` with the REL
    terms at ``(q, qdot, mu_hat_o)``.
    """

    def __init__(self, gains=None, history_s=2.0):
        self.gains = gains or ObserverGains()
        self.history_s = history_s
        # rows for twice the history of a 1 kHz loop: there, the arrays never grow and the live rows
        # move to the front once per history_s
        self._intervals = PredictionHistory(max(64, math.ceil(2000 * history_s)))
        # [g_hat, g1_pred, D now] as 4x4 poses, which the compiled tick updates in place; _g_hat and
        # _g_pred are views of the first two (None: not set yet); D is the product of every increment
        self._poses = np.zeros((3, 4, 4))
        self._poses[:] = np.eye(4)
        self._odometry = self._poses[2]
        self._steps_taken = 0                 # advance() steps: D changes with each
        self._carried = None                  # (g_meas, t_meas, steps) of the last sample + carry_sample's
        self._g_hat = self._g_pred = None
        self._mu_hat = np.zeros(6)      # [v; omega]
        self.t = None
        self.resets = 0
        self.samples = 0
        self._rates = None
        # the tick's scratch (Pinocchio's order): error(), update_rates() and advance() fill these
        self._eta, self._eps, self._J, self._H_T_L_eps = np.eye(4), np.zeros(6), np.zeros((6, 6)), np.zeros(6)
        self._rate_rows = np.zeros((2, 6))          # [V_hat; mu_hat_dot] (eqs. 37, 42)
        self._screened = np.eye(4)                  # observer_screen's carried sample
        self._scratch = np.zeros((2, 6))

    # -- the paper's notation at the edge -------------------------------------------

    @property
    def g_hat(self):
        """Estimated base pose (4x4, a copy), ``None`` before the first sample."""
        return None if self._g_hat is None else self._g_hat.copy()

    @g_hat.setter
    def g_hat(self, g):
        self._g_hat = None if g is None else self._set_pose(0, g)

    @property
    def g_hat_se3(self):
        """``g_hat`` as a ``pin.SE3`` (a new one at each call)."""
        return se3(self._g_hat)

    @property
    def g_pred(self):
        """Prediction of the measured pose at the current time (4x4, a copy)."""
        return None if self._g_pred is None else self._g_pred.copy()

    @g_pred.setter
    def g_pred(self, g):
        self._g_pred = None if g is None else self._set_pose(1, g)

    def _set_pose(self, k, g):
        """Pose ``k`` of ``[g_hat, g1_pred]`` set to ``g`` (4x4 or ``pin.SE3``); returns its view."""
        self._poses[k] = _pose(g)
        return self._poses[k]

    @property
    def mu_hat(self):
        """Estimated locked velocity ``[omega; v]`` (a copy)."""
        return swap_halves(self._mu_hat)

    @mu_hat.setter
    def mu_hat(self, mu):
        self._mu_hat = swap_halves(np.array(mu, dtype=float))

    def implausibility(self, max_angular_rate, max_speed):
        """:func:`implausibility` of the estimate (initialized; checked at every tick)."""
        return implausibility(self._g_hat, self._mu_hat, max_angular_rate, max_speed)

    @property
    def history(self):
        """The prediction's increments ``(t, dt, V1_hat [omega; v])`` within ``history_s``."""
        h = self._intervals
        return [(float(h.start[i]), float(h.dt[i]), swap_halves(h.V1[i])) for i in range(h.head, h.tail)]

    @property
    def initialized(self):
        return self._g_hat is not None

    def initialize(self, g_hat, mu_hat, t):
        """Start from an explicit estimate (the first sample is then the measurement).

        Rejects ``g_hat`` if its rotation differs from the prediction's by pi.
        """
        g_hat = _pose(g_hat)
        if self._g_pred is not None and not self._trace_ok(g_hat, self._g_pred):
            raise InputError("initial pose estimate is at a rotation error of pi from the measurement: "
                             "tr(eta(0)) = -1 is excluded by Lemma 11")
        self.g_hat, self.mu_hat, self.t = g_hat, mu_hat, t
        if self._g_pred is None:
            self.g_pred = g_hat

    def add_pose(self, g_meas, t_meas, t_now):
        """A base pose sample taken at ``t_meas`` (older than ``t_now`` by the sensor latency).

        A sample with a NaN translation is attitude only (e.g. a star tracker): its translation
        is chosen so that the carried-forward sample has the prediction's, so only the attitude
        is an innovation (compensation needs only the angular part of mu: ``control/shape.py``).
        """
        self.samples += 1
        if not self.initialized:
            g0 = np.array(_pose(g_meas))
            if not all(map(math.isfinite, g0[:3, 3].tolist())):
                g0[:3, 3] = 0.0
            self.g_pred = g0
            self.initialize(g0, self.mu_hat, t_now)
            return
        g, _, distance, eta_trace = self._carry_forward(g_meas, t_meas)
        if math.isfinite(distance):
            self._g_pred[:] = g
        else:                                   # attitude only: the prediction's translation stays
            self._g_pred[:3, :3] = g[:3, :3]
        if not 1.0 + eta_trace > TRACE_MARGIN:
            self.g_hat = self._g_pred
            self.resets += 1

    def _carry_forward(self, g_meas, t_meas):
        """What :func:`carry_sample` says of the sample ``g_meas`` (4x4) taken at ``t_meas``: the sample
        carried forward to now and three numbers of it.  Kept until the prediction moves: the innovation
        gate and :meth:`add_pose` ask for the same sample."""
        carried = self._carried
        if (carried is None or carried[0] is not g_meas or carried[1] != t_meas
                or carried[2] != self._steps_taken):
            h, g = self._intervals, np.empty((4, 4))
            numbers = carry_sample(h.start, h.dt, h.V1, h.D, h.span, self._odometry, t_meas, _pose(g_meas),
                                   self._g_pred, self._g_hat, g)
            carried = self._carried = (g_meas, t_meas, self._steps_taken, g) + numbers
        return carried[3:]

    def carry_forward(self, g_meas, t_meas):
        """A sample (4x4) taken at ``t_meas`` moved to the current time with the prediction's
        increments since then (latency compensation); 4x4."""
        return self._carry_forward(g_meas, t_meas)[0].copy()

    def innovation(self, g_meas, t_meas):
        """``(theta, distance)`` of the residual ``g1_pred^-1 g``, ``g`` the sample (4x4) taken at
        ``t_meas`` carried forward to now: its rotation angle (rad) and translation (m; NaN for an
        attitude-only sample)."""
        return self._carry_forward(g_meas, t_meas)[1:3]

    @staticmethod
    def _trace_ok(a, b):
        """``1 + tr(R_a^T R_b) > TRACE_MARGIN``: the rotation of ``a^-1 b`` is not pi (4x4 poses)."""
        return 1.0 + rotation_trace_between(a, b) > TRACE_MARGIN

    def estimate(self):
        """:class:`Estimate` at the current time (observer must be initialized)."""
        e = self.error()
        return Estimate(e.eta.copy(), swap_halves(e.eps), swap_rows_and_columns(self._J), swap_halves(e.mu_hat_o))

    # -- the control tick (Pinocchio's order) -----------------------------------------

    def error(self):
        """:class:`Error` at the current time (observer must be initialized).  ``eta``, ``eps`` and
        ``H_T_L_eps`` are the observer's buffers: valid until the next call."""
        mu_hat_o = np.empty(6)                    # a new array: the tick's output keeps it
        observer_error(self._g_hat, self._g_pred, self._mu_hat, self.gains.L_pin, self._eta, self._eps, self._J,
                       self._H_T_L_eps, mu_hat_o)
        return Error(self._eta, self._eps, self._H_T_L_eps, mu_hat_o)

    def screened_error(self, sample, t_now, max_angular_rate, max_speed, threshold, length):
        """:func:`observer_screen` at ``t_now`` with the sample ``(t_taken, g_meas)`` (or ``None``) and the
        health checks' bounds: the :class:`Error` after the sample is folded in, or ``None`` if anything
        is unusual (nothing changed: the checked path, ``EstimatorHealth`` and :meth:`add_pose`, takes the
        tick).  The observer must be initialized."""
        t_meas, g_meas = (0.0, _NO_SAMPLE) if sample is None else (sample[0], _pose(sample[1]))
        h, mu_hat_o = self._intervals, np.empty(6)       # a new array: the tick's output keeps it
        code = observer_screen(h.start, h.dt, h.V1, h.D, h.span, self._poses, self._mu_hat, g_meas, t_meas, t_now,
                               sample is not None, max_angular_rate, max_speed, self.history_s, threshold, length,
                               self.gains.L_pin, self._eta, self._eps, self._J, self._H_T_L_eps, mu_hat_o,
                               self._screened)
        if code == UNUSUAL:
            return None
        if code == SCREENED_SAMPLE:
            self.samples += 1
        return Error(self._eta, self._eps, self._H_T_L_eps, mu_hat_o)

    def update_rates(self, error, ws, A_qdot, base_mu_mu):
        """Rates of eqs. 37, 42 and of the prediction (eq. 9) at the current state, stored for the
        next :meth:`advance`.  ``ws`` holds the factor of ``M_b`` (``rel_fast.locked_inertia_factor``
        at the current shape); ``A_qdot`` and ``base_mu_mu`` are REL terms at ``(q, qdot, mu_hat_o)``,
        all in Pinocchio's order.  Returns the estimated base twist ``V1_hat`` (eq. 9)."""
        V1_hat = np.empty(6)                      # a new array: the tick's output keeps it
        observer_rates(error.eps, self.gains.minus_k, A_qdot, error.H_T_L_eps, base_mu_mu, ws.M_b, ws.M_b_chol,
                       error.eta, self._mu_hat, error.mu_hat_o, self._rate_rows, V1_hat, self._scratch)
        self._rates = (self._rate_rows, V1_hat)
        return V1_hat

    def resync(self, t):
        """Resume at ``t`` without integrating the gap (inputs were unusable until now)."""
        if self.initialized:
            self.t, self._rates = t, None

    def reset(self):
        """Forget the estimate (e.g. after it diverged): the next pose sample initializes again."""
        self._intervals.clear()
        self._g_hat = self._g_pred = self.t = self._rates = self._carried = None
        self._mu_hat = np.zeros(6)
        self.resets += 1

    def healthy(self):
        """The estimate is finite (an uninitialized observer is healthy)."""
        return not self.initialized or bool(np.isfinite(self._g_hat).all()
                                            and np.isfinite(self._mu_hat).all())

    def advance(self, t):
        """Integrate from the last time to ``t`` with the stored rates (Lie-Euler step).

        Without rates (just initialized or resynchronized) or with a clock that went back,
        the observer only moves its time to ``t``: it never integrates an interval with
        rates from outside it.
        """
        dt = t - self.t
        if self._rates is None or dt <= 0:
            self.t = t
            return
        rate_rows, V1_hat = self._rates
        self._intervals.record(self.t, dt, V1_hat, self._odometry, t - self.history_s)
        observer_advance(dt, rate_rows, V1_hat, self._poses, self._mu_hat)
        self._steps_taken += 1
        self.t = t
