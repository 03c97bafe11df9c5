"""Input checks and the safe command (ROS-free part of the nodes' safety)."""
import numpy as np
import pytest

from floating_base_control import InputError
from floating_base_control.control.watchdog import (JointStateMapper, Watchdog, WatchdogConfig, check_pose,
                                                    safe_torque)

JOINTS = ["a", "b", "c"]


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


def test_watchdog_reasons_and_freshness():
    w = Watchdog(WatchdogConfig({"joint state": 0.1, "base pose": 1.0}))
    assert w.reasons(0.0) == ["no joint state yet", "no base pose yet"]
    w.received("joint state", 0.0)
    w.received("base pose", 0.0)
    assert w.reasons(0.05) == [] and w.fresh("joint state", 0.05)
    assert w.reasons(0.5) == ["joint state stale (0.500 s > 0.1 s)"] and not w.fresh("joint state", 0.5)
    w.received("joint state", 0.6, "joint state lacks joints ['c']")
    assert "joint state lacks joints ['c']" in w.reasons(0.6) and not w.fresh("joint state", 0.6)
    w.received("joint state", 0.7)
    assert w.reasons(0.7) == []


def test_safe_torque_is_finite_and_limited():
    limits = np.array([1.0, 1.0, 5.0])
    damping = WatchdogConfig({}, "damping", 2.0)
    assert safe_torque(damping, np.array([0.1, -3.0, 1.0]), limits).tolist() == [-0.2, 1.0, -2.0]
    assert safe_torque(damping, None, limits).tolist() == [0.0, 0.0, 0.0]
    assert safe_torque(damping, np.array([np.nan, 0, 0]), limits).tolist() == [0.0, 0.0, 0.0]
    assert safe_torque(WatchdogConfig({}, "zero"), np.ones(3), limits).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(InputError, match="safe_mode"):
        WatchdogConfig({}, "brake")


def test_pose_checks():
    check_pose([0, 0, 0], [0, 0, 0, 1])
    with pytest.raises(InputError, match="non-finite"):
        check_pose([np.inf, 0, 0], [0, 0, 0, 1])
    with pytest.raises(InputError, match="quaternion has norm 0"):
        check_pose([0, 0, 0], [0, 0, 0, 0])
