"""The vectorized base-frame sums against [Mishra2023]'s link-frame sums written out verbatim."""
import numpy as np

from helpers import reference_rel as ref
from helpers import assert_close, random_state
from floating_base_control.dynamics import curvature as curv
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.lie import ad, ad_tilde


def test_rel_terms_match_the_papers_link_frame_sums(model, rng):
    q, qdot, _, mu = random_state(model, rng)
    x, y = rng.normal(size=model.n), rng.normal(size=model.n)
    kin = model.kinematics(q, qdot)
    L = ref.LinkFrames(model, q, qdot)
    assert_close(kin.M_b, ref.locked_inertia(L), 1e-12, "M_b (7)")
    assert_close(kin.A_l, ref.connection(L), 1e-12, "A_l")
    assert_close(rel.reduced_shape_inertia(kin), ref.Lambda_q(L), 1e-12, "Lambda_q (19a)")
    assert_close(rel.locked_inertia_velocity(kin, x), ref.P(L, x), 1e-12, "P (19b)")
    assert_close(rel.locked_inertia_derivative(kin, mu).T, ref.S_T(L, mu), 1e-12, "S^T (19c)")
    assert_close(rel.reduced_shape_coriolis(kin), ref.Gamma_q(L, qdot), 1e-11, "Gamma~'_q (19d)")
    assert_close(rel.gyroscopic_matrix(kin, mu), ref.B_tilde(L, mu), 1e-12, "B~ (19e)")
    assert_close(curv.curvature(kin, x, y), ref.curvature(L, x, y), 1e-12, "DA_l (35)")


def test_lemma_12_identities(model, rng):
    q, qdot, _, mu = random_state(model, rng)
    L = ref.LinkFrames(model, q, qdot)
    A = ref.connection(L)
    A_dot = ref._connection_rate(L, qdot)
    Jt = ref.generalized_jacobians(L)
    Jt_dot = [Jd + ad(J @ qdot) @ X @ A - X @ A_dot for X, J, Jd in zip(L.X, L.J, L.Jdot)]
    links = list(zip(L.X, L.M, L.J, Jt, Jt_dot))
    scale = np.abs(ref.locked_inertia(L)).max()
    zero = np.zeros((6, model.n))
    assert_close(sum(X.T @ M @ Jt_k for X, M, J, Jt_k, _ in links) / scale, zero, 1e-13, "68a")
    assert_close(sum(X.T @ M @ Jtd for X, M, J, Jt_k, Jtd in links),
                 sum(X.T @ ad(Jt_k @ qdot).T @ M @ Jt_k for X, M, J, Jt_k, _ in links), 1e-11, "68b")
    assert_close(sum(X.T @ ad_tilde(M @ Jt_k @ qdot) @ X for X, M, J, Jt_k, _ in links) / scale,
                 np.zeros((6, 6)), 1e-13, "68c")
    assert_close(sum(X.T @ ad(X @ mu).T @ M @ Jt_k for X, M, J, Jt_k, _ in links) / scale, zero, 1e-13,
                 "68d")
    assert_close(sum(X.T @ (ad(J @ qdot).T - ad(Jt_k @ qdot).T) @ M @ Jt_k for X, M, J, Jt_k, _ in links)
                 / scale, zero, 1e-13, "68e")
    assert np.abs(sum(X.T @ M @ Jtd for X, M, J, Jt_k, Jtd in links)).max() > 1e-3   # 68b not 0 = 0


def test_B_tilde_is_minus_the_sum_over_generalized_jacobians(model, rng):
    """A shorter equivalent of eq. 19e used by the package (found and checked here):
    B~(mu) = -sum_k J~_k^T M_k nabla_(Ad_1k^-1 mu) J~_k."""
    q, _, _, mu = random_state(model, rng)
    L = ref.LinkFrames(model, q)
    short = -sum(Jt.T @ ref.nabla(M, X @ mu) @ Jt for X, M, Jt in zip(L.X, L.M, ref.generalized_jacobians(L)))
    assert_close(short, ref.B_tilde(L, mu), 1e-12, "B~ with J~_k")
