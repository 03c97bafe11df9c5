"""Change of frame ([Mishra2023], Props. 4-6), momentum conservation and the centroidal view."""
import numpy as np
import pinocchio as pin
import pytest

from helpers import MODEL_NAMES, assert_close, model_urdf, random_pose, random_state
from floating_base_control import FloatingBaseModel
from floating_base_control.conventions import from_pinocchio, to_pinocchio
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.lie import Ad, Ad_inv, ad, ad_tilde, exp, hat
from helpers.random_tree import rebase_urdf
from helpers.reference_rel import LinkFrames
from helpers.pinocchio_reference import reduced_rates_from_pinocchio, rk4_pinocchio


@pytest.fixture(scope="module", params=MODEL_NAMES)
def model_pair(request):
    """A model and the same robot with its base frame moved by a constant ``g_1c``."""
    rng = np.random.default_rng(7)
    g_1c = random_pose(rng)
    text = model_urdf(request.param)
    return (FloatingBaseModel.from_urdf_string(text),
            FloatingBaseModel.from_urdf_string(rebase_urdf(text, g_1c)), g_1c)


def test_property_5_shape_dynamics_do_not_depend_on_the_momentum_frame(model_pair, rng):
    model, moved, g_1c = model_pair
    q, qdot, _, mu = random_state(model, rng)
    tau = rng.normal(size=model.n)
    mu_c = Ad_inv(g_1c) @ mu
    assert_close(moved.reduced_shape_inertia(q), model.reduced_shape_inertia(q), 1e-10, "Lambda_q (32)")
    assert_close(moved.mechanical_connection(q), Ad_inv(g_1c) @ model.mechanical_connection(q), 1e-10, "A_l")
    assert_close(moved.gyroscopic_matrix(q, mu_c), model.gyroscopic_matrix(q, mu), 1e-10, "B~ (33)")
    assert_close(moved.reduced_shape_coriolis(q, qdot), model.reduced_shape_coriolis(q, qdot), 1e-10,
                 "Gamma~'_q")
    mu_dot_c, qddot_c = moved.forward_dynamics_reduced(q, mu_c, qdot, tau)
    mu_dot, qddot = model.forward_dynamics_reduced(q, mu, qdot, tau)
    assert_close(qddot_c, qddot, 1e-10, "shape dynamics invariant (Prop. 5)")
    assert_close(mu_dot_c, Ad_inv(g_1c) @ mu_dot, 1e-10, "momentum dynamics transform (Prop. 4)")


def test_property_6_curvature_is_contravariant(model_pair, rng):
    model, moved, g_1c = model_pair
    q, x, y = random_state(model, rng)[0], rng.normal(size=model.n), rng.normal(size=model.n)
    assert_close(moved.curvature(q, x, y), Ad_inv(g_1c) @ model.curvature(q, x, y), 1e-10,
                 "DA_l^c = Ad_1c^-1 DA_l")


def test_property_4_momentum_dynamics_in_a_moving_frame(model, rng):
    """Eq. 31 in the frame of a moving link, g_c = g1 g_1k(q), against Pinocchio's ABA."""
    q, qdot, V1, _ = random_state(model, rng)
    tau = rng.normal(size=model.n)
    kin = model.kinematics(q, qdot)
    mu = rel.locked_velocity(kin, V1, qdot)
    mu_dot, _ = reduced_rates_from_pinocchio(model, q, V1, qdot, tau)
    links = LinkFrames(model, q)
    k = len(links.X) - 1
    Ad_1c = np.linalg.inv(links.X[k])
    V_1c = links.J[k] @ qdot
    mu_c = links.X[k] @ mu
    expected = links.X[k] @ mu_dot - ad(V_1c) @ mu_c                 # d/dt (Ad_1c^-1 mu)
    M_bar = Ad_1c.T @ kin.M_b @ Ad_1c
    P_bar = Ad_1c.T @ rel.locked_inertia_velocity(kin, qdot) @ Ad_1c / 2 + M_bar @ ad(V_1c)
    adt_bar = ad_tilde(M_bar @ mu_c)
    S_bar = Ad_1c.T @ rel.locked_inertia_derivative(kin, Ad_1c @ mu_c)
    A_bar = links.X[k] @ kin.A_l
    rhs = -P_bar @ mu_c + adt_bar @ mu_c - (S_bar / 2 + adt_bar @ A_bar) @ qdot
    assert_close(np.linalg.solve(M_bar, rhs), expected, 1e-10, "eq. 31")


def rk4_rel(model, g1, q, qdot, mu, tau, dt, steps):
    """Integrate the REL equations and the reconstruction (eq. 9) with RK4 (g1 in R^4x4)."""
    def f(state, t):
        g, q, qd, m = state
        mu_dot, qdd = model.forward_dynamics_reduced(q, m, qd, tau(t))
        return g @ hat(model.base_velocity(q, m, qd)), qd, qdd, mu_dot
    state = (g1, q, qdot, mu)
    for i in range(steps):
        t = i * dt
        k1 = f(state, t)
        k2 = f(tuple(s + dt / 2 * k for s, k in zip(state, k1)), t + dt / 2)
        k3 = f(tuple(s + dt / 2 * k for s, k in zip(state, k2)), t + dt / 2)
        k4 = f(tuple(s + dt * k for s, k in zip(state, k3)), t + dt)
        state = tuple(s + dt / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))
    return state


def test_momentum_is_conserved_along_a_torque_driven_rel_integration(orbital, rng):
    q, qdot, V1, _ = random_state(orbital, rng)
    g1 = random_pose(rng)
    tau = lambda t: 0.2 * np.sin(3 * t + np.arange(orbital.n))  # noqa: E731   (N m)
    J0 = orbital.momentum_map(g1, q, V1, qdot)
    mu0 = orbital.locked_velocity(q, V1, qdot)
    g, q1, qd1, mu1 = rk4_rel(orbital, g1, q, qdot, mu0, tau, 2e-3, 250)
    J1 = orbital.momentum_map(g, q1, orbital.base_velocity(q1, mu1, qd1), qd1)
    assert np.abs(q1 - q).max() > 0.05 and np.abs(mu1 - mu0).max() > 1e-3   # it did move
    assert_close(J1, J0, 1e-9, "momentum map (Def. 2) conserved by the REL equations")


def test_momentum_map_is_conserved_by_pinocchio_dynamics(orbital, rng):
    """Independent of the REL equations: Pinocchio integrates, Def. 2 must stay constant."""
    pm = pin.Model(orbital.pin_model)
    q, qdot, V1, _ = random_state(orbital, rng)
    q_pin, v_pin = to_pinocchio(random_pose(rng), q, V1, qdot)
    u = lambda t: np.r_[np.zeros(6), 0.5 * np.sin(5 * t + np.arange(orbital.n))]  # noqa: E731
    J0 = orbital.momentum_map(*from_pinocchio(q_pin, v_pin))
    q_pin, v_pin = rk4_pinocchio(pm, q_pin, v_pin, u, 1e-3, 300)
    assert_close(orbital.momentum_map(*from_pinocchio(q_pin, v_pin)), J0, 1e-9, "momentum map")


def test_locked_velocity_is_pinocchios_centroidal_average_velocity(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    pm = pin.Model(model.pin_model)
    pd = pm.createData()
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    pin.ccrba(pm, pd, q_pin, v_pin)
    v_G = np.linalg.solve(pd.Ig.matrix(), pd.hg.vector)            # [v; omega] at the CoM, world axes
    g_G = np.eye(4)
    g_G[:3, 3] = pd.com[0]
    mu = model.locked_velocity(q, V1, qdot)
    twist_at_G = Ad_inv(g_G) @ Ad(g1) @ mu                          # [omega; v]
    assert_close(twist_at_G, np.r_[v_G[3:], v_G[:3]], 1e-11, "mu = Ig^-1 hg (ccrba)")


def test_base_reconstruction_eq_9(orbital, rng):
    """``mu`` from Pinocchio's CRBA alone (M_b mu = the body momentum of the whole robot in {1},
    Defs. 2-3), then ``V1 = mu - A_l qdot`` (eq. 9) must give back the base twist."""
    q, qdot, V1, _ = random_state(orbital, rng)
    q_pin, v_pin = to_pinocchio(np.eye(4), q, V1, qdot)
    M = pin.crba(orbital.pin_model, orbital.pin_model.createData(), q_pin)
    swap = [3, 4, 5, 0, 1, 2]
    mu = np.linalg.solve(M[:6, :6], M[:6] @ v_pin)[swap]
    assert_close(orbital.base_velocity(q, mu, qdot), V1, 1e-12, "V1 = mu - A_l qdot")
    g1, dt = random_pose(rng), 1e-7
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    g_next = from_pinocchio(pin.integrate(orbital.pin_model, q_pin, v_pin * dt))[0]
    assert_close(g_next, g1 @ exp(orbital.base_velocity(q, mu, qdot) * dt), 1e-13, "eq. 9")
