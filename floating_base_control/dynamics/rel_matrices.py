"""Reduced Euler-Lagrange (REL) equations of Mishra et al. [Mishra2023], Theorem 1.

All functions take a :class:`~floating_base_control.kinematics.ShapeKinematics`
(link inertias ``I_k`` and Jacobians ``Z_k`` in the base frame {1}) and return
the paper's matrices.  The paper writes its per-link sums with ``Ad_1k^-1``,
``J_k`` and ``M_k`` in link frames; in {1} they read the same with ``I_k`` in
place of ``Ad_1k^-T M_k Ad_1k^-1`` and ``Z_k`` in place of ``Ad_1k J_k``
(eqs. 62a-b).  ``test/helpers/reference_rel.py`` keeps the link-frame sums verbatim and
the tests compare the two.

The PDF conversion of the paper prints ``ad~`` as ``ad^T`` in eqs. 18-19; the
operator meant is ``ad~`` (eqs. 3, 16, 61), which is what is used here.
"""
import numpy as np

from floating_base_control.kinematics import stacked
from floating_base_control.lie import ad, ad_batch, ad_tilde, ad_tilde_batch


def locked_velocity(kin, V1, qdot):
    """Locked velocity ``mu = V1 + A_l(q) qdot`` ([Mishra2023] Def. 3), a body twist of {1}."""
    return V1 + kin.A_l @ qdot


def base_velocity(kin, mu, qdot):
    """Base body twist ``V1 = mu - A_l(q) qdot`` of the reconstruction ``g1_dot = g1 V1^`` (eq. 9)."""
    return mu - kin.A_l @ qdot


def momentum_map(kin, g1, V1, qdot):
    """Spatial momentum ``J = Ad_g1^-T (M_b V1 + M_bq qdot)`` ([Mishra2023] Def. 2).

    Returned as ``[angular; linear]`` about the inertial origin in inertial axes.
    """
    return spatial_momentum(g1, kin.M_b @ V1 + kin.M_bq @ qdot)


def spatial_momentum(g1, h):
    """``Ad_g1^-T h``: the body momentum ``h`` about {1} (base axes) as the spatial momentum
    ``[angular; linear]`` about the inertial origin ([Mishra2023] Def. 2).  With Def. 3,
    ``h = M_b mu``: the momentum of the locked velocity."""
    R, p = g1[:3, :3], g1[:3, 3]
    lin = R @ h[3:]
    return np.concatenate([R @ h[:3] + np.cross(p, lin), lin])


def reduced_shape_inertia(kin):
    """``Lambda_q = sum_k J_k^T M_k J_k - A_l^T M_b A_l`` ([Mishra2023] eq. 19a)."""
    return kin.M_q - kin.M_bq.T @ kin.A_l


def locked_inertia_velocity(kin, x):
    """LIV matrix ``P(q, x)`` ([Mishra2023] eqs. 15/19b); ``P(qdot) = dM_b/dt``.

    ``P(x) = -sum_k (ad_(Z_k x)^T I_k + I_k ad_(Z_k x))``.
    """
    Q = (kin.I @ ad_batch(kin.Z @ x)).sum(axis=0)
    return -(Q + Q.T)


def locked_inertia_derivative(kin, mu):
    """LID matrix ``S(q, mu)`` (6 x n, [Mishra2023] eqs. 16/19c).

    ``S(x)^T y = d<x, y>_(M_b) / dq``; ``S(mu)^T = sum_k Z_k^T (ad_mu^T I_k + ad~_(I_k mu))``.
    """
    blocks = ad(mu).T @ kin.I + ad_tilde_batch(kin.I @ mu)
    return (stacked(kin.Z).T @ stacked(blocks)).T


def reduced_shape_coriolis(kin):
    """Reduced shape CC matrix ``Gamma~'_q(qdot)`` (n x n, [Mishra2023] eq. 19d) at ``kin.qdot``.

    ``sum_k J~_k^T (-ad~_(M_k J~_k qdot) J~_k + M_k J~_k_dot)`` with the
    generalized Jacobian ``J~_k = J_k - Ad_1k^-1 A_l`` (eq. 14).  In {1},
    ``J~_k`` becomes ``Z_k - A_l`` and ``J~_k_dot`` becomes
    ``Ad_1k^-1 (Z_k_dot - A_l_dot - ad_(Z_k qdot) (Z_k - A_l))``; the ``A_l_dot``
    term drops out of the sum because ``sum_k I_k (Z_k - A_l) = 0`` (eq. 68a).
    """
    qdot = kin.qdot
    Zt = kin.Z - kin.A_l
    w = kin.Z @ qdot
    Iu = kin.I @ (w - kin.A_l @ qdot)[:, :, None]
    inner = kin.I @ (kin.Zdot - ad_batch(w) @ Zt) - ad_tilde_batch(Iu[:, :, 0]) @ Zt
    return stacked(Zt).T @ stacked(inner)


def gyroscopic_matrix(kin, mu):
    """``B~(q, mu)`` (n x n, skew-symmetric; [Mishra2023] eqs. 19e-20).

    Eq. 19e reads ``-A_l^T ad~_(M_b mu) A_l + S^T A_l - A_l^T S - sum_k J_k^T M_k
    nabla_(Ad_1k^-1 mu) J_k`` with ``M_k nabla_X = ad_X^T M_k + ad~_(M_k X) - M_k ad_X``
    (eq. 20).  Expanding ``J~_k = J_k - Ad_1k^-1 A_l`` shows that the first three
    terms complete the last sum to the generalized Jacobians,
    ``B~ = -sum_k J~_k^T M_k nabla_(Ad_1k^-1 mu) J~_k``, which is what is computed
    (``test/dynamics/test_reference.py`` checks it against eq. 19e verbatim).
    """
    Zt = kin.Z - kin.A_l
    ad_mu = ad(mu)
    nabla = ad_mu.T @ kin.I + ad_tilde_batch(kin.I @ mu) - kin.I @ ad_mu
    return -stacked(Zt).T @ stacked(nabla @ Zt)


def cc_matrices(kin, mu):
    """The two CC matrices ``(D_qdot, D_mu)`` of Theorem 1 ([Mishra2023] eq. 18).

    ``Lambda xi_dot + D_qdot xi = D_mu xi + F`` with ``xi = [mu; qdot]``;
    ``D_qdot`` depends on ``kin.qdot`` only and ``D_mu`` on ``mu`` only
    (``D_mu`` is skew-symmetric).
    """
    n = kin.A_l.shape[1]
    S = locked_inertia_derivative(kin, mu)
    adt = ad_tilde(kin.M_b @ mu)
    D_qdot = np.zeros((6 + n, 6 + n))
    D_qdot[:6, :6] = 0.5 * locked_inertia_velocity(kin, kin.qdot)
    D_qdot[6:, 6:] = reduced_shape_coriolis(kin)
    D_mu = np.empty((6 + n, 6 + n))
    D_mu[:6, :6] = adt
    D_mu[:6, 6:] = -0.5 * S - adt @ kin.A_l
    D_mu[6:, :6] = -D_mu[:6, 6:].T
    D_mu[6:, 6:] = -gyroscopic_matrix(kin, mu)
    return D_qdot, D_mu


def reduced_inertia(kin):
    """Block-diagonal inertia ``Lambda = diag(M_b, Lambda_q)`` of Theorem 1 (eq. 18)."""
    n = kin.A_l.shape[1]
    Lam = np.zeros((6 + n, 6 + n))
    Lam[:6, :6] = kin.M_b
    Lam[6:, 6:] = reduced_shape_inertia(kin)
    return Lam
