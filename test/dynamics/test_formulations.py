"""Theorem 1 ([Mishra2023]) against the two other formulations of the same reduced equations:

* Mueller ([Muller2023]), eqs. 5.12-5.13: Lagrange-Poincare / Hamel equations in the locked
  velocity, with the curvature of eq. 5.8 (left trivialization: B = -DA_l);
* Feurstein ([Feurstein2021]), the decoupling transform (3.80) applied to the Hamel equations
  (3.38)-(3.39), and the external/internal split (3.96).

Everything on the other side is built here from Pinocchio's CRBA and nonLinearEffects
and central differences, not from the package's REL code.  Errata of the digests that
matter here: Mueller's printed (4.8), (4.9) and (6.4) carry the curvature with the
wrong sign for his own convention (5.8); (5.13) is right.  Feurstein's (A.4a) writes
M_x = T_x^-1 M_bb T_x^-T; it is T_x^-T M_bb T_x^-1 (3.79).
"""
import numpy as np
import pinocchio as pin

from helpers import assert_close, random_state, random_pose
from floating_base_control.analysis.locomotion import PlanarGait, net_displacement
from floating_base_control.dynamics import centroidal as cen
from floating_base_control.conventions import SWAP
from floating_base_control.lie import Ad, ad, exp, log

H = 1e-6                                     # central-difference step


def mass_matrix(model, q):
    """Pinocchio's CRBA, base at the identity, reordered to [omega; v; qdot]."""
    q_pin = np.r_[np.zeros(3), 0, 0, 0, 1, q]
    M = pin.crba(model.pin_model, model.pin_model.createData(), q_pin)
    idx = np.r_[SWAP, 6 + np.arange(model.n)]
    return M[np.ix_(idx, idx)]


def cc_forces(model, q, V1, qdot):
    """Pinocchio's nonLinearEffects at zero gravity, [moment; force; joints]."""
    q_pin = np.r_[np.zeros(3), 0, 0, 0, 1, q]
    c = pin.nonLinearEffects(model.cc_pin_model, model.cc_pin_model.createData(), q_pin,
                             np.r_[V1[SWAP], qdot])
    return np.r_[c[SWAP], c[6:]]


def passive_C(model, q, V1, qdot):
    """Pinocchio's (Euler-Newton, passive) Coriolis matrix, reordered to [omega; v; qdot]."""
    q_pin = np.r_[np.zeros(3), 0, 0, 0, 1, q]
    C = pin.computeCoriolisMatrix(model.pin_model, model.pin_model.createData(), q_pin,
                                  np.r_[V1[SWAP], qdot])
    idx = np.r_[SWAP, 6 + np.arange(model.n)]
    return C[np.ix_(idx, idx)]


def blocks(model, q):
    """Mueller's (L, K, S) of eq. 5.4 and the connection calA = L^-1 K (eq. 5.5)."""
    M = mass_matrix(model, q)
    L, K, S = M[:6, :6], M[:6, 6:], M[6:, 6:]
    return L, K, S, np.linalg.solve(L, K)


def along(f, q, dq):
    """d/dt f(q) along qdot = dq, by central differences."""
    return (f(q + H * dq) - f(q - H * dq)) / (2 * H)


def partials(f, q):
    """[d f / d q_i for each i], by central differences."""
    return [(f(q + H * e) - f(q - H * e)) / (2 * H) for e in np.eye(q.size)]


def reduced_inertia(model, q):
    L, K, S, _ = blocks(model, q)
    return S - K.T @ np.linalg.solve(L, K)


def mueller_curvature(model, q, sign=1.0):
    """Eq. 5.8, left trivialization: B_IJ = d_J A_I - d_I A_J + [A_I, A_J] (6, n, n)."""
    A = blocks(model, q)[3]
    dA = partials(lambda x: blocks(model, x)[3], q)           # dA[J] = d calA / d r_J
    n = model.n
    B = np.empty((6, n, n))
    for I in range(n):
        for J in range(n):
            B[:, I, J] = dA[J][:, I] - dA[I][:, J] + sign * ad(A[:, I]) @ A[:, J]
    return B


def mueller_residuals(model, q, qdot, mu, mu_dot, qddot, tau, F1, curvature_sign=1.0):
    """Residuals of Mueller's eqs. 5.12 and 5.13 in matrix form (digest 000, Sec. 3.4):

    (5.12)  d/dt (L Omega) - ad_xi^T L Omega = Q_Omega,  xi = Omega - calA rdot
    (5.13)  M_r rddot + M_r_dot rdot - 1/2 d_r(rdot^T M_r rdot) - 1/2 Omega^T (d_r L) Omega
            + [Pi^T B_IJ rdot^J]_I + [Pi^T ad_Omega calA_I]_I = Q_I = tau - calA^T Q_Omega
    """
    L, _, _, A = blocks(model, q)
    Pi = L @ mu
    xi = mu - A @ qdot
    r512 = along(lambda x: blocks(model, x)[0], q, qdot) @ mu + L @ mu_dot - ad(xi).T @ Pi - F1
    M_r = reduced_inertia(model, q)
    B = curvature_sign * mueller_curvature(model, q)
    r513 = (M_r @ qddot + along(lambda x: reduced_inertia(model, x), q, qdot) @ qdot
            - 0.5 * np.array([qdot @ d @ qdot for d in partials(lambda x: reduced_inertia(model, x), q)])
            - 0.5 * np.array([mu @ d @ mu for d in partials(lambda x: blocks(model, x)[0], q)])
            + np.einsum("a,aij,j->i", Pi, B, qdot)
            + np.array([Pi @ ad(mu) @ A[:, I] for I in range(model.n)])
            - (tau - A.T @ F1))
    return r512, r513


def _state(model, rng):
    q, qdot, _, mu = random_state(model, rng)
    return q, qdot, mu, rng.normal(size=model.n), rng.normal(size=6)


def test_theorem_1_satisfies_mueller_5_12_and_5_13(model, rng):
    q, qdot, mu, tau, F1 = _state(model, rng)
    mu_dot, qddot = model.forward_dynamics_reduced(q, mu, qdot, tau, F1)
    r512, r513 = mueller_residuals(model, q, qdot, mu, mu_dot, qddot, tau, F1)
    assert_close(r512, np.zeros(6), 1e-7, "Mueller (5.12)")
    assert_close(r513, np.zeros(model.n), 1e-7, "Mueller (5.13)")
    # the curvature term is not negligible: Mueller's other sign (printed in 4.9, 6.4) fails
    _, wrong = mueller_residuals(model, q, qdot, mu, mu_dot, qddot, tau, F1, curvature_sign=-1.0)
    assert np.abs(wrong).max() > 1e-3 * max(1.0, np.abs(tau).max())


def test_mueller_curvature_is_minus_theorem_2(model, rng):
    """B (Mueller 5.8, left trivialization) = -DA_l ([Mishra2023] Def. 5 / Theorem 2)."""
    q = random_state(model, rng)[0]
    assert_close(mueller_curvature(model, q), -model.curvature_tensor(q), 1e-7, "B = -DA_l")


def feurstein_hamel_C(model, q, V1, qdot):
    """The Hamel Coriolis matrix (3.39) of [Feurstein2021], from the mass-matrix blocks (ordering
    [omega; v; qdot], a_b = ad_(V1))."""
    M = lambda x: mass_matrix(model, x)                      # noqa: E731
    Mdot = along(M, q, qdot)
    dM = partials(M, q)
    b, j = slice(0, 6), slice(6, None)
    M0, a_b = M(q), ad(V1)
    M_b_q = np.array([V1 @ d[b, b] for d in dM])             # row i: d_i (nu_b^T M_bb)
    M_bq_q = np.array([V1 @ d[b, j] for d in dM])            # row i: d_i (nu_b^T M_bq)
    M_q_q = np.array([qdot @ d[j, j] for d in dM])           # row i: d_i (qdot^T M_qq)
    return np.block([[Mdot[b, b] - a_b.T @ M0[b, b], Mdot[b, j] - a_b.T @ M0[b, j]],
                     [Mdot[b, j].T - 0.5 * M_b_q, Mdot[j, j] - M_bq_q - 0.5 * M_q_q]])


def decoupling_transform(model, q, qdot, T_x, T_y):
    """(3.80): T = [[T_x, T_x M_bb^-1 M_bq], [0, T_y]] and its rate for constant T_x, T_y."""
    A = blocks(model, q)[3]
    n = model.n
    T = np.block([[T_x, T_x @ A], [np.zeros((n, 6)), T_y]])
    Tdot = np.zeros_like(T)
    Tdot[:6, 6:] = T_x @ along(lambda x: blocks(model, x)[3], q, qdot)
    return T, Tdot


def test_feurstein_hamel_C_gives_the_cc_forces(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    C = feurstein_hamel_C(model, q, V1, qdot)
    assert_close(C @ np.r_[V1, qdot], cc_forces(model, q, V1, qdot), 1e-7, "C_H v = nle")


def test_feurstein_3_80_decouples_and_equals_theorem_1(model, rng):
    """Prop. 3.3.1: T of (3.80) block-diagonalizes M and zeroes C_xy for any T_x, T_y (not
    so the passive C, (3.86)); with T_x = 1, T_y = 1 the transformed velocities are
    (mu, qdot) and the transformed equations are Theorem 1's."""
    q, qdot, mu, tau, F1 = _state(model, rng)
    A = blocks(model, q)[3]
    V1 = mu - A @ qdot
    C = feurstein_hamel_C(model, q, V1, qdot)
    M = mass_matrix(model, q)
    for T_x, T_y in ((np.eye(6), np.eye(model.n)),
                     (rng.normal(size=(6, 6)) + 3 * np.eye(6),
                      rng.normal(size=(model.n, model.n)) + 3 * np.eye(model.n))):
        T, Tdot = decoupling_transform(model, q, qdot, T_x, T_y)
        Ti = np.linalg.inv(T)
        M_T = Ti.T @ M @ Ti
        C_T = Ti.T @ C @ Ti - M_T @ Tdot @ Ti
        assert_close(M_T[:6, 6:], np.zeros((6, model.n)), 1e-10, "M_xy = 0 (3.79)")
        assert_close(C_T[:6, 6:], np.zeros((6, model.n)), 1e-6, "C_xy = 0 (Prop. 3.3.1)")
        C_p = Ti.T @ passive_C(model, q, V1, qdot) @ Ti - M_T @ Tdot @ Ti
        assert np.abs(C_p[:6, 6:]).max() > 1e-3, "the passive C does not decouple (3.86)"
        assert_close(C_p @ T @ np.r_[V1, qdot], C_T @ T @ np.r_[V1, qdot], 1e-6, "same forces")
        assert_close(M_T[:6, :6], np.linalg.inv(T_x).T @ M[:6, :6] @ np.linalg.inv(T_x), 1e-10,
                     "M_x = T_x^-T M_bb T_x^-1 (not (A.4a) as printed)")
    # T_x = T_y = 1: Feurstein's decoupled equations are Theorem 1's
    T, Tdot = decoupling_transform(model, q, qdot, np.eye(6), np.eye(model.n))
    Ti = np.linalg.inv(T)
    M_T = Ti.T @ M @ Ti
    C_T = Ti.T @ C @ Ti - M_T @ Tdot @ Ti
    assert_close(T @ np.r_[V1, qdot], np.r_[mu, qdot], 1e-12, "v_x = locked velocity")
    assert_close(M_T[6:, 6:], model.reduced_shape_inertia(q), 1e-10, "M_y = Lambda_q (19a)")
    mu_dot, qddot = model.forward_dynamics_reduced(q, mu, qdot, tau, F1)
    xi, xi_dot = np.r_[mu, qdot], np.r_[mu_dot, qddot]
    assert_close(M_T @ xi_dot + C_T @ xi, Ti.T @ np.r_[F1, tau], 1e-6,
                 "Feurstein (3.81) with Theorem 1's accelerations")
    D_qdot, D_mu = model.cc_matrices(q, mu, qdot)
    assert_close(C_T @ xi, (D_qdot - D_mu) @ xi, 1e-6, "same CC forces as eq. 18")


def test_feurstein_3_96_internal_velocity_is_the_generalized_jacobian(model, rng):
    """J_int_j = J_jq - A_jb M_bb^-1 M_bq (3.96) from Pinocchio's LOCAL joint Jacobians equals
    [Mishra2023]'s generalized Jacobian J~_k = Ad_1k^-1 (Z_k - A_l) (eq. 14)."""
    q = random_state(model, rng)[0]
    pm = model.pin_model
    pd = pm.createData()
    q_pin = np.r_[np.zeros(3), 0, 0, 0, 1, q]
    pin.computeJointJacobians(pm, pd, q_pin)
    kin = model.kinematics(q)
    A = blocks(model, q)[3]
    for k in range(1, pm.njoints):
        J = pin.getJointJacobian(pm, pd, k, pin.LOCAL)[SWAP]
        J = np.c_[J[:, SWAP], J[:, 6:]]                    # columns [V1 (omega, v); qdot]
        J_int = J[:, 6:] - J[:, :6] @ A
        g_1k = pd.oMi[k].homogeneous
        assert_close(Ad(g_1k) @ J_int, kin.Z[k - 1] - kin.A_l, 1e-11, f"J_int of joint {k}")


def test_feurstein_3_96_external_velocity_is_the_average_velocity_and_conserved(model, rng):
    """With T_x = A_cb (c: CoM, inertial axes) v_x is [Saccon2017]'s average velocity, M_x the
    centroidal inertia, and M_x v_x = h_G is conserved by Theorem 1's dynamics (F1 = 0)."""
    q, qdot, mu, tau, _ = _state(model, rng)
    g1 = random_pose(rng)
    kin = model.kinematics(q)
    A_cb = np.linalg.inv(Ad(cen.centroidal_pose(kin, g1)))
    M_x = np.linalg.inv(A_cb).T @ kin.M_b @ np.linalg.inv(A_cb)
    assert_close(A_cb @ mu, cen.average_velocity(kin, g1, mu), 1e-12, "v_x = V_G")
    assert_close(M_x, cen.centroidal_inertia(kin, g1), 1e-12, "M_x = I_G")
    mu_dot, qddot = model.forward_dynamics_reduced(q, mu, qdot, tau)

    def h_G(s):
        q_s, mu_s, qdot_s = q + s * qdot, mu + s * mu_dot, qdot + s * qddot
        g_s = g1 @ exp(s * model.base_velocity(q, mu, qdot))
        k = model.kinematics(q_s)
        return cen.centroidal_momentum(k, g_s, model.base_velocity(q_s, mu_s, qdot_s), qdot_s)
    dh = (h_G(H) - h_G(-H)) / (2 * H)
    assert_close(dh, np.zeros(6), 1e-6 * max(1.0, np.abs(h_G(0)).max()), "d h_G / dt")


def test_mueller_geometric_phase_sign(orbital, rng):
    """Digest 000 erratum (4.8): for a small counter-clockwise loop the base moves by
    +a B_IJ with Mueller's B (= -a DA_l(e_I) e_J, [Mishra2023] eq. 11), not -a B_IJ."""
    q0 = random_state(orbital, rng)[0]
    I, J = 1, 3
    Psi = np.eye(orbital.n)[:, [I, J]]
    gait = PlanarGait.circle(Psi, (0, 0), 2e-3, samples=32, q_c=q0)
    B = mueller_curvature(orbital, q0)[:, I, J]
    assert_close(log(net_displacement(orbital, gait.qs)), gait.signed_area * B,
                 2e-2 * np.abs(gait.signed_area * B).max(), "+a B_IJ")
