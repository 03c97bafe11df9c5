"""Every row of docs/reference/conventions.md, pinned against the other library's own behaviour."""
import mujoco
import numpy as np
import pinocchio as pin
import pytest

from helpers import assert_close, random_pose
from floating_base_control import conventions as cv
from floating_base_control import lie

DT = 1e-7


def test_quaternion_orders():
    R = lie.exp(np.r_[0, 0, np.pi / 2, 0, 0, 0])[:3, :3]     # 90 deg about z
    s = np.sqrt(0.5)
    assert_close(cv.matrix_to_quat_wxyz(R), [s, 0, 0, s], 1e-15)
    assert_close(cv.wxyz_to_xyzw([s, 0, 0, s]), [0, 0, s, s], 0)
    assert_close(cv.xyzw_to_wxyz([0, 0, s, s]), [s, 0, 0, s], 0)
    assert_close(pin.Quaternion(R).coeffs(), [0, 0, s, s], 1e-15)   # Pinocchio: x, y, z, w


def test_package_quaternions_have_w_nonnegative_and_read_any_scale(rng):
    """transforms3d row: w, x, y, z; the package writes w >= 0 and reads non-unit quaternions."""
    for _ in range(20):
        R = random_pose(rng)[:3, :3]
        quat = cv.matrix_to_quat_wxyz(R)
        assert quat[0] >= 0 and np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-15)
        assert_close(cv.quat_wxyz_to_matrix(-3.0 * quat), R, 1e-14)
        mj = np.zeros(4)
        mujoco.mju_mat2Quat(mj, R.reshape(-1))                     # MuJoCo: w, x, y, z
        assert_close(mj * np.sign(mj[0]), quat, 1e-14)


def test_matrix_to_quaternion_is_transforms3d_mat2quat_to_the_last_bit_one_or_a_stack(rng):
    """The compiled K and eigenvector choice around numpy's eigh: transforms3d's numbers (w >= 0), for one
    matrix and row by row for a stack, at rotations near 0, near pi (w ~ 0) and exactly pi (equal eigenvalues)."""
    from transforms3d.quaternions import mat2quat
    angles = np.r_[rng.uniform(0, np.pi, 300), 1e-9 * rng.uniform(size=50), np.pi - 1e-9 * rng.uniform(size=50)]
    axes = rng.normal(size=(len(angles), 3))
    R = [lie.exp(np.r_[a * n / np.linalg.norm(n), 0, 0, 0])[:3, :3] for a, n in zip(angles, axes)]
    R = np.array(R + [np.eye(3), np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]), np.diag([-1.0, -1, 1])])
    expected = np.array([q if q[0] >= 0 else -q for q in map(mat2quat, R)])
    stack = cv.matrix_to_quat_wxyz(R)
    assert stack.shape == (len(R), 4) and stack.tobytes() == expected.tobytes()
    assert all(cv.matrix_to_quat_wxyz(r).tobytes() == q.tobytes() for r, q in zip(R, expected))
    assert (stack[:, 0] >= 0).all()


def test_pinocchio_free_flyer_is_body_linear_then_angular(rng):
    g1, V1, q, qdot = random_pose(rng), rng.normal(size=6), rng.normal(size=3), rng.normal(size=3)
    q_pin, v_pin = cv.to_pinocchio(g1, q, V1, qdot)
    g_back, q_back, V_back, qd_back = cv.from_pinocchio(q_pin, v_pin)
    assert_close(g_back, g1, 1e-14)
    assert_close(np.r_[q_back, V_back, qd_back], np.r_[q, V1, qdot], 0)
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    q_next = pin.integrate(model, q_pin[:7], v_pin[:6] * DT)
    g_next, _ = cv.from_pinocchio(np.r_[q_next, q])
    assert_close(g_next, g1 @ lie.exp(V1 * DT), 1e-14, "g1_dot = g1 V1^ with V1 = [omega; v]")


def test_wrench_order_matches_pinocchio(rng):
    F = rng.normal(size=6)
    force = pin.Force(cv.swap_halves(F))
    assert_close(force.angular, F[:3], 0, "[moment; force] -> Pinocchio [force; moment]")
    assert_close(cv.swap_halves(cv.swap_halves(F)), F, 0)


FREE_BODY = """<mujoco><option gravity="0 0 0"/><worldbody><body name="b">
<freejoint/><geom type="box" size=".3 .2 .1" mass="2"/></body></worldbody></mujoco>"""


def test_mujoco_free_joint_world_linear_body_angular(rng):
    m = mujoco.MjModel.from_xml_string(FREE_BODY)
    d = mujoco.MjData(m)
    g1, V1 = random_pose(rng), rng.normal(size=6)
    qpos, qvel = cv.to_mujoco(g1, np.zeros(0), V1, np.zeros(0))
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    local = np.zeros(6)
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, 1, local, 1)
    assert_close(local, V1, 1e-12, "MuJoCo's body-frame [rot; lin] velocity is V1")
    back = cv.from_mujoco(d.qpos.copy(), d.qvel.copy())
    assert_close(back[0], g1, 1e-14)
    assert_close(back[2], V1, 1e-14)
    qpos_next = d.qpos.copy()
    mujoco.mj_integratePos(m, qpos_next, d.qvel, DT)
    g_next = cv.from_mujoco(qpos_next, d.qvel)[0]
    assert_close(g_next, g1 @ lie.exp(V1 * DT), 1e-12, "MuJoCo integrates the same motion")
