"""The MuJoCo plant is the same robot as the Pinocchio model: same momentum, energy, dynamics."""
import mujoco
import numpy as np
import pytest

from helpers import assert_close, random_state, random_pose
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.sim.plant import MujocoPlant
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
