"""Pinocchio's own algorithms, in the package's ordering ``[V1 = (omega, v); qdot]``.

These are the independent references: Pinocchio computes them recursively,
without any of the package's formulas.
"""
import numpy as np
import pinocchio as pin

from floating_base_control.conventions import to_pinocchio
from floating_base_control.lie import SWAP


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
