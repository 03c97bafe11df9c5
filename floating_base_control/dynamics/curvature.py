"""Local curvature of the mechanical connection: [Mishra2023] Def. 5 and Theorem 2.

Sign convention (eq. 11): for a small counter-clockwise loop of area ``a`` in
the plane spanned by shape directions ``(x, y)``, with ``mu = 0``, the base
moves by ``log(g1(0)^-1 g1(T)) = -a * DA_l(q, x) y``.
"""
import numpy as np

from floating_base_control.lie import ad_batch, ad_tilde_batch
from floating_base_control.linalg import spd_solve


def curvature_pairs(kin, X=None, Y=None):
    """``DA_l(q, x_i) y_j`` for the columns of ``X`` (n x a) and ``Y`` (n x b): a (6, a, b) array.

    ``None`` stands for the identity (all joint directions).  Theorem 2 (seed
    002, eqs. 35-36), ``DA_l(x) y = -M_b^-1 calB(x)^T y``, summed link by link in
    the base frame (see ``kinematics``).  With ``sum_k I_k (Z_k - A_l) = 0``
    (eq. 68a) and ``ad~_h r = ad_r^T h`` (eq. 3), eq. 36 collapses to::

        calB(x)^T y = sum_k I_k [u_k, r_k] + ad_(u_k)^T I_k r_k - ad_(r_k)^T I_k u_k
                    = sum_k (I_k ad_(u_k) + ad_(u_k)^T I_k - ad~_(I_k u_k)) r_k

    where ``u_k = (Z_k - A_l) x`` and ``r_k = (Z_k - A_l) y`` are the link twists
    when the base moves so that the momentum stays zero (the generalized
    Jacobian ``J~_k`` of eq. 14).  The bracket makes the antisymmetry in
    ``(x, y)`` (Corollary 2) explicit.  ``test/dynamics/test_reference.py`` checks this
    form against eq. 36 written out verbatim.
    """
    Zt = kin.Z - kin.A_l                                               # (nb, 6, n)
    U = np.swapaxes(Zt if X is None else Zt @ X, 1, 2)               # (nb, a, 6)
    R = Zt if Y is None else Zt @ Y                                  # (nb, 6, b)
    I4 = kin.I[:, None]
    Q = I4 @ ad_batch(U)
    G = Q + np.swapaxes(Q, 2, 3) - ad_tilde_batch((I4 @ U[..., None])[..., 0])   # (nb, a, 6, 6)
    nb, a, b = U.shape[0], U.shape[1], R.shape[2]
    total = np.moveaxis(G, 0, 2).reshape(a * 6, nb * 6) @ R.reshape(nb * 6, b)   # sum over links
    rhs = np.swapaxes(total.reshape(a, 6, b), 0, 1).reshape(6, a * b)
    return -spd_solve(kin.M_b, rhs).reshape(6, a, b)


def curvature(kin, x, y):
    """Local curvature ``DA_l(q, x) y`` ([Mishra2023] Theorem 2, eq. 35): a twist ``[omega; v]``."""
    return curvature_pairs(kin, x[:, None], y[:, None])[:, 0, 0]


def curvature_tensor(kin):
    """All curvatures at once: ``F[:, i, j] = DA_l(q, e_i) e_j`` (6 x n x n), by Theorem 2."""
    return curvature_pairs(kin)


def curvature_tensor_fd(connection, q, h=1e-5):
    """``F[:, i, j] = DA_l(q, e_i) e_j`` from the definition ([Mishra2023] Def. 5) by central differences.

    ``DA_l(x) y = dA_l(x) y - ad_(A_l x) A_l y`` with the exterior derivative
    ``dA_l(x) y = (d_x A_l) y - (d_y A_l) x``.  ``connection(q)`` returns
    ``A_l(q)``; the truncation error is O(h^2).
    """
    n = q.size
    A = connection(q)
    dA = np.empty((n, 6, n))                   # dA[i] = dA_l / dq_i
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        dA[i] = (connection(q + e) - connection(q - e)) / (2 * h)
    exterior = np.moveaxis(dA, 0, 1) - np.moveaxis(dA, 0, 2)     # [:, i, j] = dA_i e_j - dA_j e_i
    lie = np.einsum("iab,bj->aij", ad_batch(A.T), A)             # ad_(A_l e_i) A_l e_j
    return exterior - lie
