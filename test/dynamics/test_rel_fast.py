"""The recursive REL terms (Pinocchio at chosen velocities) against the per-link matrices."""
import numpy as np

from helpers import assert_close, random_state
from floating_base_control.control.shape import tau_hat_1, tau_hat_2
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.lie import ad_tilde


def test_terms_equal_the_theorem_1_matrices(model, rng):
    q, qdot, _, mu = random_state(model, rng)
    t = model.rel_terms(q, qdot, mu)
    kin = model.kinematics(q, qdot)
    adt = ad_tilde(kin.M_b @ mu)
    S = rel.locked_inertia_derivative(kin, mu)
    P = rel.locked_inertia_velocity(kin, qdot)
    assert_close(t.M_b, kin.M_b, 1e-13, "M_b")
    assert_close(t.Lambda_q, rel.reduced_shape_inertia(kin), 1e-12, "Lambda_q")
    assert_close(t.base_mu_mu, -adt @ mu, 1e-12, "base (mu, mu)")
    assert_close(t.base_mu_qdot, 0.5 * P @ mu + 0.5 * S @ qdot + adt @ kin.A_l @ qdot, 1e-12, "base (mu, qdot)")
    assert_close(t.P_mu, P @ mu, 1e-12, "P(qdot) mu")
    assert_close(t.shape_mu_mu, -(0.5 * S.T - kin.A_l.T @ adt) @ mu, 1e-12, "shape (mu, mu)")
    assert_close(t.shape_mu_qdot, rel.gyroscopic_matrix(kin, mu) @ qdot, 1e-12, "shape (mu, qdot)")
    assert_close(t.shape_qdot_qdot, rel.reduced_shape_coriolis(kin) @ qdot, 1e-12, "shape (qdot, qdot)")
    D_qdot, D_mu = rel.cc_matrices(kin, mu)
    xi = np.r_[mu, qdot]
    cc = np.r_[t.base_mu_mu + t.base_mu_qdot, t.shape_mu_mu + t.shape_mu_qdot + t.shape_qdot_qdot]
    assert_close(cc, (D_qdot - D_mu) @ xi, 1e-12, "all CC forces of eq. 18")


def test_compensation_removes_every_momentum_term_from_the_shape_dynamics(orbital, rng):
    """With the true mu, tau_hat_1 leaves Lambda_q qddot = tau_c - Gamma~'_q qdot (eq. 46,
    mu_e = 0); tau_hat_2 leaves the power-free gyroscopic torque -B~(mu) qdot."""
    q, qdot, _, mu = random_state(orbital, rng)
    tau_c = rng.normal(size=orbital.n)
    t = orbital.rel_terms(q, qdot, mu)
    Lam = t.Lambda_q
    still = np.linalg.solve(Lam, tau_c - t.shape_qdot_qdot)
    assert_close(orbital.forward_dynamics_reduced(q, mu, qdot, tau_c + tau_hat_1(t))[1], still, 1e-10,
                 "tau_hat_1")
    with_gyro = orbital.forward_dynamics_reduced(q, mu, qdot, tau_c + tau_hat_2(t))[1]
    B = orbital.gyroscopic_matrix(q, mu)
    assert_close(with_gyro, still - np.linalg.solve(Lam, B @ qdot), 1e-10, "tau_hat_2")
    assert abs(qdot @ B @ qdot) < 1e-12 * np.abs(B).max() * qdot @ qdot   # no power
    uncompensated = orbital.forward_dynamics_reduced(q, mu, qdot, tau_c)[1]
    assert np.abs(uncompensated - still).max() > 1e-3 * np.abs(still).max()
