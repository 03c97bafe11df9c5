"""[Mishra2023]'s per-link sums, verbatim, in link frames: the reference the package is tested against.

Written from the paper with explicit loops over links k and link-frame
quantities straight from Pinocchio (``Ad_1k`` from the link placements, ``J_k``
the LOCAL body Jacobian w.r.t. the shape, ``M_k`` the constant link inertia).
The package computes the same sums in the base frame, vectorized; agreement
of the two checks the frame algebra as well as the formulas.

``ad~`` is used wherever the PDF conversion printed ``ad^T`` (eqs. 18, 19c, 20).
"""
import numpy as np
import pinocchio as pin

from floating_base_control.conventions import SWAP
from floating_base_control.lie import Ad_inv, ad, ad_tilde


class LinkFrames:
    """``Ad_1k^-1``, ``J_k``, ``M_k`` (and ``J_k_dot``) of every link, ``[omega; v]`` ordering."""

    def __init__(self, model, q, qdot=None):
        pm = model.pin_model
        pd = pm.createData()
        q_pin = pin.neutral(pm)
        q_pin[7:] = q
        v_pin = np.zeros(pm.nv)
        if qdot is not None:
            v_pin[6:] = qdot
        pin.computeJointJacobiansTimeVariation(pm, pd, q_pin, v_pin)
        self.X, self.J, self.Jdot, self.M = [], [], [], []
        g1 = pd.oMi[1].homogeneous
        for k in range(1, pm.njoints):
            g1k = np.linalg.inv(g1) @ pd.oMi[k].homogeneous
            self.X.append(Ad_inv(g1k))
            J = pin.getJointJacobian(pm, pd, k, pin.LOCAL)[SWAP, 6:]
            self.J.append(J)
            # LOCAL Jacobian rate: d/dt (Ad_ok^-1 J_world) = Ad_ok^-1 (dJ_world - ad_(V_k^world) J_world)
            Jw = pin.getJointJacobian(pm, pd, k, pin.WORLD)[SWAP, 6:]
            dJw = pin.getJointJacobianTimeVariation(pm, pd, k, pin.WORLD)[SWAP, 6:]
            Vw = Jw @ v_pin[6:]
            self.Jdot.append(Ad_inv(pd.oMi[k].homogeneous) @ (dJw - ad(Vw) @ Jw))
            self.M.append(pm.inertias[k].matrix()[np.ix_(SWAP, SWAP)])
        self.n = model.n


def locked_inertia(L):
    """``M_b = sum_k Ad_1k^-T M_k Ad_1k^-1`` (eq. 7)."""
    return sum(X.T @ M @ X for X, M in zip(L.X, L.M))


def coupling_inertia(L):
    """``M_bq = sum_k Ad_1k^-T M_k J_k`` (eq. 7)."""
    return sum(X.T @ M @ J for X, M, J in zip(L.X, L.M, L.J))


def connection(L):
    return np.linalg.solve(locked_inertia(L), coupling_inertia(L))


def generalized_jacobians(L):
    """``J~_k = J_k - Ad_1k^-1 A_l`` (eq. 14)."""
    A = connection(L)
    return [J - X @ A for X, J in zip(L.X, L.J)]


def Lambda_q(L):
    """Eq. 19a."""
    A = connection(L)
    return sum(J.T @ M @ J for J, M in zip(L.J, L.M)) - A.T @ locked_inertia(L) @ A


def P(L, x):
    """Eq. 19b."""
    return -sum(X.T @ (ad(J @ x).T @ M + M @ ad(J @ x)) @ X for X, M, J in zip(L.X, L.M, L.J))


def S_T(L, mu):
    """``S(mu)^T``, eq. 19c (with ad~)."""
    return sum(J.T @ (ad(X @ mu).T @ M + ad_tilde(M @ X @ mu)) @ X
               for X, M, J in zip(L.X, L.M, L.J))


def Gamma_q(L, qdot):
    """Eq. 19d: ``sum_k J~_k^T (-ad~_(M_k J~_k qdot) J~_k + M_k J~_k_dot)``.

    ``J~_k_dot = J_k_dot - d/dt(Ad_1k^-1) A_l - Ad_1k^-1 A_l_dot`` with
    ``d/dt Ad_1k^-1 = -ad_(J_k qdot) Ad_1k^-1``.
    """
    A = connection(L)
    Jt = generalized_jacobians(L)
    A_dot = _connection_rate(L, qdot)
    out = 0
    for X, M, J, Jd, Jtk in zip(L.X, L.M, L.J, L.Jdot, Jt):
        Jt_dot = Jd + ad(J @ qdot) @ X @ A - X @ A_dot
        out = out + Jtk.T @ (-ad_tilde(M @ Jtk @ qdot) @ Jtk + M @ Jt_dot)
    return out


def nabla(M, X):
    """``M nabla_X = ad_X^T M + ad~_(M X) - M ad_X`` (eq. 20, times M)."""
    return ad(X).T @ M + ad_tilde(M @ X) - M @ ad(X)


def B_tilde(L, mu):
    """Eq. 19e."""
    A = connection(L)
    St = S_T(L, mu)
    out = -A.T @ ad_tilde(locked_inertia(L) @ mu) @ A + St @ A - A.T @ St.T
    return out - sum(J.T @ nabla(M, X @ mu) @ J for X, M, J in zip(L.X, L.M, L.J))



def tau_hat_2(L, mu):
    """Eq. 45, ``i = 2`` (brackets restored from eq. 18): ``-(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu``."""
    return -(0.5 * S_T(L, mu) - connection(L).T @ ad_tilde(locked_inertia(L) @ mu)) @ mu


def tau_hat_1(L, mu, qdot):
    """Eq. 45, ``i = 1``: ``tau_hat_2(mu) + B~(mu) qdot``."""
    return tau_hat_2(L, mu) + B_tilde(L, mu) @ qdot

def calB(L, x):
    """Eq. 36."""
    A = connection(L)
    out = sum(J.T @ (nabla(M, J @ x) + 2 * M @ ad(J @ x)) @ X for X, M, J in zip(L.X, L.M, L.J))
    return out - S_T(L, A @ x) + A.T @ P(L, x) + A.T @ ad(A @ x).T @ locked_inertia(L)


def curvature(L, x, y):
    """Eq. 35."""
    return -np.linalg.solve(locked_inertia(L), calB(L, x).T @ y)


def _connection_rate(L, qdot):
    """``A_l_dot = M_b^-1 (M_bq_dot - M_b_dot A_l)`` with the link-frame rates of eq. 7."""
    Xdot = [-ad(J @ qdot) @ X for X, J in zip(L.X, L.J)]
    Mb_dot = sum(Xd.T @ M @ X + X.T @ M @ Xd for X, Xd, M in zip(L.X, Xdot, L.M))
    Mbq_dot = sum(Xd.T @ M @ J + X.T @ M @ Jd for X, Xd, M, J, Jd in zip(L.X, Xdot, L.M, L.J, L.Jdot))
    return np.linalg.solve(locked_inertia(L), Mbq_dot - Mb_dot @ connection(L))
