"""SE(3) tools ([Mishra2023] Appendix A) against their definitions."""
import numpy as np
import pytest
from scipy.linalg import expm

from helpers import assert_close, random_inertia, random_pose
from floating_base_control import lie
from floating_base_control.conventions import SWAP


def test_hat_vee_and_bracket(rng):
    V, W = rng.normal(size=6), rng.normal(size=6)
    assert_close(lie.vee(lie.hat(V)), V, 1e-15)
    bracket = lie.hat(V) @ lie.hat(W) - lie.hat(W) @ lie.hat(V)
    assert_close(lie.ad(V) @ W, lie.vee(bracket), 1e-14, "ad_V W = [V^, W^]v (eq. 60)")


def test_adjoint_is_conjugation(rng):
    g, V = random_pose(rng), rng.normal(size=6)
    assert_close(lie.hat(lie.Ad(g) @ V), g @ lie.hat(V) @ np.linalg.inv(g), 1e-13, "Ad_g (eq. 60)")
    assert_close(lie.Ad_inv(g), np.linalg.inv(lie.Ad(g)), 1e-13)
    assert_close(lie.inv(g), np.linalg.inv(g), 1e-14)


def test_ad_tilde_swaps_arguments(rng):
    M, v, w = random_inertia(rng), rng.normal(size=6), rng.normal(size=6)
    assert_close(lie.ad(v).T @ M @ w, lie.ad_tilde(M @ w) @ v, 1e-13, "eq. 3")
    h = rng.normal(size=6)
    assert_close(lie.ad_tilde(h), -lie.ad_tilde(h).T, 0, "ad~ is skew-symmetric")


def test_property_7(rng):
    g, V, M = random_pose(rng), rng.normal(size=6), random_inertia(rng)
    Ad = lie.Ad(g)
    assert_close(Ad @ lie.ad(V) @ np.linalg.inv(Ad), lie.ad(Ad @ V), 1e-12, "eq. 62a")
    assert_close(Ad.T @ lie.ad_tilde(M @ V) @ Ad, lie.ad_tilde(Ad.T @ M @ V), 1e-12, "eq. 62b")


def test_property_8_adjoint_rate(rng):
    g, V, x, h = random_pose(rng), rng.normal(size=6), rng.normal(size=6), 1e-6
    rate = (lie.Ad(g @ lie.exp(h * V)) - lie.Ad(g @ lie.exp(-h * V))) / (2 * h)
    assert_close(rate @ x, lie.Ad(g) @ lie.ad(V) @ x, 1e-8, "eq. 63")


def test_batched_operators_match(rng):
    W = rng.normal(size=(4, 3, 6))
    assert_close(lie.ad_batch(W)[2, 1], lie.ad(W[2, 1]), 0)
    assert_close(lie.ad_tilde_batch(W)[3, 0], lie.ad_tilde(W[3, 0]), 0)


def test_exp_log(rng):
    V = rng.normal(size=6)
    V[:3] *= 2.5 / np.linalg.norm(V[:3])        # rotation angle below pi
    assert_close(lie.exp(V), expm(lie.hat(V)), 1e-12, "exp = matrix exponential of V^")
    assert_close(lie.log(lie.exp(V)), V, 1e-12, "log inverts exp")


def test_H_maps_body_twist_to_exponential_coordinate_rate(rng):
    eps, delta, h = rng.normal(size=6), rng.normal(size=6), 1e-6
    eps[:3] *= 2.0 / np.linalg.norm(eps[:3])
    eta = lie.exp(eps)
    rate = (lie.log(eta @ lie.exp(h * delta)) - lie.log(eta @ lie.exp(-h * delta))) / (2 * h)
    assert_close(lie.H(eps) @ delta, rate, 1e-8, "eps_dot = H(eps) (eta^-1 eta_dot)v (eq. 39)")
    assert_close(lie.H(eps) @ eps, eps, 1e-12, "H(eps) eps = eps (used with K = k I)")


@pytest.mark.parametrize("angle", [0.0, 1e-9, np.pi - 1e-6])
def test_log_near_singular_angles(angle):
    V = np.array([0.0, 0.0, angle, 0.1, -0.2, 0.3])
    assert_close(lie.log(lie.exp(V)), V, 1e-6)


def test_log_and_H_from_one_pose(rng):
    g = random_pose(rng)
    eps, H = lie.log_and_H(g)
    assert_close(eps, lie.log(g), 0)
    assert_close(H, lie.H(eps), 1e-12)


# -- the compiled kernels on 4x4 poses (Pinocchio's order [v; omega]) --

#: rotation angles across the kernels' branches: the Taylor series below lie.SMALL_ANGLE, the closed forms
#: above it, and the logarithm's axis from the symmetric part near pi
KERNEL_ANGLES = [0.0, 1e-9, 1e-5, 1e-3, 0.05, lie.SMALL_ANGLE * (1 - 1e-9), lie.SMALL_ANGLE * (1 + 1e-9), 0.5, 2.0,
                 2.9, 3.1, np.pi - 1e-6]


def twist_pin(rng, angle):
    """A random twist ``[v; omega]`` whose rotation angle is ``angle``."""
    w = rng.normal(size=3)
    return np.r_[rng.normal(size=3), w / np.linalg.norm(w) * angle]


def kernel_exp(V, exp6_parts=lie.exp6_parts):
    R, p = exp6_parts(V, 1.0)
    return np.block([[np.reshape(R, (3, 3)), np.reshape(p, (3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]])


def kernel_log(g, log6_jlog6=lie.log6_jlog6):
    eps, J = np.zeros(6), np.zeros((6, 6))
    log6_jlog6(g, eps, J)
    return eps, J


@pytest.mark.parametrize("angle", KERNEL_ANGLES)
def test_compiled_exp6_is_the_matrix_exponential(rng, angle):
    for _ in range(20):
        V = twist_pin(rng, angle)
        assert_close(kernel_exp(V), expm(lie.hat(V[SWAP])), 1e-14, f"exp6_parts at {angle}")


@pytest.mark.parametrize("angle", KERNEL_ANGLES)
def test_compiled_log6_inverts_exp6_and_agrees_with_pinocchio(rng, angle):
    import pinocchio as pin
    for _ in range(20):
        V = twist_pin(rng, angle)
        g = pin.exp6(V).homogeneous
        eps, _ = kernel_log(g)
        assert_close(eps, V, 1e-12, f"log6(exp6(V)) at {angle}")
        assert_close(eps, pin.log6(pin.SE3(g)).vector, 1e-12, f"against Pinocchio's log6 at {angle}")


@pytest.mark.parametrize("angle", KERNEL_ANGLES)
def test_compiled_jlog6_is_the_derivative_of_log6(rng, angle):
    """``J = d log(g exp(d)) / dd`` by central differences of the kernel's own logarithm, to 1e-9 at every
    angle, and ``J(exp(eps)) eps = eps`` (``H(eps) eps = eps``, eq. 39).  Pinocchio's ``Jlog6`` (4.1) is
    off by up to 4e-8 between about 1e-4 and 1e-2 rad (measured against the same differences), so it
    is compared only outside that band."""
    import pinocchio as pin
    h = 1e-6
    for _ in range(5):
        V = twist_pin(rng, angle)
        g = pin.exp6(V).homogeneous
        eps, J = kernel_log(g)
        differences = np.column_stack([(kernel_log(g @ pin.exp6(d).homogeneous)[0]
                                        - kernel_log(g @ pin.exp6(-d).homogeneous)[0]) / (2 * h)
                                       for d in np.eye(6) * h])
        assert_close(J, differences, 1e-9, f"Jlog6 against differences at {angle}")
        assert_close(J @ eps, eps, 1e-13, f"H(eps) eps = eps at {angle}")
        if not 1e-4 <= angle <= 1e-2:
            assert_close(J, pin.Jlog6(pin.SE3(g)), 1e-12, f"against Pinocchio's Jlog6 at {angle}")


def test_compiled_kernels_compute_what_their_python_source_does(rng):
    """Compiled without fast-math, a kernel gives its Python source's floats exactly (no reassociation,
    no fused multiply-adds)."""
    from floating_base_control.compiled import COMPILED
    assert COMPILED
    for angle in KERNEL_ANGLES:
        V = twist_pin(rng, angle)
        g = kernel_exp(V)
        np.testing.assert_array_equal(g, kernel_exp(V, lie.exp6_parts.py_func))
        for compiled, source in zip(kernel_log(g), kernel_log(g, lie.log6_jlog6.py_func)):
            np.testing.assert_array_equal(compiled, source)
