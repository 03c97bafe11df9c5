"""The MuJoCo plant is the same robot as the Pinocchio model: same momentum, energy, dynamics."""
import mujoco
import numpy as np
import pytest

from helpers import assert_close, random_state, random_pose
from floating_base_control import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.sim.plant import PLANT_MATCH_TOL, MujocoPlant, check_plant_matches
from helpers.pinocchio_reference import PinRef


@pytest.fixture(scope="module")
def plant(orbital):
    return MujocoPlant.from_urdf(orbital_robot_urdf(), orbital, contacts=False)


def test_same_mass_and_momentum(plant, orbital, rng):
    g1, (q, qdot, V1, _) = random_pose(rng), random_state(orbital, rng)
    plant.set_state(g1, q, V1, qdot)
    assert plant.mass == pytest.approx(orbital.mass, rel=1e-12)
    assert_close(plant.momentum(), orbital.momentum_map(g1, q, V1, qdot), 1e-11, "momentum map (Def. 2)")
    back = plant.state()
    assert_close(back[0], g1, 1e-13)
    assert_close(np.r_[back[1], back[2], back[3]], np.r_[q, V1, qdot], 1e-13)


def test_momentum_after_steps_is_that_of_the_current_state(plant, orbital, rng):
    """``momentum()`` after ``mj_step`` (whose derived quantities are one step old) is the momentum of
    the state reached: that of a fresh MuJoCo data at the same ``qpos, qvel``, and Pinocchio's."""
    g1, (q, qdot, V1, _) = random_pose(rng), random_state(orbital, rng)
    plant.set_state(g1, q, V1, qdot)
    plant.step(rng.uniform(-1, 1, orbital.n), nstep=3)
    fresh = MujocoPlant(plant.model, orbital.joint_names)
    fresh.data.qpos[:], fresh.data.qvel[:] = plant.data.qpos, plant.data.qvel
    mujoco.mj_forward(fresh.model, fresh.data)
    assert_close(plant.momentum(), fresh.momentum(), 0, "momentum of the current state")
    assert_close(plant.momentum(), orbital.momentum_map(*plant.state()), 1e-11, "momentum map (Def. 2)")


def test_same_forward_dynamics(plant, orbital, rng):
    g1, (q, qdot, V1, _) = random_pose(rng), random_state(orbital, rng)
    tau = rng.uniform(-1, 1, orbital.n) * 5
    plant.set_state(g1, q, V1, qdot)
    plant.data.ctrl[plant.act_idx] = tau
    mujoco.mj_forward(plant.model, plant.data)
    acc = plant.data.qacc
    R, omega, v = g1[:3, :3], V1[:3], V1[3:]
    V1_dot = np.r_[acc[3:6], R.T @ acc[:3] - np.cross(omega, v)]   # MuJoCo's linear dof is R v
    expected = PinRef(orbital, q, V1, qdot, g1=g1).aba(tau)
    assert_close(np.r_[V1_dot, acc[plant.qvel_idx]], expected, 1e-10, "MuJoCo qacc = Pinocchio ABA")


def _inertial(mass, inertia, xyz="0 0 0", rpy="0 0 0"):
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/><inertia ixx="{ixx}" '
            f'iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>')


def _fixed(name, parent, child, xyz, rpy="0 0 0"):
    return (f'<joint name="{name}" type="fixed"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/></joint>')


def merged_fixed_children_urdf(leg_inertia, toe_rpy):
    """A leg whose foot links hang on fixed joints with mass (merged into the lower leg, an off-diagonal
    inertia), plus a massless link with an inertia on the base, which MuJoCo drops and the model keeps,
    so the plant takes the model's merged bodies (the class of a quadruped with toe links or an arm with
    its hand on a flange)."""
    return f'''<robot name="merged">
  <link name="base">{_inertial(5.0, (0.1, 0.12, 0.14, 0, 0, 0))}</link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="lower_leg"/><origin xyz="0 0 -0.2"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <link name="lower_leg">{_inertial(1.0, leg_inertia, "0 0 -0.1")}</link>
  {_fixed("ankle", "lower_leg", "foot", "0.05 0 -0.2", toe_rpy)}
  <link name="foot">{_inertial(0.1, (0.002, 0.002, 0.003, 1e-4, 0, 0), "0.01 0 0")}</link>
  {_fixed("toe_joint", "foot", "toe", "0.02 0.01 -0.03")}
  <link name="toe">{_inertial(0.05, (1e-4, 1e-4, 1e-4, 0, 0, 0))}</link>
  {_fixed("imu_joint", "base", "imu", "0.1 0 0")}
  <link name="imu">{_inertial(0.0, (1e-3, 1e-3, 1e-3, 0, 0, 0))}</link>
</robot>'''


@pytest.mark.parametrize("leg_inertia, toe_rpy", [((0.01, 0.01, 0.001, 0, 0, 0), "0.3 0.2 0.1"),
                                                  ((0.01, 0.012, 0.003, 1e-3, -5e-4, 2e-4), "0 0 0.7854"),
                                                  ((0.0, 0.0, 0.0, 0, 0, 0), "0.3 0.2 0.1")],
                         ids=["diagonal leg", "off-diagonal leg", "point-mass leg"])
def test_fixed_children_with_mass_merged_into_a_body_build_the_same_plant(tmp_path, leg_inertia, toe_rpy):
    path = tmp_path / "merged.urdf"
    path.write_text(merged_fixed_children_urdf(leg_inertia, toe_rpy))
    model = FloatingBaseModel.from_urdf(path)
    plant = MujocoPlant.from_urdf(path, model, joint_dynamics="ideal")
    assert plant.inertias_from_model       # the path that wrote full inertias into fused bodies
    for seed in (1, 2, 3):
        assert max(check_plant_matches(plant, model, seed)) <= PLANT_MATCH_TOL
