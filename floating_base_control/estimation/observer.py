"""Base state observer of the orbital robot: seed 002, Sec. V-A1-2 (eqs. 37-42, 51).

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

Inside, the observer works in Pinocchio's ordering on ``pin.SE3`` objects (twists
``[v; omega]``, wrenches ``[force; moment]``): the control tick calls
:meth:`MomentumObserver.error` and :meth:`MomentumObserver.update_rates` with the REL
kernel's buffers.  Its public attributes and :meth:`MomentumObserver.estimate` are in the
paper's notation (4x4 poses, ``[omega; v]``).
"""
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from ..dynamics.rel_fast import locked_inertia_solve
from ..lie import SWAP, SWAP_BOTH, ad_pin, se3
from ..validation import InputError

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

    eta: pin.SE3             #: g_hat^-1 g1_pred
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
        # for the tick: L's diagonal in Pinocchio's order [v; omega], and -k per component (an
        # array multiplies a vector faster than a Python float does)
        for name, value in (("L_pin", np.diag(L)[SWAP]), ("minus_k", np.full(6, -self.k))):
            value.setflags(write=False)
            object.__setattr__(self, name, value)


def group_observer_twist(mu_hat, Ad_eta, w, out):
    """``V_hat = mu_hat - Ad_eta (A_l qdot - K eps)`` (seed 002, eq. 37) into ``out``, Pinocchio's
    order; ``w = A_l qdot - K eps``."""
    Ad_eta.dot(w, out=out)
    return np.subtract(mu_hat, out, out=out)


def momentum_observer_force(error, M_b, w, base_mu_mu, out, scratch):
    """Right-hand side of eq. 42 with ``F_o`` of eq. 51 (seed 002) into ``out``, Pinocchio's order.

    ``F_o`` was designed to cancel the ``qdot`` terms of eq. 42: ``P(qdot) mu_hat_o`` and
    ``ad~_(M_b mu_hat_o) A_l qdot`` (what ``1/2 P(qdot) mu_hat_o + 1/2 S(mu_hat_o) qdot`` sums to,
    eq. 27) appear in both with opposite signs.  What is left, with ``w = A_l qdot - K eps``::

        ad~_(M_b mu_hat_o) mu_hat_o + H^T L eps + M_b ad_w mu_hat_o

    where ``ad~_(M_b mu) mu = -base_mu_mu`` (the REL terms' ``(mu, mu)`` base forces).
    ``scratch``: ``(6x6, 6-vector, 6-vector)``.
    """
    ad_w, bracket, inertial = scratch
    ad_pin(w, out=ad_w).dot(error.mu_hat_o, out=bracket)
    np.subtract(error.H_T_L_eps, base_mu_mu, out=out)
    out += M_b.dot(bracket, out=inertial)
    return out


class PredictionHistory:
    """The prediction's increments within the observer's history, oldest first, in preallocated arrays
    (a tick writes one row and allocates nothing; the arrays grow, rarely, when the history outgrows
    half of them, and the live rows move to the front when they reach the end).

    Rows ``head .. tail - 1``: ``start`` time, duration ``dt``, the estimated twist ``V1`` (eq. 9,
    Pinocchio's order) and the odometry ``D`` at the start (a ``pin.SE3``, kept as the object the
    observer made: never changed in place, and a sample's lookup needs no conversion; ``D`` is the
    product of every increment of the prediction, never reset).
    """

    def __init__(self, capacity=1024):
        self.start, self.dt = np.zeros(capacity), np.zeros(capacity)
        self.V1, self.D = np.zeros((capacity, 6)), [None] * capacity
        self.head = self.tail = 0

    def __len__(self):
        return self.tail - self.head

    def push(self, start, dt, V1, D):
        """Append one increment (``D``: a ``pin.SE3``)."""
        i = self.tail
        if i == len(self.start):
            i = self._make_room()
        self.start[i], self.dt[i], self.V1[i], self.D[i] = start, dt, V1, D
        self.tail = i + 1

    def drop_before(self, horizon):
        """Forget the increments that start before ``horizon``."""
        head, tail, start = self.head, self.tail, self.start
        while head < tail and start[head] < horizon:
            head += 1
        self.head = head

    def clear(self):
        self.head = self.tail = 0

    def _make_room(self):
        live = slice(self.head, self.tail)
        n = self.tail - self.head
        arrays = (self.start, self.dt, self.V1, self.D)
        if 2 * n > len(self.start):
            self.start, self.dt, self.V1 = (np.zeros((2 * len(a),) + a.shape[1:]) for a in arrays[:3])
            self.D = [None] * (2 * len(self.D))
        for old, new in zip(arrays, (self.start, self.dt, self.V1, self.D)):
            new[:n] = old[live]
        self.head, self.tail = 0, n
        return n


class MomentumObserver:
    """SE(3) group observer (eq. 37) and Euler-Poincare observer (eq. 42) of seed 002.

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
        self._odometry = pin.SE3.Identity()   # D now: the product of every increment
        self._carried = None                  # (t_meas, D now, D(t_meas)^-1 D now) of the last sample
        self._g_hat = self._g_pred = None
        self._mu_hat = np.zeros(6)      # [v; omega]
        self.t = None
        self.resets = 0
        self.samples = 0
        self._rates = None
        # the tick's scratch (Pinocchio's order): error(), update_rates() and advance() fill these
        self._eps, self._L_eps, self._H_T_L_eps, self._w, self._rhs = (np.zeros(6) for _ in range(5))
        # [V_hat; mu_hat_dot] (eqs. 37, 42) in one array: advance() scales both by dt in one operation
        self._rate_rows, self._steps = np.zeros((2, 6)), np.zeros((2, 6))
        self._V_hat, self._mu_hat_dot = self._rate_rows
        self._step = np.zeros(6)
        self._scratch = (np.zeros((6, 6)), np.zeros(6), np.zeros(6))
        self._dt = np.zeros(())

    # -- the paper's notation at the edge -------------------------------------------

    @property
    def g_hat(self):
        """Estimated base pose (4x4), ``None`` before the first sample."""
        return None if self._g_hat is None else self._g_hat.homogeneous

    @g_hat.setter
    def g_hat(self, g):
        self._g_hat = None if g is None else se3(g)

    @property
    def g_hat_se3(self):
        """``g_hat`` as a ``pin.SE3`` (never changed in place: each tick makes a new one)."""
        return self._g_hat

    @property
    def g_pred(self):
        """Prediction of the measured pose at the current time (4x4)."""
        return None if self._g_pred is None else self._g_pred.homogeneous

    @g_pred.setter
    def g_pred(self, g):
        self._g_pred = None if g is None else se3(g)

    @property
    def mu_hat(self):
        """Estimated locked velocity ``[omega; v]`` (a copy)."""
        return self._mu_hat[SWAP]

    @mu_hat.setter
    def mu_hat(self, mu):
        self._mu_hat = np.array(mu, dtype=float)[SWAP]

    def locked_speeds_squared(self):
        """``(|omega|^2, |v|^2)`` of the locked velocity estimate, as floats (checked at every tick)."""
        v1, v2, v3, w1, w2, w3 = self._mu_hat.tolist()
        return w1 * w1 + w2 * w2 + w3 * w3, v1 * v1 + v2 * v2 + v3 * v3

    def pose_finite(self):
        """The pose estimate is finite (checked at every tick: a float sum of its entries costs a fraction of
        numpy's reductions)."""
        return math.isfinite(sum(self._g_hat.homogeneous.ravel().tolist()))

    @property
    def history(self):
        """The prediction's increments ``(t, dt, V1_hat [omega; v])`` within ``history_s``."""
        h = self._intervals
        return [(float(h.start[i]), float(h.dt[i]), h.V1[i][SWAP]) for i in range(h.head, h.tail)]

    @property
    def initialized(self):
        return self._g_hat is not None

    def initialize(self, g_hat, mu_hat, t):
        """Start from an explicit estimate (the first sample is then the measurement).

        Rejects ``g_hat`` if its rotation differs from the prediction's by pi.
        """
        g_hat = se3(g_hat)
        if self._g_pred is not None and not self._trace_ok(g_hat.actInv(self._g_pred)):
            raise InputError("initial pose estimate is at a rotation error of pi from the measurement: "
                             "tr(eta(0)) = -1 is excluded by Lemma 11")
        self._g_hat, self.mu_hat, self.t = g_hat, mu_hat, t
        if self._g_pred is None:
            self._g_pred = g_hat

    def add_pose(self, g_meas, t_meas, t_now):
        """A base pose sample taken at ``t_meas`` (older than ``t_now`` by the sensor latency).

        A sample with a NaN translation is attitude only (e.g. a star tracker): its translation
        is chosen so that the carried-forward sample has the prediction's, so only the attitude
        is an innovation (compensation needs only the angular part of mu: ``control/shape.py``).
        """
        self.samples += 1
        attitude_only = isinstance(g_meas, np.ndarray) and not all(map(math.isfinite, g_meas[:3, 3].tolist()))
        if not self.initialized:
            g0 = np.array(g_meas, dtype=float)
            if attitude_only:
                g0[:3, 3] = 0.0
            self._g_pred = se3(g0)
            self.initialize(g0, self.mu_hat, t_now)
            return
        G = self._carry(t_meas)
        if attitude_only:
            g_meas = np.array(g_meas, dtype=float)
            g_meas[:3, 3] = self._g_pred.translation - g_meas[:3, :3] @ G.translation
        g = se3(g_meas) * G
        self._g_pred = g
        if not self._trace_ok(self._g_hat.actInv(g)):
            self._g_hat = g
            self.resets += 1

    def _odometry_at(self, t):
        """``D(t)``: the prediction's odometry at ``t``, within the kept increments (an older
        ``t`` counts as their start, a later one as now)."""
        h = self._intervals
        i = h.head + int(np.searchsorted(h.start[h.head:h.tail], t, side="right")) - 1
        if i < h.head:
            return h.D[h.head] if len(h) else self._odometry
        into = t - float(h.start[i])
        if into == 0.0:                 # samples taken on a tick
            return h.D[i]
        if into < h.dt[i]:
            return h.D[i] * pin.exp6(h.V1[i] * into)
        return h.D[i + 1] if i + 1 < h.tail else self._odometry

    def _carry(self, t_meas):
        """``D(t_meas)^-1 D(now)``: what carries a sample taken at ``t_meas`` forward to now.  Kept
        until the prediction moves: the innovation gate and :meth:`add_pose` ask for the same sample."""
        carried = self._carried
        if carried is None or carried[0] != t_meas or carried[1] is not self._odometry:
            carried = self._carried = (t_meas, self._odometry, self._odometry_at(t_meas).actInv(self._odometry))
        return carried[2]

    def carry_forward(self, g_meas, t_meas):
        """A sample (4x4) taken at ``t_meas`` moved to the current time with the prediction's
        increments since then (latency compensation), as :meth:`add_pose` does; 4x4."""
        return (se3(g_meas) * self._carry(t_meas)).homogeneous

    def residual(self, g_meas, t_meas):
        """``g1_pred^-1 g_meas``, the sample (4x4) carried forward to now against the prediction
        (``pin.SE3``; a NaN translation stays NaN)."""
        return self._g_pred.actInv(se3(g_meas) * self._carry(t_meas))

    @staticmethod
    def _trace_ok(eta):
        R = eta.rotation
        return 1.0 + (R[0, 0] + R[1, 1] + R[2, 2]) > TRACE_MARGIN      # np.trace costs ~10x more

    def estimate(self):
        """:class:`Estimate` at the current time (observer must be initialized)."""
        e = self.error()
        return Estimate(e.eta.homogeneous, e.eps[SWAP], pin.Jlog6(e.eta)[SWAP_BOTH], e.mu_hat_o[SWAP])

    # -- the control tick (Pinocchio's order) -----------------------------------------

    def error(self):
        """:class:`Error` at the current time (observer must be initialized).  Its vectors are the
        observer's buffers: valid until the next call."""
        eta = self._g_hat.actInv(self._g_pred)
        eps = self._eps
        eps[:] = pin.log6(eta).vector
        np.multiply(self.gains.L_pin, eps, out=self._L_eps)
        return Error(eta, eps, self._L_eps.dot(pin.Jlog6(eta), out=self._H_T_L_eps),      # (L eps)^T H
                     eta.actionInverse.dot(self._mu_hat))       # a new array: the tick's output keeps it

    def update_rates(self, error, ws, A_qdot, base_mu_mu):
        """Rates of eqs. 37, 42 and of the prediction (eq. 9) at the current state, stored for the
        next :meth:`advance`.  ``ws`` holds the factor of ``M_b`` (``rel_fast.locked_inertia_factor``
        at the current shape); ``A_qdot`` and ``base_mu_mu`` are REL terms at ``(q, qdot, mu_hat_o)``,
        all in Pinocchio's order.  Returns the estimated base twist ``V1_hat`` (eq. 9)."""
        w = np.multiply(error.eps, self.gains.minus_k, out=self._w)
        w += A_qdot
        rhs = momentum_observer_force(error, ws.M_b, w, base_mu_mu, self._rhs, self._scratch)
        Ad_eta = error.eta.action
        group_observer_twist(self._mu_hat, Ad_eta, w, self._V_hat)
        Ad_eta.dot(locked_inertia_solve(ws, rhs), out=self._mu_hat_dot)
        self._rates = (self._rate_rows, error.mu_hat_o - A_qdot)    # a new V1_hat: the history keeps it
        return self._rates[1]

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
        return not self.initialized or bool(np.isfinite(self._g_hat.homogeneous).all()
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
        dt_ = self._dt
        dt_[()] = dt                    # numpy multiplies by a 0-d array faster than by a Python float
        V_hat_dt, mu_hat_dot_dt = np.multiply(rate_rows, dt_, out=self._steps)
        self._g_hat = self._g_hat * pin.exp6(V_hat_dt)
        self._mu_hat += mu_hat_dot_dt
        increment = pin.exp6(np.multiply(V1_hat, dt_, out=self._step))
        self._g_pred = self._g_pred * increment
        horizon = t - self.history_s
        self._intervals.drop_before(horizon)
        if self.t >= horizon:                               # (after a gap beyond the history: none kept)
            self._intervals.push(self.t, dt, V1_hat, self._odometry)
        self._odometry = self._odometry * increment
        self.t = t
