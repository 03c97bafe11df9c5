"""The plastic impact map (dynamics/impact.py) on the orbital robot and random trees: the
point's Jacobian against Pinocchio, and the impact against the laws it must obey (contact
point stopped, impulse balance, Carnot's theorem, angular momentum about the contact point)."""
import numpy as np
import pinocchio as pin

from helpers import assert_close, random_state, random_pose
from floating_base_control.conventions import to_pinocchio
from floating_base_control.dynamics.impact import generalized_inertia, plastic_impact, point_jacobian
from floating_base_control.dynamics.rel_matrices import momentum_map
from floating_base_control.conventions import SWAP
from floating_base_control.lie import skew


def _contact_point(model, q, offset):
    """A point ``offset`` (last joint's frame) on the last link: ``(p, J_pq)`` in base axes."""
    pm = model.pin_model
    pd = pm.createData()
    q_pin = to_pinocchio(np.eye(4), q)
    pin.computeJointJacobians(pm, pd, q_pin)
    jid = pm.njoints - 1
    o = pd.oMi[jid].translation
    p = pd.oMi[jid].act(offset)
    J = pin.getJointJacobian(pm, pd, jid, pin.LOCAL_WORLD_ALIGNED)[:, 6:]
    return p, J[:3] - skew(p - o) @ J[3:]


def test_point_jacobian_gives_pinocchio_point_velocity(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    offset = rng.normal(size=3) * 0.1
    p, J_pq = _contact_point(model, q, offset)
    pm = model.pin_model
    pd = pm.createData()
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    pin.forwardKinematics(pm, pd, q_pin, v_pin)
    jid = pm.njoints - 1
    v_joint = pin.getVelocity(pm, pd, jid, pin.LOCAL_WORLD_ALIGNED)
    p_world = pd.oMi[jid].act(offset)
    v_point = v_joint.linear + np.cross(v_joint.angular, p_world - pd.oMi[jid].translation)
    R = g1[:3, :3]
    assert_close(R @ point_jacobian(p, J_pq) @ np.concatenate([V1, qdot]), v_point, 1e-11,
                 "point velocity vs Pinocchio")


def test_plastic_impact_obeys_impulse_balance_carnot_and_momentum_about_the_contact(model, rng):
    q, qdot, V1, _ = random_state(model, rng)
    g1 = random_pose(rng)
    kin = model.kinematics(q)
    M = generalized_inertia(kin)
    pm = model.pin_model
    to_pin = np.r_[SWAP, 6 + np.arange(model.n)]         # [V1; qdot] -> Pinocchio's v
    M_pin = pin.crba(pm, pm.createData(), to_pinocchio(g1, q))
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T                  # older Pinocchio fills the upper half
    assert_close(M, M_pin[np.ix_(to_pin, to_pin)], 1e-10, "M vs Pinocchio's CRBA")
    p, J_pq = _contact_point(model, q, rng.normal(size=3) * 0.1)
    J = point_jacobian(p, J_pq)
    v_minus = np.concatenate([V1, qdot])
    v_plus, P = plastic_impact(M, J, v_minus)
    assert_close(J @ v_plus, np.zeros(3), 1e-10, "contact point stopped")
    assert_close(M @ (v_plus - v_minus), J.T @ P, 1e-10, "M dv = J^T P")
    dv = v_minus - v_plus
    loss = 0.5 * v_minus @ M @ v_minus - 0.5 * v_plus @ M @ v_plus
    assert loss > 0.0
    assert_close(loss, 0.5 * dv @ M @ dv, 1e-10 * (1.0 + loss), "Carnot: loss = energy of the jump")

    def about_contact(v):
        h = momentum_map(kin, g1, v[:6], v[6:])          # [angular about the origin; linear]
        p_world = g1[:3, :3] @ p + g1[:3, 3]
        return h[:3] - np.cross(p_world, h[3:])

    assert_close(about_contact(v_plus), about_contact(v_minus), 1e-10,
                 "angular momentum about the contact point")
