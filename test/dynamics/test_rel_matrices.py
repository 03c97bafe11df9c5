"""Theorem 1 (the REL equations of [Mishra2023]) and its properties, against Pinocchio and definitions."""
import numpy as np
import pytest

from helpers import MODEL_NAMES, assert_close, model_urdf, random_pose, random_state
from floating_base_control import FloatingBaseModel
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.lie import ad
from helpers.pinocchio_reference import PinRef, connection_rate, reduced_rates_from_pinocchio


def transform_L(A):
    """``L = [[I, -A_l], [0, I]]`` with ``V = L xi`` (Lemma 2)."""
    n = A.shape[1]
    L = np.eye(6 + n)
    L[:6, 6:] = -A
    return L


def test_block_diagonal_inertia_lemma_2(model, rng):
    q = random_state(model, rng)[0]
    L = transform_L(model.mechanical_connection(q))
    assert_close(L.T @ PinRef(model, q).M() @ L, model.reduced_inertia(q), 1e-12, "L^T M L = diag(M_b, Lambda_q)")


def test_theorem_1_cc_forces_equal_lemma_2(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    kin = model.kinematics(q, qdot)
    mu = rel.locked_velocity(kin, V1, qdot)
    ref = PinRef(model, q, V1, qdot)
    L = transform_L(kin.A_l)
    L_dot = np.zeros_like(L)
    L_dot[:6, 6:] = -connection_rate(kin, ref.M_dot(qdot))
    xi = np.r_[mu, qdot]
    Gamma_xi = L.T @ (ref.M() @ L_dot + ref.C() @ L) @ xi          # Lemma 2, eq. 8
    D_qdot, D_mu = model.cc_matrices(q, mu, qdot)
    assert_close((D_qdot - D_mu) @ xi, Gamma_xi, 1e-11, "Theorem 1 CC forces (eq. 18) = Lemma 2")


def test_P_is_the_locked_inertia_rate(model, rng):
    q, qdot, _, _ = random_state(model, rng)
    h = 1e-5
    fd = (model.locked_inertia(q + h * qdot) - model.locked_inertia(q - h * qdot)) / (2 * h)
    P = model.locked_inertia_velocity(q, qdot)
    assert_close(P, fd, 1e-8, "P(qdot) = dM_b/dt (finite differences)")
    assert_close(P, PinRef(model, q).M_dot(qdot)[:6, :6], 1e-12, "P(qdot) = M_dot_b (Pinocchio)")


def test_S_is_the_shape_gradient_of_the_locked_metric(model, rng):
    q = random_state(model, rng)[0]
    x, y, h = rng.normal(size=6), rng.normal(size=6), 1e-5
    fd = [(x @ model.locked_inertia(q + h * e) @ y - x @ model.locked_inertia(q - h * e) @ y) / (2 * h)
          for e in np.eye(model.n)]
    assert_close(model.locked_inertia_derivative(q, x).T @ y, fd, 1e-8, "S(x)^T y = d<x,y>_Mb/dq")


def test_commutativity_27_28(model, rng):
    kin = model.kinematics(random_state(model, rng)[0])
    x, y, z = rng.normal(size=6), rng.normal(size=6), rng.normal(size=model.n)
    S = lambda v: rel.locked_inertia_derivative(kin, v)  # noqa: E731
    assert_close(S(x).T @ y, S(y).T @ x, 1e-12, "S(x)^T y = S(y)^T x (27)")
    assert_close(rel.locked_inertia_velocity(kin, z) @ y, S(y) @ z, 1e-12, "P(z) y = S(y) z (27)")
    e = x - y
    assert_close(S(x).T @ x - S(y).T @ y, (2 * S(x).T - S(e).T) @ e, 1e-12, "eq. 28")


def test_skew_symmetry_30(model, rng):
    q, qdot, _, mu = random_state(model, rng)
    kin = model.kinematics(q, qdot)
    M_dot = PinRef(model, q).M_dot(qdot)
    A_dot = connection_rate(kin, M_dot)
    # d/dt (M_q - M_bq^T M_b^-1 M_bq)
    A = kin.A_l
    Lam_dot = M_dot[6:, 6:] - M_dot[:6, 6:].T @ A - A.T @ M_dot[:6, 6:] + A.T @ M_dot[:6, :6] @ A
    h = 1e-5
    fd = (model.reduced_shape_inertia(q + h * qdot) - model.reduced_shape_inertia(q - h * qdot)) / (2 * h)
    assert_close(Lam_dot, fd, 1e-8, "Lambda_q rate")
    fd_A = (model.mechanical_connection(q + h * qdot) - model.mechanical_connection(q - h * qdot)) / (2 * h)
    assert_close(A_dot, fd_A, 1e-8, "A_l rate")
    N = Lam_dot - 2 * rel.reduced_shape_coriolis(kin)
    assert_close(N, -N.T, 1e-11, "Lambda_q_dot - 2 Gamma~'_q is skew (30)")
    assert_close(rel.locked_inertia_velocity(kin, qdot), M_dot[:6, :6], 1e-12, "M_b_dot - P = 0 (30)")
    B = rel.gyroscopic_matrix(kin, mu)
    assert_close(B, -B.T, 1e-12, "B~ is skew (30)")
    D_mu = rel.cc_matrices(kin, mu)[1]
    assert_close(D_mu, -D_mu.T, 1e-12, "D_mu is skew (30)")
    assert np.abs(B).max() > 1e-3 and np.abs(N).max() > 1e-3     # not trivially zero


def test_forward_dynamics_reduced_against_aba(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    tau, F1 = rng.normal(size=model.n), rng.normal(size=6)
    mu = model.locked_velocity(q, V1, qdot)
    expected = reduced_rates_from_pinocchio(model, q, V1, qdot, tau, F1)
    got = model.forward_dynamics_reduced(q, mu, qdot, tau, F1)
    assert_close(got[0], expected[0], 1e-10, "mu_dot")
    assert_close(got[1], expected[1], 1e-10, "qddot")


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_forward_dynamics_reduced_with_gravity(name, rng):
    heavy = FloatingBaseModel.from_urdf_string(model_urdf(name), gravity=(0.3, -1.0, -9.81))
    q, qdot, V1, _ = random_state(heavy, rng)
    g1, tau = random_pose(rng), rng.normal(size=heavy.n)
    mu = heavy.locked_velocity(q, V1, qdot)
    expected = reduced_rates_from_pinocchio(heavy, q, V1, qdot, tau, g1=g1, gravity=True)
    got = heavy.forward_dynamics_reduced(q, mu, qdot, tau, g1=g1)
    assert_close(got[0], expected[0], 1e-10, "mu_dot with gravity")
    assert_close(got[1], expected[1], 1e-10, "qddot with gravity")


def test_pinocchio_coriolis_at_the_locked_velocity_gives_S_and_B(model, rng):
    """Found while building the fast path, kept as a cross-check: with V = [mu; 0],
    Pinocchio's C equals -1/2 sum_k T_k^T M_k nabla_(Ad_1k^-1 mu) T_k, hence
    B~(mu) = 2 L_q^T C L_q and S(mu)^T = -2 C_qb + M_bq^T ad_mu."""
    q, _, _, mu = random_state(model, rng)
    kin = model.kinematics(q)
    C = PinRef(model, q).C(np.r_[mu, np.zeros(model.n)])
    L_q = np.r_[-kin.A_l, np.eye(model.n)]
    assert_close(2 * L_q.T @ C @ L_q, rel.gyroscopic_matrix(kin, mu), 1e-12, "B~")
    assert_close(-2 * C[6:, :6] + kin.M_bq.T @ ad(mu), rel.locked_inertia_derivative(kin, mu).T, 1e-12, "S^T")


def test_shape_inertias_are_the_kinematics_blocks_and_give_lambda_q(model, rng):
    """One CRBA (``shape_inertias``) gives the same ``M_b``, ``M_bq``, ``M_q``, ``A_l`` as the per-link
    kinematics, and ``Lambda_q`` of Lemma 2 (``L^T M L = diag(M_b, Lambda_q)``) from them."""
    from floating_base_control.kinematics import shape_inertias
    q, qdot, V1, _ = random_state(model, rng)
    kin, fast = model.kinematics(q), shape_inertias(model, model.create_data(), q)
    for name in ("M_b", "M_bq", "M_q", "A_l"):
        assert_close(getattr(fast, name), getattr(kin, name), 0, name)
    assert_close(rel.locked_velocity(fast, V1, qdot), model.locked_velocity(q, V1, qdot), 0, "mu (Def. 3)")
    L = transform_L(fast.A_l)
    assert_close(rel.reduced_shape_inertia(fast), (L.T @ PinRef(model, q).M() @ L)[6:, 6:], 1e-12, "Lambda_q")
