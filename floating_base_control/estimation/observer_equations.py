"""The equations of the base state observer of the orbital robot, [Mishra2023] Sec. V-A1-2 (eqs. 37-42, 51),
as the control tick's compiled kernels (the observer that runs them is ``observer.py``).

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
  (eq. 9); a new sample taken at ``t_s`` replaces it (:func:`fold_sample`), carried forward from
  ``t_s`` to now with the twists since then (latency compensation, ``prediction.py``).
  Between samples ``eps_dot = -k eps`` exactly (the prediction and the
  observer move with the same estimated twist), so the injection relaxes
  ``g_hat`` onto the prediction; every sample is an innovation.  With a pose
  at every tick this is the paper's observer.

Lemma 11 requires ``tr(eta(0)) != -1`` (a rotation error of pi, where the logarithm is not unique):
:func:`lemma_11_holds`.

The kernels work in Pinocchio's order (twists ``[v; omega]``, wrenches ``[force; moment]``) on 4x4
poses they update in place, with the compiled SE(3) kernels of ``lie.py``; the observer converts at its
edge (``conventions.py``).
"""
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from floating_base_control.compiled import F, R1, R2, W1, W2, kernel
from floating_base_control.conventions import swap_halves
from floating_base_control.lie import (exp6_parts, log6_jlog6, se3_action, se3_action_inverse, se3_between,
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
    """:class:`Estimate` in Pinocchio's order, as the control tick uses it."""

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
        # for the kernels: L's diagonal in their order, and -k per component
        for name, value in (("L_pin", swap_halves(np.diag(L))), ("minus_k", np.full(6, -self.k))):
            value.setflags(write=False)
            object.__setattr__(self, name, value)


@kernel(R1, R2, R1, W1)
def group_observer_twist(mu_hat, eta, w, out):
    """``V_hat = mu_hat - Ad_eta (A_l qdot - K eps)`` ([Mishra2023] eq. 37) into ``out``; ``w = A_l qdot - K eps``."""
    se3_action(eta, w, out)
    for i in range(6):
        out[i] = mu_hat[i] - out[i]
    return out


@kernel(R1, R1, R2, R1, R1, W1)
def momentum_observer_force(H_T_L_eps, base_mu_mu, M_b, w, mu_hat_o, out):
    """Right-hand side of eq. 42 with ``F_o`` of eq. 51 ([Mishra2023]) into ``out``.

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


@kernel(F, R2, R1, W2, W2, W2, W1)
def observer_advance(dt, rates, V1_hat, g_hat, g_pred, D, mu_hat):
    """A Lie-Euler step of ``dt`` (eqs. 37, 42 and the prediction, eq. 9): ``g_hat exp(V_hat dt)``,
    ``mu_hat + mu_hat_dot dt``, and ``exp(V1_hat dt)`` applied to the prediction ``g_pred`` and its
    odometry ``D``."""
    R, p = exp6_parts(rates[0], dt)
    se3_right_multiply(g_hat, R, p)
    for i in range(6):
        mu_hat[i] += rates[1, i] * dt
    R, p = exp6_parts(V1_hat, dt)
    se3_right_multiply(g_pred, R, p)
    se3_right_multiply(D, R, p)


@kernel(R2, R1)
def estimate_norms(g_hat, mu_hat):
    """What the health gate judges the estimate by: the sum of the entries of ``g_hat`` and the squared
    norms ``|omega|^2`` and ``|v|^2`` of ``mu_hat = [v; omega]``."""
    total = 0.0
    for i in range(4):
        for j in range(4):
            total += g_hat[i, j]
    omega2 = mu_hat[3] * mu_hat[3] + mu_hat[4] * mu_hat[4] + mu_hat[5] * mu_hat[5]
    v2 = mu_hat[0] * mu_hat[0] + mu_hat[1] * mu_hat[1] + mu_hat[2] * mu_hat[2]
    return total, omega2, v2


@kernel(F)
def lemma_11_holds(trace):
    """``1 + tr(R) > TRACE_MARGIN`` for the rotation ``R`` of ``eta``: it is not a rotation by pi
    ([Mishra2023] Lemma 11 excludes ``tr(eta) = -1``)."""
    return 1.0 + trace > TRACE_MARGIN


@kernel(W2, R2, F)
def fold_sample(g_pred, carried, distance):
    """A sample carried forward to now replaces the prediction ``g_pred``; an attitude-only sample (its
    ``distance`` to the prediction NaN: no translation) replaces its rotation only."""
    if math.isfinite(distance):
        g_pred[:, :] = carried
    else:
        g_pred[:3, :3] = carried[:3, :3]
