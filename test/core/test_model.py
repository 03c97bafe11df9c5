"""Loading URDFs: any tree, and a clear error naming the problem when it cannot be used."""
import math

import numpy as np
import pytest

from helpers import assert_close
from floating_base_control import FloatingBaseModel, InputError, ModelError

LINK = ('<link name="{name}"><inertial><mass value="{m}"/>'
        '<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial></link>')


def urdf(joint_type="revolute", child=None, extra=""):
    child = child or LINK.format(name="arm", m=1, ixx=0.1, iyy=0.1, izz=0.1)
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>' if joint_type != "continuous" else ""
    return ('<robot name="r">' + LINK.format(name="base", m=10, ixx=1, iyy=1, izz=1) + child +
            f'<joint name="j" type="{joint_type}"><parent link="base"/><child link="arm"/>'
            f'<origin xyz="0.5 0 0"/><axis xyz="0 0 1"/>{limit}{extra}</joint></robot>')


def test_orbital_robot_loads(orbital):
    assert orbital.n == 7
    assert orbital.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert orbital.link_names[0] == "base_link"
    assert 300 < orbital.mass < 320
    assert_close(orbital.effort_limits, [87, 87, 87, 87, 12, 12, 12], 0)
    assert not orbital.gravity.any()


def test_joint_names_follow_the_tree_not_the_file(model):
    """Shape coordinates in Pinocchio's depth-first order: each joint after its parent joint."""
    pm = model.pin_model
    assert len(model.joint_names) == model.n == pm.nv - 6
    assert model.joint_names == tuple(pm.names[2:])
    assert all(pm.parents[i] < i for i in range(2, pm.njoints))


def test_continuous_joint_is_a_plain_angle():
    m = FloatingBaseModel.from_urdf_string(urdf("continuous"))
    assert m.pin_model.nq == 7 + 1
    assert m.position_limits[0, 0] == -math.inf and m.effort_limits[0] == math.inf


@pytest.mark.parametrize("text, message", [
    ("<robot", "does not parse"),
    ("<robt name='x'/>", "expected <robot>"),
    (urdf("floating"), "joint 'j' has type 'floating'"),
    (urdf("planar"), "joint 'j' has type 'planar'"),
    (urdf(extra='<mimic joint="j"/>'), "mimic"),
    (urdf(child=LINK.format(name="arm", m=-1, ixx=.1, iyy=.1, izz=.1)), "link 'arm' has negative mass"),
    (urdf(child=LINK.format(name="arm", m=1, ixx=.1, iyy=.1, izz=.3)), "link 'arm' is not physically "
                                                                       "consistent"),
    (urdf(child=LINK.format(name="arm", m=1, ixx=-.1, iyy=.1, izz=.1)), "negative principal moment"),
    (urdf(child=LINK.format(name="arm", m=0, ixx=.1, iyy=.1, izz=.1)), "zero mass but non-zero"),
    (urdf(child=LINK.format(name="arm", m="nan", ixx=.1, iyy=.1, izz=.1)), "non-finite"),
    (urdf(child='<link name="arm"/>'), "joints moving no inertia: ['j']"),
    ('<robot name="r">' + LINK.format(name="base", m=10, ixx=1, iyy=1, izz=1) + "</robot>", "no movable joints"),
    (urdf(child=LINK.format(name="arm", m=1, ixx=0, iyy=0, izz=0))            # one point mass: no rotational
     .replace(LINK.format(name="base", m=10, ixx=1, iyy=1, izz=1), '<link name="base"/>'),   # inertia
     "the locked inertia M_b is singular"),
])
def test_bad_urdf_is_named(text, message):
    with pytest.raises(ModelError, match=None) as err:
        FloatingBaseModel.from_urdf_string(text)
    assert message in str(err.value)


def test_missing_file():
    with pytest.raises(ModelError, match="cannot read URDF"):
        FloatingBaseModel.from_urdf("/nonexistent/robot.urdf")


@pytest.mark.parametrize("call, message", [
    (lambda m: m.locked_inertia(np.zeros(3)), "q must have shape (7,), got (3,)"),
    (lambda m: m.locked_inertia(np.r_[np.nan, np.zeros(6)]), "q has non-finite entries at [[0]]"),
    (lambda m: m.locked_velocity(np.zeros(7), np.zeros(5), np.zeros(7)), "V1 must have shape (6,)"),
    (lambda m: m.curvature(np.zeros(7), np.zeros(7), [np.inf] + [0] * 6), "y has non-finite"),
    (lambda m: m.momentum_map(np.eye(4) * 2, np.zeros(7), np.zeros(6), np.zeros(7)), "g1 is not in SE(3)"),
    (lambda m: m.locked_inertia("abc"), "q must be numeric"),
    (lambda m: m.forward_dynamics_reduced(np.zeros(7), np.zeros(6), np.zeros(7), np.zeros(6)),
     "tau must have shape (7,)"),
])
def test_bad_input_is_named(orbital, call, message):
    with pytest.raises(InputError) as err:
        call(orbital)
    assert message in str(err.value)


def test_gravity_needs_the_base_pose():
    m = FloatingBaseModel.from_urdf_string(urdf(), gravity=(0, 0, -9.81))
    with pytest.raises(InputError, match="g1 is required"):
        m.forward_dynamics_reduced([0.1], np.zeros(6), [0.0], [0.0])
