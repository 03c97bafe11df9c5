"""Pinocchio's own algorithms, in the package's ordering ``[V1 = (omega, v); qdot]``.

These are the independent references: Pinocchio computes them recursively,
without any of the package's formulas.
"""
import numpy as np
import pinocchio as pin

from floating_base_control.conventions import to_pinocchio
from floating_base_control.conventions import SWAP


def perm(n):
    """Index map between ``[omega; v; qdot]`` and Pinocchio's ``[v; omega; qdot]``."""
    return np.r_[SWAP, 6 + np.arange(n)]


class PinRef:
    """Pinocchio at a state ``(g1, q, V1, qdot)``; gravity zero unless asked."""

    def __init__(self, model, q, V1=None, qdot=None, g1=None, gravity=False):
        self.pm = pin.Model(model.pin_model)
        if not gravity:
            self.pm.gravity = pin.Motion.Zero()
        self.pd = self.pm.createData()
        self.n = model.n
        self.p = perm(model.n)
        g1 = np.eye(4) if g1 is None else g1
        V1 = np.zeros(6) if V1 is None else V1
        qdot = np.zeros(model.n) if qdot is None else qdot
        self.q_pin, self.v_pin = to_pinocchio(g1, q, V1, qdot)

    def _mat(self, M):
        return M[np.ix_(self.p, self.p)].copy()

    def M(self):
        return self._mat(pin.crba(self.pm, self.pd, self.q_pin))

    def C(self, V=None):
        v = self.v_pin if V is None else V[self.p]
        return self._mat(pin.computeCoriolisMatrix(self.pm, self.pd, self.q_pin, v))

    def M_dot(self, qdot):
        """Exact ``dM/dt`` along ``qdot`` (Pinocchio's C satisfies ``M_dot = C + C^T``)."""
        C = self.C(np.r_[np.zeros(6), qdot])
        return C + C.T

    def nle(self, V=None):
        v = self.v_pin if V is None else V[self.p]
        return pin.nonLinearEffects(self.pm, self.pd, self.q_pin, v)[self.p].copy()

    def aba(self, tau, F1=None):
        """Generalized acceleration ``[V1_dot; qddot]`` under joint torques and a base wrench."""
        F1 = np.zeros(6) if F1 is None else F1
        u = np.r_[F1, tau][self.p]
        return pin.aba(self.pm, self.pd, self.q_pin, self.v_pin, u)[self.p].copy()


def connection_rate(kin, M_dot):
    """Exact ``A_l_dot = M_b^-1 (M_bq_dot - M_b_dot A_l)`` from Pinocchio's ``M_dot``."""
    return np.linalg.solve(kin.M_b, M_dot[:6, 6:] - M_dot[:6, :6] @ kin.A_l)


def reduced_rates_from_pinocchio(model, q, V1, qdot, tau, F1=None, g1=None, gravity=False):
    """``(mu_dot, qddot)`` from Pinocchio's ABA through ``xi_dot = L^-1 (V_dot - L_dot xi)``."""
    kin = model.kinematics(q, qdot)
    ref = PinRef(model, q, V1, qdot, g1=g1, gravity=gravity)
    V_dot = ref.aba(tau, F1)
    A_dot = connection_rate(kin, PinRef(model, q).M_dot(qdot))
    return V_dot[:6] + kin.A_l @ V_dot[6:] + A_dot @ qdot, V_dot[6:]


def rk4_pinocchio(pm, q_pin, v_pin, u, dt, steps):
    """Classical RK4 of Pinocchio's ABA in the chart ``q = integrate(q0, delta)`` of each step."""
    pd = pm.createData()

    def f(q0, delta, v, t):
        q = pin.integrate(pm, q0, delta)
        J = pin.dIntegrate(pm, q0, delta, pin.ArgumentPosition.ARG1)   # d integrate / d delta
        return np.linalg.solve(J, v), pin.aba(pm, pd, q, v, u(t))
    for i in range(steps):
        t, d0 = i * dt, np.zeros(pm.nv)
        k1 = f(q_pin, d0, v_pin, t)
        k2 = f(q_pin, d0 + dt / 2 * k1[0], v_pin + dt / 2 * k1[1], t + dt / 2)
        k3 = f(q_pin, d0 + dt / 2 * k2[0], v_pin + dt / 2 * k2[1], t + dt / 2)
        k4 = f(q_pin, d0 + dt * k3[0], v_pin + dt * k3[1], t + dt)
        q_pin = pin.integrate(pm, q_pin, dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]))
        v_pin = v_pin + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return q_pin, v_pin
