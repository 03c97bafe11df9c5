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
  ``t_s`` to now with the twists stored since then (latency compensation).
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
"""
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..lie import Ad, Ad_inv, ad, exp, inv, log_and_H
from ..linalg import spd_solve
from ..validation import InputError

#: Smallest accepted ``1 + tr(R_eta)``: rotation errors closer to pi count as pi.
TRACE_MARGIN = 1e-6


class Estimate(NamedTuple):
    """The observer's errors and estimate at one instant."""

    eta: np.ndarray          #: g_hat^-1 g1_pred (4x4)
    eps: np.ndarray          #: log(eta), [omega; v]
    H: np.ndarray            #: H(eps), eq. 39
    mu_hat_o: np.ndarray     #: Ad_eta^-1 mu_hat: the estimate of mu in the base frame


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


class MomentumObserver:
    """SE(3) group observer (eq. 37) and Euler-Poincare observer (eq. 42) of seed 002.

    At every tick: :meth:`advance` to the current time (with the rates of the
    previous tick), :meth:`add_pose` for each new sample, read
    :meth:`estimate`, then :meth:`update` the rates with the REL terms at
    ``(q, qdot, mu_hat_o)``.
    """

    def __init__(self, gains=None, history_s=2.0):
        self.gains = gains or ObserverGains()
        self.history = deque()          # (t, dt, V1_hat): the prediction's increments
        self.history_s = history_s
        self.g_hat = None
        self.mu_hat = np.zeros(6)
        self.g_pred = None
        self.t = None
        self.resets = 0
        self.samples = 0
        self._rates = None

    @property
    def initialized(self):
        return self.g_hat is not None

    def initialize(self, g_hat, mu_hat, t):
        """Start from an explicit estimate (the first sample is then the measurement).

        Rejects ``g_hat`` if its rotation differs from the prediction's by pi.
        """
        if self.g_pred is not None and not self._trace_ok(inv(g_hat) @ self.g_pred):
            raise InputError("initial pose estimate is at a rotation error of pi from the measurement: "
                             "tr(eta(0)) = -1 is excluded by Lemma 11")
        self.g_hat, self.mu_hat, self.t = g_hat.copy(), np.array(mu_hat, dtype=float), t
        if self.g_pred is None:
            self.g_pred = g_hat.copy()

    def add_pose(self, g_meas, t_meas, t_now):
        """A base pose sample taken at ``t_meas`` (older than ``t_now`` by the sensor latency)."""
        self.samples += 1
        if not self.initialized:
            self.g_pred = g_meas.copy()
            self.initialize(g_meas, self.mu_hat, t_now)
            return
        g = g_meas.copy()
        for t, dt, V in self.history:                 # carry the sample forward to now
            overlap = t + dt - max(t, t_meas)
            if overlap > 0:
                g = g @ exp(V * overlap)
        self.g_pred = g
        if not self._trace_ok(inv(self.g_hat) @ g):
            self.g_hat = g.copy()
            self.resets += 1

    @staticmethod
    def _trace_ok(eta):
        return 1.0 + np.trace(eta[:3, :3]) > TRACE_MARGIN

    def estimate(self):
        """:class:`Estimate` at the current time (observer must be initialized)."""
        eta = inv(self.g_hat) @ self.g_pred
        return Estimate(eta, *log_and_H(eta), Ad_inv(eta) @ self.mu_hat)

    def rates(self, estimate, terms):
        """Right-hand sides of eqs. 37 and 42 and of the prediction (eq. 9) at the current state.

        ``estimate`` is :meth:`estimate`'s result and ``terms`` the REL terms at
        ``(q, qdot, mu_hat_o)``.  Returns ``(V_hat, mu_hat_dot, V1_hat)``.
        """
        k, L = self.gains.k, self.gains.L
        eta, eps, H, mu_o = estimate
        Ad_eta = Ad(eta)
        V_hat = self.mu_hat - Ad_eta @ terms.A_qdot + k * (Ad_eta @ eps)                    # eq. 37
        F_o = (H.T @ (L @ eps) + terms.P_mu + terms.IM_qdot
               + terms.M_b @ (ad(terms.A_qdot) @ mu_o))                                      # eq. 51
        rhs = -terms.base_mu_mu - terms.base_mu_qdot + F_o - k * terms.M_b @ (ad(eps) @ mu_o)  # eq. 42
        mu_hat_dot = Ad_eta @ spd_solve(terms.M_b, rhs)
        return V_hat, mu_hat_dot, mu_o - terms.A_qdot

    def update(self, estimate, terms):
        """Store the rates at the current state for the next :meth:`advance`."""
        self._rates = self.rates(estimate, terms)

    def resync(self, t):
        """Resume at ``t`` without integrating the gap (inputs were unusable until now)."""
        if self.initialized:
            self.t, self._rates = t, None

    def reset(self):
        """Forget the estimate (e.g. after it diverged): the next pose sample initializes again."""
        self.history.clear()
        self.g_hat = self.g_pred = self.t = self._rates = None
        self.mu_hat = np.zeros(6)
        self.resets += 1

    def healthy(self):
        """The estimate is finite (an uninitialized observer is healthy)."""
        return not self.initialized or bool(np.isfinite(self.g_hat).all() and np.isfinite(self.mu_hat).all())

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
        V_hat, mu_hat_dot, V1_hat = self._rates
        self.g_hat = self.g_hat @ exp(V_hat * dt)
        self.mu_hat = self.mu_hat + mu_hat_dot * dt
        self.g_pred = self.g_pred @ exp(V1_hat * dt)
        self.history.append((self.t, dt, V1_hat))
        self.t = t
        while self.history and self.history[0][0] < t - self.history_s:
            self.history.popleft()
