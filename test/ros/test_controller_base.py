"""ControlNode in this process: what happens around a control step that fails, at start with a
bad parameter value, and when the node stops (the node's own code, no DDS peer needed)."""
import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

import rclpy  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from floating_base_control.ros.orbital_controller import ControllerNode  # noqa: E402
from floating_base_control.ros.hopper_controller import HopperControllerNode  # noqa: E402
from floating_base_control.ros.messages import seconds_to_stamp  # noqa: E402
from floating_base_control.validation import FloatingBaseError  # noqa: E402

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=ros_harness.domain_for(__name__))
    yield ctx
    rclpy.shutdown(context=ctx)


def controller(context, **params):
    node = ControllerNode(context=context, parameter_overrides=[
        Parameter("watchdog.safe_mode", value="damping"), Parameter("watchdog.max_base_pose_age", value=10.0),
        Parameter("watchdog.max_joint_state_age", value=10.0),       # a loaded machine is slow between calls
        *[Parameter(k.replace("__", "."), value=v) for k, v in params.items()]])
    node.sent = []
    publish = node.publish_commands
    node.publish_commands = lambda commands: (node.sent.append(commands[0].copy()), publish(commands))
    return node


def feed(node, q, qdot):
    now = node.now()
    node.on_joint_state(JointState(header=Header(stamp=seconds_to_stamp(now)), name=JOINTS, position=list(q),
                                   velocity=list(qdot)))
    node.watchdog.received("base pose", now)


def test_a_failing_control_step_gives_the_safe_command_and_control_resumes(context):
    node = controller(context)
    qdot = np.r_[np.zeros(6), 0.5]
    healthy = node.control

    def broken(now):
        raise np.linalg.LinAlgError("estimate diverged")
    node.control = broken
    feed(node, np.zeros(7), qdot)
    node._tick()
    assert node.reasons == ["the control step failed: LinAlgError: estimate diverged"]
    assert np.allclose(node.sent[-1], -1.0 * qdot)                   # safe damping (safe_damping = 1)
    node.control = healthy
    feed(node, np.zeros(7), qdot)
    node._tick()
    assert node.reasons == [] and np.isfinite(node.sent[-1]).all()
    node.destroy_node()


def test_leaving_the_active_state_sends_zero_once(context):
    node = controller(context)
    feed(node, np.zeros(7), np.r_[np.zeros(6), 0.5])
    node._tick()
    assert node.trigger_deactivate() is not None and not node.active
    assert np.array_equal(node.sent[-1], np.zeros(7))
    n = len(node.sent)
    node.destroy_node()                                              # inactive: nothing more
    assert len(node.sent) == n


def test_a_bad_initial_parameter_value_is_named_at_start_and_the_node_destroyed(context, monkeypatch):
    destroyed, destroy = [], HopperControllerNode.destroy_node
    monkeypatch.setattr(HopperControllerNode, "destroy_node", lambda node: (destroyed.append(node), destroy(node)))
    with pytest.raises(FloatingBaseError, match="liftoff_force .* touchdown_force"):
        HopperControllerNode(context=context, parameter_overrides=[Parameter("liftoff_force", value=5.0)])
    assert len(destroyed) == 1          # not left to the garbage collector (its DDS teardown can hang a process)


def test_hold_on_activate_sets_every_setpoint_to_the_measured_position_within_its_range(context):
    node = controller(context, hold_on_activate=True)
    q = np.r_[0.1, -0.2, 0.3, -2.0, 0.4, 1.5, 3.5]                   # joint 7 beyond its upper limit
    feed(node, q, np.zeros(7))
    node._tick()
    lo, hi = node.model.position_limits.T
    setpoints = [node.get_parameter(f"setpoint.{j}").value for j in JOINTS]
    assert np.array_equal(setpoints, np.clip(q, lo, hi)) and setpoints[6] == hi[6]
    assert np.array_equal(node.controller.q_d, setpoints)
    node.destroy_node()


def test_the_hooks_are_declared_and_both_controller_nodes_implement_them():
    from floating_base_control.ros.controller_base import ControlNode
    assert ControlNode.__abstractmethods__ == {"configure", "apply_parameters", "control", "safe_commands",
                                              "publish_commands", "diagnostic_values"}
    assert not ControllerNode.__abstractmethods__ and not HopperControllerNode.__abstractmethods__
    with pytest.raises(TypeError, match="abstract"):
        ControlNode("incomplete", [])
