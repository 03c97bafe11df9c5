"""The recursive REL terms (Pinocchio at chosen velocities) against the per-link matrices."""
import numpy as np

from helpers import assert_close, random_state
from helpers import reference_rel as ref
from helpers.oracles import compensation_oracle
from floating_base_control.control.shape import CompensationTorques
from floating_base_control.conventions import swap_halves
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.dynamics.rel_fast import connection_velocity, locked_inertia_factor, mu_mu_cc_forces
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
    assert_close(orbital.forward_dynamics_reduced(q, mu, qdot, tau_c + compensation_oracle(t, "tau1"))[1], still, 1e-10,
                 "tau_hat_1")
    with_gyro = orbital.forward_dynamics_reduced(q, mu, qdot, tau_c + compensation_oracle(t, "tau2"))[1]
    B = orbital.gyroscopic_matrix(q, mu)
    assert_close(with_gyro, still - np.linalg.solve(Lam, B @ qdot), 1e-10, "tau_hat_2")
    assert abs(qdot @ B @ qdot) < 1e-12 * np.abs(B).max() * qdot @ qdot   # no power
    uncompensated = orbital.forward_dynamics_reduced(q, mu, qdot, tau_c)[1]
    assert np.abs(uncompensated - still).max() > 1e-3 * np.abs(still).max()


def test_the_ticks_compensation_is_eq_45_from_the_papers_link_frame_sums(model, rng):
    """The control tick's torques of eq. 45 (``CompensationTorques`` on ``rel_fast``'s kernels, Pinocchio's
    recursions) against eq. 45 written with [Mishra2023]'s link-frame sums (``reference_rel``)."""
    q, qdot, _, mu = random_state(model, rng)
    ws = model.create_data()
    locked_inertia_factor(model, ws, q)
    connection_velocity(ws.A, qdot, ws.A_qdot)
    mu_pin = swap_halves(mu)
    eq45 = CompensationTorques(model, ws, mu_pin, qdot, mu_mu_cc_forces(model, ws, mu_pin))
    L = ref.LinkFrames(model, q, qdot)
    assert_close(eq45.tau_hat_2, ref.tau_hat_2(L, mu), 1e-12, "tau_hat_2")
    assert_close(eq45.tau_hat_1, ref.tau_hat_1(L, mu, qdot), 1e-12, "tau_hat_1")
