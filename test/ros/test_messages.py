"""The ROS message edge (docs/reference/conventions.md, ROS rows): poses, twists, joint states by name."""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("geometry_msgs.msg")

from geometry_msgs.msg import Pose  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from helpers import assert_close  # noqa: E402
from floating_base_control import InputError  # noqa: E402
from floating_base_control import conventions as cv  # noqa: E402
from floating_base_control.ros import messages as m  # noqa: E402
from floating_base_control.ros.messages import JointStateMapper, check_pose  # noqa: E402
from helpers import random_pose  # noqa: E402

JOINTS = ["a", "b", "c"]


def test_preallocated_messages_are_filled_in_place(rng):
    """``float64_field`` views write into the message itself; ``set_stamp`` is ``seconds_to_stamp`` in place."""
    from sensor_msgs.msg import JointState
    msg = JointState(name=JOINTS)
    view = m.float64_field(msg, "position", 3)
    view[:] = x = rng.normal(size=3)
    assert list(msg.position) == x.tolist()
    for t in (0.0, 1.5e-9, 1795506387.0374, 12.999999999):
        m.set_stamp(msg.header.stamp, t)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (m.seconds_to_stamp(t).sec,
                                                                    m.seconds_to_stamp(t).nanosec)


def test_ros_messages_roundtrip(rng):
    g1, V1 = random_pose(rng), rng.normal(size=6)
    odom = Odometry()
    m.fill_pose_msg(odom.pose.pose, g1)
    m.fill_twist_msg(odom.twist.twist, V1)
    o = odom.pose.pose.orientation
    assert_close([o.x, o.y, o.z, o.w], cv.wxyz_to_xyzw(cv.matrix_to_quat_wxyz(g1[:3, :3])), 0,
                 "ROS quaternion is x, y, z, w")
    assert_close(m.g_from_pose_msg(odom.pose.pose), g1, 1e-15)
    fast = m.fill_pose_msg_se3(Pose(), pin.SE3(g1))
    f = fast.orientation
    assert f.w >= 0
    assert_close([f.x, f.y, f.z, f.w], [o.x, o.y, o.z, o.w], 1e-15, "pin.Quaternion path, same convention")
    assert_close(m.g_from_pose_msg(fast), g1, 1e-15)
    assert odom.twist.twist.angular.x == V1[0] and odom.twist.twist.linear.x == V1[3]
    assert_close(m.twist_from_msg(odom.twist.twist), V1, 0)
    pose = Pose()
    pose.orientation.w, pose.orientation.z = 2.0, 0.0          # not unit: normalized on read
    assert_close(m.g_from_pose_msg(pose), np.eye(4), 1e-15)


def test_joint_states_are_matched_by_name_whatever_the_order():
    mapper = JointStateMapper(JOINTS)
    q, qdot = mapper.map(["c", "gripper", "a", "b"], [3.0, 9.0, 1.0, 2.0], [30.0, 90.0, 10.0, 20.0])
    assert q.tolist() == [1.0, 2.0, 3.0] and qdot.tolist() == [10.0, 20.0, 30.0]
    q, _ = mapper.map(["a", "b", "c"], [4.0, 5.0, 6.0], [0.0, 0.0, 0.0])       # a new order is re-mapped
    assert q.tolist() == [4.0, 5.0, 6.0]


@pytest.mark.parametrize("names, q, qdot, message", [
    (["a", "b"], [1, 2], [1, 2], "lacks joints ['c']"),
    (["a", "x", "c"], [1, 2, 3], [1, 2, 3], "lacks joints ['b'] (unknown names ['x'])"),
    (["a", "b", "c"], [1, 2], [1, 2, 3], "3 names but 2 positions and 3 velocities"),
    (["a", "b", "c"], [1, np.nan, 3], [1, 2, 3], "non-finite position or velocity for ['b']"),
])
def test_bad_joint_states_are_named(names, q, qdot, message):
    with pytest.raises(InputError) as err:
        JointStateMapper(JOINTS).map(names, q, qdot)
    assert message in str(err.value)


def test_pose_checks():
    check_pose([0, 0, 0], [0, 0, 0, 1])
    with pytest.raises(InputError, match="non-finite"):
        check_pose([np.inf, 0, 0], [0, 0, 0, 1])
    with pytest.raises(InputError, match="quaternion has norm 0"):
        check_pose([0, 0, 0], [0, 0, 0, 0])
