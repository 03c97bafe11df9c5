"""Hamel's equations of the floating-base robot: [Mishra2023] Lemma 1 (eqs. 4-7).

``M(q) [V1_dot; qddot] + C(q, V) [V1; qdot] = [F1; tau]`` with
``M = sum_k T_k^T M_k T_k`` and ``C = sum_k T_k^T (-ad_(V_k)^T M_k T_k + M_k T_k_dot)``,
``T_k = [Ad_1k^-1, J_k]``.  In the base frame {1} (see ``kinematics``),
``T_k = Ad_1k^-1 Y_k`` with ``Y_k = [I_6, Z_k]`` and
``T_k_dot = Ad_1k^-1 (Y_k_dot - ad_(Z_k qdot) Y_k)``, which gives the sums below.
"""
import numpy as np

from floating_base_control.kinematics import stacked
from floating_base_control.lie import ad_batch


def hamel_matrices(kin, V1):
    """``(M, C)`` of Lemma 1 ([Mishra2023] eqs. 5-6) at base twist ``V1`` and ``kin.qdot``.

    Both are (6+n) x (6+n), ordered ``[V1 = (omega, v); qdot]``.  This ``C`` is
    the paper's Lemma 1 factorization: ``C V`` equals the Coriolis/centrifugal
    forces, but ``M_dot - 2 C`` is not skew-symmetric.
    """
    nb, _, n = kin.Z.shape
    Y = np.concatenate([np.broadcast_to(np.eye(6), (nb, 6, 6)), kin.Z], axis=2)
    Ydot = np.concatenate([np.zeros((nb, 6, 6)), kin.Zdot], axis=2)
    w = kin.Z @ kin.qdot                       # link twist relative to {1}, in {1}
    ad_u = ad_batch(V1 + w)                    # V_k, in {1}
    T = -np.swapaxes(ad_u, 1, 2) @ kin.I @ Y + kin.I @ (Ydot - ad_batch(w) @ Y)
    Ys = stacked(Y)
    M = Ys.T @ stacked(kin.I @ Y)
    C = Ys.T @ stacked(T)
    return M, C
