"""floating_base_controller started as launch/orbital_hardware.launch.py starts it (its parameter file,
overrides and remappings, read from the launch file), against a fake driver: joint states of a shape far
from the demo's set-point, best-effort as a driver publishes them, and a motion-capture base pose.  On
activation it holds that shape (issue 24, item 4)."""
import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from helpers.launch_files import ROOT, node_launch  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from floating_base_control.experiments.orbital.scenario import OrbitalScenario  # noqa: E402

NODE = "floating_base_controller"
LAUNCH = node_launch(ROOT / "launch" / "orbital_hardware.launch.py", NODE)
JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
DEMO_SETPOINT = np.array(OrbitalScenario().q_d)
SHAPE = DEMO_SETPOINT + np.r_[0.4, -0.3, 0.4, 0.5, -0.4, 0.5, -0.5]      # inside the limits, 1.1 rad away


def topic(name):
    """The topic a default name is remapped to, in the root namespace."""
    target = LAUNCH.remappings.get(name, name)
    return target if target.startswith("/") else "/" + target


def setpoints(client):
    """The node's ``setpoint.<joint>`` parameters (``None`` if it does not answer yet)."""
    parameters = AsyncParameterClient(client.node, NODE)
    if not parameters.services_are_ready():
        return None
    future = parameters.get_parameters([f"setpoint.{j}" for j in JOINTS])
    client.executor.spin_until_future_complete(future, timeout_sec=5.0)
    return np.array([v.double_value for v in future.result().values]) if future.done() else None


def test_started_as_the_hardware_launch_starts_it_the_controller_holds_the_measured_shape():
    """Every command from the start to a second (1000 ticks at its 1 kHz) after it took the shape as its
    set-point is a holding torque: zero error, zero velocity, no base motion, so below 1e-6 N m (the demo's
    set-point would command 10 N m/rad x 0.5 rad and more); meanwhile the node controls (status OK)."""
    assert LAUNCH.overrides["hold_on_activate"] is True and LAUNCH.parameters(NODE)["control_rate_hz"] == 1000.0
    domain = ros_harness.domain_for(__name__)
    ros_args = [a for path in LAUNCH.params_files for a in ("--params-file", str(path))]
    ros_args += [a for source, target in LAUNCH.remappings.items() for a in ("-r", f"{source}:={target}")]
    proc = ros_harness.start_node("orbital_controller", domain, LAUNCH.overrides, ros_args)
    driver = ros_harness.Client(domain, JOINTS)
    try:
        commands = []
        driver.node.create_subscription(Float64MultiArray, topic("effort_controller/commands"),
                                        lambda msg: commands.append(np.array(msg.data)), 100)
        joints = driver.node.create_publisher(JointState, topic("joint_states"), qos_profile_sensor_data)
        poses = driver.node.create_publisher(PoseStamped, topic("base_pose"), qos_profile_sensor_data)
        held_at, ticks = None, 0
        while held_at is None or len(commands) < held_at + 1000:
            assert ticks < 60000 and proc.poll() is None, (ticks, len(commands), held_at)   # 5 min of 5 ms
            assert not commands or np.abs(commands[-1]).max() < 1e-6, (len(commands), commands[-1])
            assert held_at is not None or len(commands) < 5000, "no hold after 5000 commands"
            stamp = driver.now_msg()
            state = JointState(name=JOINTS, position=SHAPE.tolist(), velocity=[0.0] * 7)
            state.header.stamp = stamp
            joints.publish(state)
            if ticks % 20 == 0:
                pose = PoseStamped()
                pose.header.stamp, pose.header.frame_id = stamp, "world"
                pose.pose.orientation.w = 1.0
                poses.publish(pose)
            if held_at is None and ticks % 100 == 99 and commands:
                q_d = setpoints(driver)
                if q_d is not None and np.array_equal(q_d, SHAPE):
                    held_at = len(commands)
            ticks += 1
            driver.spin(0.005)
        tau = np.array(commands)
        assert np.abs(tau).max() < 1e-6, np.abs(tau).max(axis=0)
        statuses = [s for s in driver.diagnostics if s.name == f"/{NODE}: control loop"]
        assert any(s.level == DiagnosticStatus.OK and s.message == "controlling" for s in statuses), \
            [s.message for s in statuses][-3:]
    finally:
        driver.close()
        output = ros_harness.stop(proc)
    assert "Traceback" not in output, output
