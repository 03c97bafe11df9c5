"""What real URDFs contain and the loader must handle (urdf_loader.py): locked and mimic joints, a
``world`` root, missing limits, merged bodies, singular shapes; the plant built from the same
description and checked against the model; an arm mounted on a spacecraft; the nodes' parameters."""
import re
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from helpers import random_state
from floating_base_control import FloatingBaseModel, InputError, ModelError
from floating_base_control.ros.params import ROBOT_PARAMS, robot_options, sim_params
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.control.shape import ShapeGains
from floating_base_control.robots.orbital.spacecraft import Spacecraft, default_observer_gains, load_robot, mount_arm
from floating_base_control.resources import example_robot_data_urdfs, orbital_robot_urdf
from floating_base_control.sim.plant import MujocoPlant, check_plant_matches
from floating_base_control.urdf_loader import read_urdf, scale_link_inertial

PANDA = example_robot_data_urdfs()["panda_description/urdf/panda.urdf"]       # Franka with its hand (mimic)
XARM = example_robot_data_urdfs()["xarm_description/urdf/xarm7.urdf"]         # joint damping and friction


def body(name, m=1.0, i=(0.1, 0.1, 0.1)):
    return (f'<link name="{name}"><inertial><mass value="{m}"/><inertia ixx="{i[0]}" ixy="0" ixz="0" '
            f'iyy="{i[1]}" iyz="0" izz="{i[2]}"/></inertial></link>')


def joint(name, parent, child, kind="revolute", axis="0 0 1", xyz="0.5 0 0", limit=None, extra=""):
    limit = '<limit lower="-2" upper="2" effort="10" velocity="2"/>' if limit is None else limit
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="0.1 0.2 0.3"/><axis xyz="{axis}"/>{limit}{extra}</joint>')


def robot(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


def chain(extra_joint2="", limit2=None):
    return [body("base", 10, (1, 2, 1.5)), body("a"), body("b", 0.5, (0.02, 0.03, 0.04)),
            joint("j1", "base", "a"), joint("j2", "a", "b", axis="0 1 0", limit=limit2, extra=extra_joint2)]


def mass_matrices_equal(a, b, q_a, q_b):
    Ma = pin.crba(a.pin_model, a.pin_model.createData(), np.r_[0, 0, 0, 0, 0, 0, 1, q_a])
    Mb = pin.crba(b, b.createData(), np.r_[0, 0, 0, 0, 0, 0, 1, q_b])
    np.testing.assert_allclose(Ma, Mb, rtol=0, atol=1e-12 * np.abs(Mb).max())


def test_locking_joints_equals_pinocchios_reduced_model(orbital, rng):
    """Locked at a position = Pinocchio's buildReducedModel at that reference configuration."""
    locked = {"panda_joint2": -0.4, "panda_joint7": 1.1}
    model = FloatingBaseModel.from_urdf(orbital_robot_urdf(), locked=locked)
    assert model.joint_names == tuple(j for j in orbital.joint_names if j not in locked)
    ids = [orbital.pin_model.getJointId(j) for j in locked]
    q_ref = pin.neutral(orbital.pin_model)
    for j, value in zip(ids, locked.values()):
        q_ref[orbital.pin_model.idx_qs[j]] = value
    reduced = pin.buildReducedModel(orbital.pin_model, ids, q_ref)
    q = random_state(model, rng)[0]
    mass_matrices_equal(model, reduced, q, q)
    assert model.locked_joints == locked


def test_mimic_groups_are_locked_at_the_leaders_position():
    """The stock Franka with hand loads without editing: the fingers (finger_joint2 mimics joint1)
    are one group held at one opening, equal to Pinocchio's model with both fingers locked there."""
    default = FloatingBaseModel.from_urdf(PANDA)
    assert default.n == 7 and default.locked_joints == {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    model = FloatingBaseModel.from_urdf(PANDA, locked={"panda_finger_joint1": 0.03})
    assert model.locked_joints == {"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.03}
    full = pin.buildModelFromUrdf(PANDA, pin.JointModelFreeFlyer())   # mimic joints as free joints
    ids = [full.getJointId(f"panda_finger_joint{k}") for k in (1, 2)]
    q_ref = pin.neutral(full)
    q_ref[[full.idx_qs[j] for j in ids]] = 0.03
    q = np.linspace(-0.5, 0.5, 7)
    mass_matrices_equal(model, pin.buildReducedModel(full, ids, q_ref), q, q)
    with pytest.raises(ModelError, match=r"\['panda_finger_joint2'\] are mimic joints; pass mimic='lock'"):
        FloatingBaseModel.from_urdf(PANDA, mimic="error")


@pytest.mark.parametrize("locked, message", [
    ({"nope": 0.0}, "cannot lock ['nope']: no such joints"),
    ({"j1": float("nan")}, "locked position of 'j1' must be a finite number"),
])
def test_bad_locks_are_named(locked, message):
    with pytest.raises(ModelError) as err:
        FloatingBaseModel.from_urdf_string(robot(*chain()), locked=locked)
    assert message in str(err.value)


def test_a_lock_outside_the_joints_range_is_refused():
    """--lock panda_joint4=1.0 (range [-3.0718, -0.0698]) was accepted; the limits themselves are inside, and a
    joint without a range (continuous, or lower >= upper: no limit) takes any value."""
    with pytest.raises(ModelError, match=r"cannot lock 'panda_joint4' at 1: outside its range \[-3.0718, -0.0698\]"):
        FloatingBaseModel.from_urdf(orbital_robot_urdf(), locked={"panda_joint4": 1.0})
    assert FloatingBaseModel.from_urdf(orbital_robot_urdf(), locked={"panda_joint4": -0.0698}).n == 6
    with pytest.raises(ModelError, match="cannot lock 'panda_finger_joint1' at 0.05: outside its range"):
        FloatingBaseModel.from_urdf(PANDA, locked={"panda_finger_joint1": 0.05})
    with pytest.raises(ModelError, match="cannot lock 'j1' at 7: outside its range \\[-2, 2\\]"):
        FloatingBaseModel.from_urdf_string(robot(*chain()), locked={"j1": 7.0})
    unlimited = robot(*chain()).replace('lower="-2" upper="2"', 'lower="2" upper="-2"')
    assert FloatingBaseModel.from_urdf_string(unlimited, locked={"j1": 7.0}).locked_joints["j1"] == 7.0


def test_world_root_is_dropped_and_the_plant_floats_the_same_base(rng):
    """A ``world`` root fixed to the base: the base is its child, for the model and the plant
    (MuJoCo would otherwise make ``world`` its world body and float the child, rotated)."""
    plain = FloatingBaseModel.from_urdf_string(robot(*chain()))
    world = robot('<link name="world"/>', joint("fix", "world", "base", "fixed", xyz="1 2 3"), *chain())
    model = FloatingBaseModel.from_urdf_string(world)
    assert model.description.dropped_root == "world" and model.link_names[0] == "base"
    q = random_state(model, rng)[0]
    mass_matrices_equal(model, plain.pin_model, q, q)
    MujocoPlant.from_urdf("<string>", model)                           # checked at construction
    with pytest.raises(ModelError, match="root link 'world' is attached to the robot by"):
        FloatingBaseModel.from_urdf_string(robot('<link name="world"/>', joint("hinge", "world", "base"), *chain()))


def test_missing_or_zero_limits_mean_no_limit():
    """URDF effort="0" / no <limit>: no effort limit; the plant has no control range, the controller
    accepts the model's limits (it refused effort 0 before)."""
    model = FloatingBaseModel.from_urdf_string(robot(*chain(
        limit2='<limit lower="-1" upper="1" effort="0" velocity="0"/>'))
        .replace('<limit lower="-2" upper="2" effort="10" velocity="2"/>', ""))
    assert np.isinf(model.effort_limits).all() and np.isinf(model.velocity_limits).all()
    assert np.isinf(model.position_limits[0]).all() and (model.position_limits[1] == [-1, 1]).all()
    plant = MujocoPlant.from_urdf("<string>", model)
    assert not plant.model.actuator_ctrllimited.any()
    OrbitalController(model, np.zeros(2), ShapeGains(np.ones(2), np.ones(2)))


def test_inertia_is_checked_on_the_merged_bodies():
    """A 1-microgram dummy link with a rank-1 inertia (as in Go1, ANYmal) fixed to a body is harmless;
    the same link alone on a joint is not a rigid body, and the error names it."""
    dummy = body("imu", 1e-9, (0.0, 0.0, 1e-9))
    fixed = robot(*chain(), dummy, joint("imu_joint", "b", "imu", "fixed"))
    assert FloatingBaseModel.from_urdf_string(fixed).n == 2
    with pytest.raises(ModelError, match="link 'imu' is not physically consistent: its principal moments"):
        FloatingBaseModel.from_urdf_string(robot(*chain(), dummy, joint("imu_joint", "b", "imu")))
    bad = body("cam", 1.0, (0.01, 0.01, 0.5))
    with pytest.raises(ModelError, match="the body of links 'b', 'cam' \\(merged by fixed joints\\)"):
        FloatingBaseModel.from_urdf_string(robot(*chain(), bad, joint("cam_joint", "b", "cam", "fixed")))


def test_singular_combination_of_joints_is_named():
    """Two coaxial joints around a massless link: turning one by +a and the other by -a moves nothing,
    at every shape; the error names that combination."""
    parts = [body("base", 10, (1, 2, 1.5)), '<link name="a"/>', body("b"),
             joint("j1", "base", "a"), joint("j2", "a", "b", xyz="0 0 0").replace('rpy="0.1 0.2 0.3"', 'rpy="0 0 0"')]
    with pytest.raises(ModelError) as err:
        FloatingBaseModel.from_urdf_string(robot(*parts))
    assert re.search(r"singular at every checked shape \(6, within the limits\).*combination "
                     r"[+-]0\.707 j1 [+-]0\.707 j2", str(err.value))


def test_plant_that_is_not_the_model_is_refused(orbital):
    heavier = FloatingBaseModel.from_urdf_string(scale_link_inertial(read_urdf(orbital_robot_urdf()), None, 1.01))
    plant = MujocoPlant.from_urdf(orbital_robot_urdf(), orbital, contacts=False)
    with pytest.raises(ModelError, match="the MuJoCo plant does not match the model"):
        check_plant_matches(plant, heavier)


def test_joint_damping_and_friction_are_a_reported_mismatch_or_removed():
    model = FloatingBaseModel.from_urdf(XARM)
    with pytest.warns(UserWarning, match="joint damping and friction that the controller's model lacks"):
        plant = MujocoPlant.from_urdf(XARM, model)
    assert plant.model_mismatch["damping"]["joint1"] == 10.0 and plant.model_mismatch["friction"]["joint1"] == 1.0
    assert plant.model.dof_damping[plant.qvel_idx[0]] == 10.0
    ideal = MujocoPlant.from_urdf(XARM, model, joint_dynamics="ideal")
    assert ideal.model_mismatch == {} and not ideal.model.dof_damping.any() and not ideal.model.dof_frictionloss.any()


def test_mounting_the_orbital_robots_arm_gives_the_orbital_robot(orbital, rng):
    """The shipped robot = the default Spacecraft + its Panda: mount_arm rebuilds it exactly."""
    root = ET.fromstring(read_urdf(orbital_robot_urdf()))
    for el in list(root):
        if el.get("name") in ("base_link", "arm_mount"):
            root.remove(el)
    model = FloatingBaseModel.from_urdf_string(mount_arm(ET.tostring(root, encoding="unicode")))
    q = random_state(model, rng)[0]
    mass_matrices_equal(model, orbital.pin_model, q, q)


def test_observer_gains_scale_with_the_locked_inertia(orbital):
    """Same l / M (the observer's poles) on the shipped robot and on a 2 kg spacecraft."""
    q = np.zeros(7)
    small = load_robot(arm_urdf=PANDA, spacecraft=Spacecraft(2.0, inertia=(0.02, 0.03, 0.025, 0, 0, 0)))[0]
    for m in (orbital, small):
        g = default_observer_gains(m, q)
        assert g.l_trans / m.mass == pytest.approx(1.0)
        assert g.l_rot / (np.trace(m.locked_inertia(q)[:3, :3]) / 3) == pytest.approx(1.0)
    assert default_observer_gains(small, q).l_trans < 25.0 < default_observer_gains(orbital, q).l_trans


def test_node_parameters_load_as_the_api():
    """What both orbital nodes do with their parameters: same model, same errors."""
    specs = {s.name: s.default for s in sim_params() if s.name in ROBOT_PARAMS}
    params = {**specs, "urdf": PANDA, "locked_joints": ["panda_joint7", "panda_finger_joint1"],
              "locked_positions": [0.5, 0.02]}
    model, path = load_robot(**robot_options(params.get))
    api = FloatingBaseModel.from_urdf(PANDA, locked={"panda_joint7": 0.5, "panda_finger_joint1": 0.02})
    assert path == PANDA and model.joint_names == api.joint_names and model.locked_joints == api.locked_joints
    np.testing.assert_array_equal(model.locked_inertia(np.zeros(6)), api.locked_inertia(np.zeros(6)))
    with pytest.raises(InputError, match="locked_positions needs one value per locked joint"):
        robot_options({**params, "locked_positions": [0.5]}.get)
    with pytest.raises(ModelError, match="mimic joints; pass mimic='lock'"):
        load_robot(**robot_options({**params, "mimic": "error"}.get))
    arm = load_robot(**robot_options({**specs, "arm_urdf": PANDA}.get))[0]
    assert arm.link_names[0] == "spacecraft_bus" and arm.mass == pytest.approx(300 + api.mass)


def test_meshes_only_when_asked_and_found_through_ros_package_path(monkeypatch, tmp_path):
    """``package://example-robot-data/...`` meshes: not needed by default; with geometry='meshes'
    resolved through ROS_PACKAGE_PATH, else the package's error naming the mesh."""
    model = FloatingBaseModel.from_urdf(PANDA)
    assert MujocoPlant.from_urdf(PANDA, model, joint_dynamics="ideal").model.ngeom == 0
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))             # no ament index entry either
    with pytest.raises(ModelError, match="mesh 'package://example-robot-data/robots/panda_description/meshes/"):
        MujocoPlant.from_urdf(PANDA, model, geometry="meshes", joint_dynamics="ideal")
    share = PANDA[:PANDA.index("/example-robot-data/")]
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"{tmp_path}:{share}")
    assert MujocoPlant.from_urdf(PANDA, model, geometry="meshes", joint_dynamics="ideal").model.nmesh > 0


def test_arm_scenario_defaults_are_plain_numbers_within_the_limits(tmp_path):
    """The scenario's fields go to YAML and ROS parameters: plain floats, one per joint, inside the limits."""
    from floating_base_control.experiments.orbital.scenario import arm_scenario
    s = arm_scenario(PANDA, urdf_out=tmp_path / "robot.urdf", duration_s=1.0)
    model = FloatingBaseModel.from_urdf(s.urdf)
    for field in (s.q0, s.q_d, s.stiffness, s.damping, (s.observer.l_rot, s.observer.l_trans)):
        assert all(type(x) is float for x in field)
    lo, hi = model.position_limits.T
    assert len(s.q0) == model.n == 7 and np.all((lo <= s.q_d) & (s.q_d <= hi) & (lo <= s.q0) & (s.q0 <= hi))
