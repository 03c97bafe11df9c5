"""Lemma 1 (Hamel's equations) against Pinocchio's recursive algorithms."""
import numpy as np

from helpers import assert_close, random_state, random_pose
from helpers.pinocchio_reference import PinRef


def test_M_and_C_against_pinocchio(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    M, C = model.hamel_matrices(q, V1, qdot)
    ref = PinRef(model, q, V1, qdot)
    V = np.r_[V1, qdot]
    assert_close(M, ref.M(), 1e-12, "M (eq. 5) = crba")
    assert_close(C @ V, ref.nle(), 1e-12, "C V (eq. 6) = nonLinearEffects at zero gravity")
    assert_close(C @ V, ref.C() @ V, 1e-12, "C V = computeCoriolisMatrix V")


def test_lemma_1_C_is_not_the_skew_symmetric_factorization(orbital, rng):
    # [Mishra2023] after eq. 7: Lemma 1 does not satisfy x^T (M_dot - 2C) x = 0; Pinocchio's C does.
    q, qdot, V1, _ = random_state(orbital, rng)
    ref = PinRef(orbital, q, V1, qdot)
    M_dot = ref.M_dot(qdot)
    _, C = orbital.hamel_matrices(q, V1, qdot)
    x = rng.normal(size=orbital.n + 6)
    assert abs(x @ (M_dot - 2 * C) @ x) > 1e-3 * np.abs(M_dot).max()
    assert abs(x @ (M_dot - 2 * ref.C()) @ x) < 1e-12 * np.abs(M_dot).max() * x @ x


def test_dynamics_do_not_depend_on_the_base_pose(orbital, rng):
    q, qdot, V1, _ = random_state(orbital, rng)
    g1 = random_pose(rng)
    moved = PinRef(orbital, q, V1, qdot, g1=g1)
    M, C = orbital.hamel_matrices(q, V1, qdot)
    assert_close(M, moved.M(), 1e-12, "M(q) (g1-invariant)")
    assert_close(C @ np.r_[V1, qdot], moved.nle(), 1e-12, "C(q, V) V (g1-invariant)")
