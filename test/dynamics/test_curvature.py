"""Theorem 2 (closed-form curvature) against its definition (Def. 5) and eq. 11."""
import numpy as np

from helpers import assert_close, random_state
from floating_base_control.dynamics import curvature as curv
from floating_base_control.lie import exp, log


def test_theorem_2_equals_definition_5(model, rng):
    q = random_state(model, rng)[0]
    F = model.curvature_tensor(q)
    F_def = curv.curvature_tensor_fd(model.mechanical_connection, q)
    assert np.abs(F).max() > 1e-4                                   # not trivially zero
    assert_close(F, F_def, 1e-8, "DA_l(e_i) e_j: Theorem 2 vs Def. 5 (central differences)")
    x, y = rng.normal(size=model.n), rng.normal(size=model.n)
    assert_close(model.curvature(q, x, y), np.einsum("aij,i,j->a", F, x, y), 1e-12, "bilinear")


def test_corollary_2_curvature_vanishes_on_the_diagonal(model, rng):
    q, x = random_state(model, rng)[0], rng.normal(size=model.n)
    assert_close(model.curvature(q, x, x), np.zeros(6), 1e-13, "DA_l(x) x = 0")
    F = model.curvature_tensor(q)
    assert_close(F, -F.transpose(0, 2, 1), 1e-13, "antisymmetric in (x, y)")


def test_sign_of_eq_11_small_loop(orbital, rng):
    """A small counter-clockwise loop of area a in the (x, y) plane at mu = 0 moves the base
    by log(dg) = -a DA_l(x) y (+ O(r^3)), integrating eq. 9 exactly on SE(3)."""
    q0 = random_state(orbital, rng)[0]
    x, y = np.eye(orbital.n)[1], np.eye(orbital.n)[3]
    r, steps = 2e-3, 400
    theta = np.linspace(0, 2 * np.pi, steps + 1)
    path = q0 + r * (np.cos(theta)[:, None] * x + np.sin(theta)[:, None] * y)
    g = np.eye(4)
    for qa, qb in zip(path[:-1], path[1:]):
        g = g @ exp(-orbital.mechanical_connection((qa + qb) / 2) @ (qb - qa))
    area = np.pi * r * r
    expected = -area * orbital.curvature(q0, x, y)
    assert np.abs(expected).max() > 1e-3 * area                     # a loop that moves the base
    assert_close(log(g), expected, 1e-2 * np.abs(expected).max(), "eq. 11 sign and scale")
