"""[Saccon2017]'s centroidal quantities (dynamics/centroidal.py) against Pinocchio's ccrba and
[Saccon2017]'s own identities (digest 004, Sec. 5, items 2-5)."""
import numpy as np
import pinocchio as pin

from helpers import assert_close, random_state, random_pose
from floating_base_control.conventions import to_pinocchio
from floating_base_control.dynamics import centroidal as cen
from floating_base_control.conventions import SWAP
from floating_base_control.lie import skew


def _ccrba(model, g1, q, V1, qdot):
    pm = model.pin_model
    pd = pm.createData()
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    pin.ccrba(pm, pd, q_pin, v_pin)
    return pd


def test_centroidal_quantities_equal_pinocchio_ccrba(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    kin = model.kinematics(q)
    pd = _ccrba(model, g1, q, V1, qdot)
    to_pin_rows = np.r_[SWAP, 6 + np.arange(model.n)]     # columns [V1; qdot] -> Pinocchio's v
    Ag = np.empty_like(pd.Ag)
    Ag[:, to_pin_rows] = cen.centroidal_momentum_matrix(kin, g1)
    assert_close(Ag[SWAP], pd.Ag, 1e-11, "A_G vs ccrba Ag")
    assert_close(cen.centroidal_inertia(kin, g1)[np.ix_(SWAP, SWAP)], pd.Ig.matrix(), 1e-11,
                 "I_G vs ccrba Ig")
    assert_close(cen.centroidal_momentum(kin, g1, V1, qdot)[SWAP], pd.hg.vector, 1e-11,
                 "h_G vs ccrba hg")
    assert_close(g1[:3, :3] @ cen.center_of_mass(kin) + g1[:3, 3], pd.com[0], 1e-12, "CoM")


def test_centroidal_inertia_is_block_diagonal_and_average_velocity_is_locked_velocity(model, rng):
    """[Saccon2017] eq. 14 and App. B: I_G = diag(I_com (inertial axes), m 1); V_G = I_G^-1 h_G
    has the CoM velocity as linear part and R1 omega_loc as angular part (eq. 38)."""
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    kin = model.kinematics(q)
    I_G = cen.centroidal_inertia(kin, g1)
    R1 = g1[:3, :3]
    assert_close(I_G[:3, 3:], np.zeros((3, 3)), 1e-12, "I_G off-diagonal block")
    assert_close(I_G[3:, 3:], model.mass * np.eye(3), 1e-12, "I_G = diag(., m 1)")
    assert_close(I_G[:3, :3], R1 @ cen.inertia_at_com(kin) @ R1.T, 1e-12, "I_G rotational")
    mu = model.locked_velocity(q, V1, qdot)
    V_G = cen.average_velocity(kin, g1, mu)
    h_G = cen.centroidal_momentum(kin, g1, V1, qdot)
    assert_close(V_G, np.linalg.solve(I_G, h_G), 1e-11, "V_G = I_G^-1 h_G (eq. 14)")
    assert_close(V_G[:3], R1 @ mu[:3], 1e-12, "omega_ave = R1 omega_loc (eq. 38)")
    c = cen.center_of_mass(kin)
    c_dot = (cen.center_of_mass(model.kinematics(q + 1e-6 * qdot))
             - cen.center_of_mass(model.kinematics(q - 1e-6 * qdot))) / 2e-6
    pdot_com = R1 @ (V1[3:] + np.cross(V1[:3], c) + c_dot)
    assert_close(V_G[3:], pdot_com, 1e-7, "linear part of V_G = CoM velocity")


def test_momentum_map_and_centroidal_momentum_differ_by_the_com_angular_momentum(model, rng):
    """Digest 004, Sec. 5 item 2: J_A - h_G (angular) = p_com x m pdot_com."""
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    kin = model.kinematics(q)
    J = model.momentum_map(g1, q, V1, qdot)
    h_G = cen.centroidal_momentum(kin, g1, V1, qdot)
    p_com = g1[:3, :3] @ cen.center_of_mass(kin) + g1[:3, 3]
    assert_close(h_G[3:], J[3:], 1e-12, "same linear momentum")
    assert_close(J[:3] - h_G[:3], skew(p_com) @ J[3:], 1e-11, "angular momentum of the CoM")
