"""Local curvature of the mechanical connection: seed 002, Def. 5 and Theorem 2.

Sign convention (eq. 11): for a small counter-clockwise loop of area ``a`` in
the plane spanned by shape directions ``(x, y)``, with ``mu = 0``, the base
moves by ``log(g1(0)^-1 g1(T)) = -a * DA_l(q, x) y``.
"""
import numpy as np

from ..kinematics import stacked
from ..lie import ad_batch, ad_tilde_batch


def curvature_operator(kin, X):
    """``calB(q, x)`` of Theorem 2 (seed 002, eq. 36) for each column ``x`` of ``X`` (n x m).

    Returns ``(m, n, 6)``.  In {1} (see ``kinematics``), with ``w_k = Z_k x``
    and ``v = A_l x``::

        calB(x) = sum_k Z_k^T (ad_w_k^T I_k + ad~_(I_k w_k) + I_k ad_w_k)     (M_k nabla + 2 M_k ad)
                  - S(v)^T + A_l^T P(x) + A_l^T ad_v^T M_b
    """
    I, Z, A = kin.I, kin.Z, kin.A
    m = X.shape[1]
    w = np.moveaxis(Z @ X, 2, 1)               # (nb, m, 6)
    v = (A @ X).T                              # (m, 6)
    ad_w, ad_v = ad_batch(w), ad_batch(v)      # (nb, m, 6, 6), (m, 6, 6)
    I4 = I[:, None]
    I_ad_w = I4 @ ad_w
    Iw = (I4 @ w[..., None])[..., 0]
    Iv = (I4 @ v[..., None])[..., 0]
    # per-link blocks, the -S(v)^T summand folded in: (nb, m, 6, 6)
    blocks = (np.swapaxes(I_ad_w, -1, -2) + I_ad_w + ad_tilde_batch(Iw)
              - np.swapaxes(ad_v, -1, -2) @ I4 - ad_tilde_batch(Iv))
    linkwise = stacked(Z).T @ np.moveaxis(blocks, 0, 1).reshape(m, -1, 6)
    Q = I_ad_w.sum(axis=0)
    P = -(Q + np.swapaxes(Q, -1, -2))          # P(x), eq. 19b
    return linkwise + A.T @ (P + np.swapaxes(ad_v, -1, -2) @ kin.M_b)


def curvature(kin, x, y):
    """Local curvature ``DA_l(q, x) y = -M_b^-1 calB(q, x)^T y`` (seed 002, Theorem 2, eq. 35)."""
    B = curvature_operator(kin, x[:, None])[0]
    return -np.linalg.solve(kin.M_b, B.T @ y)


def curvature_tensor(kin):
    """All curvatures at once: ``F[:, i, j] = DA_l(q, e_i) e_j`` (6 x n x n), by Theorem 2."""
    n = kin.A.shape[1]
    B = curvature_operator(kin, np.eye(n))
    return -np.linalg.solve(kin.M_b, B.reshape(n * n, 6).T).reshape(6, n, n)


def curvature_tensor_fd(connection, q, h=1e-5):
    """``F[:, i, j] = DA_l(q, e_i) e_j`` from the definition (seed 002, Def. 5) by central differences.

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
