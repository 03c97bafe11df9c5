"""Joint trajectory tracking on the reduced shape dynamics of a free-floating robot ([Mishra2023] eq. 18).

With the momentum compensation of eq. 45 (``tau = tau_c + tau_hat_i``) and ``F1 = 0``
the shape row of eq. 18 reads ``Lambda_q qddot + Gamma_q(qdot) qdot + B~(mu) qdot = tau_c``
(``i = 2``; for ``i = 1`` the ``B~`` term is cancelled too).  The tracking law is
the PD+ law of Paden and Panja on these terms (see docs/explanation/orbital.md, "Tracking")::

    tau_c = Lambda_q(q) qddot_r + Gamma_q(q, qdot) qdot_r + B~(q, mu_hat) qdot_r - K e - D edot,
    e = q - q_r,  edot = qdot - qdot_r

The CC terms are the matrices of Theorem 1 applied to the reference velocity:
``Gamma_q(qdot)`` is a factorization with ``y^T (dLambda_q/dt - 2 Gamma_q) y = 0``
(Prop. 3, 2nd) and ``B~(mu)`` is skew-symmetric (Prop. 3, 4th), which is what the
Lyapunov argument needs.  ``B~ qdot_r`` is added only with ``tau2``/``truth``
(``tau_hat_1`` already contains ``B~ qdot``); without compensation no momentum term
is used.  For a constant reference the law is eq. 52.

``Gamma_q(qdot) y`` comes from Pinocchio's Coriolis matrix ``C(q, V)`` of the full
system (``dM/dt - 2C`` skew): with ``V(x) = [-A_l x; x]`` (eq. 9 at ``mu = 0``),
``Gamma_q(qdot) y = [-A_l^T, I] C(q, V(qdot)) V(y)``, the shape block of
``L^T (M L_dot + C L)`` (its ``M L_dot`` part vanishes on the shape row because
``M_bq = M_b A_l``); so ``Gamma_q(qdot) qdot`` is eq. 18's ``Gamma~'_q(qdot) qdot``.
``B~(mu) y`` is the ``(mu, y)`` cross term of the CC forces, by polarization as in
``dynamics/rel_fast.py``.
"""
import numpy as np
import pinocchio as pin

from floating_base_control.conventions import swap_halves


class CCWorkspace:
    """Preallocated Pinocchio data for the CC products of this module (one per task)."""

    def __init__(self, model):
        self.pin_model = model.cc_pin_model
        self.data = self.pin_model.createData()
        self.q_pin = pin.neutral(self.pin_model)
        self.v = np.zeros(self.pin_model.nv)
        self.w = np.zeros(self.pin_model.nv)


def _shape_row(c, A_l):
    """Shape row ``c_q - A_l^T c_b`` of Pinocchio's joint-space forces ``c``.  (``rel_fast.shape_row`` sums in
    another order: its last bits differ, and the trajectory task's recorded results are these.)"""
    return c[6:] - A_l.T @ swap_halves(c)


def _set_velocity(v, A_l, x, mu=None):
    """Pinocchio's velocity ``v`` of ``[mu; 0] + [-A_l x; x]``."""
    v[:6], v[6:] = -swap_halves(A_l @ x), x
    if mu is not None:
        v[:6] += swap_halves(mu)


def reduced_shape_coriolis_product(ws, q, A_l, qdot, y):
    """``Gamma_q(q, qdot) y``: the shape CC matrix of eq. 18 at ``qdot`` applied to ``y``."""
    ws.q_pin[7:] = q
    _set_velocity(ws.v, A_l, qdot)
    C = pin.computeCoriolisMatrix(ws.pin_model, ws.data, ws.q_pin, ws.v)
    _set_velocity(ws.w, A_l, y)
    return _shape_row(C @ ws.w, A_l)


def gyroscopic_product(ws, q, A_l, mu, y):
    """``B~(q, mu) y`` (eq. 19e): the ``(mu, y)`` CC torques of eq. 18's shape row."""
    ws.q_pin[7:] = q
    pm, pd, qp = ws.pin_model, ws.data, ws.q_pin
    _set_velocity(ws.v, A_l, y, mu)
    c = pin.nonLinearEffects(pm, pd, qp, ws.v).copy()
    _set_velocity(ws.v, A_l, y)
    c -= pin.nonLinearEffects(pm, pd, qp, ws.v)
    _set_velocity(ws.v, A_l, np.zeros_like(y), mu)
    c -= pin.nonLinearEffects(pm, pd, qp, ws.v)
    return _shape_row(c, A_l)


def tracking_torque(Lambda_q, reference, q, qdot, gains, cc_reference):
    """``tau_c = Lambda_q qddot_r + cc_reference - K e - D edot`` (module doc), ``cc_reference`` the CC
    terms on the reference velocity."""
    return (Lambda_q @ reference.qddot + cc_reference - gains.stiffness * (q - reference.q)
            - gains.damping * (qdot - reference.qdot))


def reference_cc(ws, terms, q, qdot, qdot_r, mu, compensation):
    """CC terms of the tracking law on the reference velocity: ``Gamma_q(qdot) qdot_r``, plus
    ``B~(mu) qdot_r`` where the compensation law cancels the ``(mu, mu)`` CC torques but not ``B~(mu) qdot``
    (``tau2``, ``truth``; zero for a reference at rest)."""
    if not qdot_r.any():
        return np.zeros_like(qdot_r)
    cc = reduced_shape_coriolis_product(ws, q, terms.A_l, qdot, qdot_r)
    if compensation.cancels_mu_mu and not compensation.cancels_mu_qdot:
        cc += gyroscopic_product(ws, q, terms.A_l, mu, qdot_r)
    return cc


class JointTask:
    """Track a :class:`~floating_base_control.control.trajectory.TrajectoryReference` with gains
    ``(K, D)`` per joint; :meth:`torque` is the ``tau_c`` of :class:`OrbitalController`."""

    name = "joint"

    def __init__(self, model, reference, gains):
        self.reference = reference
        self.gains = gains
        self.ws = CCWorkspace(model)
        self.error = np.zeros(model.n)     #: ``q - q_r`` at the last tick

    def torque(self, t, q, qdot, terms, mu, compensation, g_hat=None):
        r = self.reference.sample(t)
        self.error = q - r.q
        cc = reference_cc(self.ws, terms, q, qdot, r.qdot, mu, compensation)
        return tracking_torque(terms.Lambda_q, r, q, qdot, self.gains, cc)
