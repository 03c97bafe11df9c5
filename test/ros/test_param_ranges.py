"""Every value inside a parameter's advertised range is accepted and works (or is refused only
because of another parameter it is coupled with, saying so): the controller nodes in this process,
each range's ends set as rqt_reconfigure would (live parameters) or given at start (read-only ones),
then a control tick that must command finite torques within the URDF's limits."""
import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from floating_base_control.ros.hopper_controller import HopperControllerNode  # noqa: E402
from floating_base_control.ros.hopper_sim import HopperSimNode  # noqa: E402
from floating_base_control.ros.orbital_sim import SimNode  # noqa: E402
from floating_base_control.ros.messages import fill_pose_msg, seconds_to_stamp  # noqa: E402
from floating_base_control.ros.orbital_controller import ControllerNode  # noqa: E402
from floating_base_control.ros.params import hopper_sim_params, sim_params  # noqa: E402
from floating_base_control.experiments.orbital.scenario import OrbitalScenario  # noqa: E402

NODES = {"orbital": ControllerNode, "hopper": HopperControllerNode}


@pytest.fixture(scope="module")
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=ros_harness.domain_for(__name__))
    yield ctx
    rclpy.shutdown(context=ctx)


def make(robot, context, overrides=(), cli_args=None):
    node = NODES[robot](context=context, parameter_overrides=[Parameter(k, value=v) for k, v in overrides],
                        cli_args=cli_args)
    node.sent = []
    publish = node.publish_commands
    node.publish_commands = lambda commands: (node.sent.append([c.copy() for c in commands]), publish(commands))
    return node


def tick(node):
    """One tick with good inputs, stamped now; the joint torques it commands."""
    stamp = seconds_to_stamp(node.now())
    n = node.model.n
    node.on_joint_state(JointState(header=Header(stamp=stamp), name=list(node.model.joint_names),
                                   position=list(np.mean(np.clip(node.model.position_limits, -1, 1), axis=1)),
                                   velocity=[0.1] * n))
    if isinstance(node, HopperControllerNode):
        odom = Odometry(header=Header(stamp=stamp, frame_id="world"), child_frame_id="base_link")
        fill_pose_msg(odom.pose.pose, np.eye(4))
        node._on_odometry(odom)
        node.watchdog.received("foot force", node.now())
    else:
        node.watchdog.received("base pose", node.now())
    node._tick()
    return node.sent[-1][0]


def check_works(node, what):
    tau = tick(node)
    assert np.isfinite(tau).all() and np.all(np.abs(tau) <= node.model.effort_limits + 1e-12), (what, tau)


def typed(spec, value):
    """A range end as rqt sends it: of the parameter's type (an integer parameter refuses a double)."""
    return type(spec.default)(value)


def ranged(robot, context, read_only):
    node = make(robot, context)
    specs = [s for s in node.specs.values() if s.range is not None and s.read_only == read_only]
    node.destroy_node()
    return specs


@pytest.mark.parametrize("robot", NODES)
def test_every_live_parameter_accepts_its_range_ends_and_the_node_goes_on(robot, context):
    node = make(robot, context)
    for spec in ranged(robot, context, read_only=False):
        for value in spec.range:
            (result,) = node.set_parameters([Parameter(spec.name, value=typed(spec, value))])
            coupled = [s for s in node.specs if s != spec.name and s in result.reason]
            assert result.successful or coupled, f"{spec.name} = {value} refused: {result.reason}"
            check_works(node, f"{spec.name} = {value}")
        node.set_parameters([Parameter(spec.name, value=spec.default)])
    node.destroy_node()


@pytest.mark.parametrize("robot", NODES)
def test_every_read_only_parameter_starts_the_node_at_its_range_ends(robot, context):
    for spec in ranged(robot, context, read_only=True):
        for value in spec.range:
            node = make(robot, context, [(spec.name, typed(spec, value))])
            check_works(node, f"{spec.name} = {value}")
            node.destroy_node()


def test_a_zero_effort_limit_takes_that_joint_torque_to_zero(context):
    node = make("orbital", context)
    (result,) = node.set_parameters([Parameter("effort_limit.panda_joint1", value=0.0)])
    assert result.successful, result.reason
    tau = tick(node)
    assert tau[0] == 0.0 and np.any(tau[1:] != 0.0)
    node.destroy_node()


@pytest.mark.parametrize("sim, specs", [(SimNode, sim_params), (HopperSimNode, hopper_sim_params)])
def test_the_simulators_start_at_every_range_end(sim, specs, context):
    for spec in (s for s in specs() if s.range is not None):
        for value in spec.range:
            sim(context=context, parameter_overrides=[Parameter(spec.name, value=typed(spec, value))]).destroy_node()


def test_gains_unstable_at_the_measured_shape_are_refused_with_the_reason(context):
    """The node's gain check (ros/params.py gain_stability) on live changes, once a joint state gave it its
    shape: 5 N m s/rad on the wrist's last joint is unstable with one period of loop delay; the node's former
    Cartesian defaults with 3 ms of DDS latency; the paper's set-point gains are accepted."""
    node = make("orbital", context)
    tick(node)
    (result,) = node.set_parameters([Parameter("damping.panda_joint7", value=5.0)])
    assert not result.successful and "unstable with one control period (1 ms)" in result.reason, result.reason
    assert "control_rate_hz 1000" in result.reason
    former = {"end_effector.damping_ratio": 0.0, "end_effector.nullspace_damping": 0.2,
              **{f"end_effector.{kind}.{a}": v for kind, v in (("stiffness", 50.0), ("damping", 2.0))
                 for a in ("rx", "ry", "rz")}}
    result = node.set_parameters_atomically([Parameter(k, value=v)
                                             for k, v in {**former, "task": "end_effector"}.items()])
    assert not result.successful and result.reason.startswith("Cartesian impedance"), result.reason
    assert "3 ms of DDS latency" in result.reason
    paper = OrbitalScenario()
    result = node.set_parameters_atomically([Parameter(f"{kind}.{j}", value=v) for kind, values in
                                             (("stiffness", paper.stiffness), ("damping", paper.damping))
                                             for j, v in zip(node.model.joint_names, values)])
    assert result.successful, result.reason
    check_works(node, "the paper's gains")
    node.destroy_node()


def test_an_empty_list_means_a_placeholder_lists_default(context):
    """``[]`` in a YAML file or after ``-p`` reaches rclpy without a type; where the default is a placeholder
    (``['']``: no locked joint, the URDF's joints; ``[-1]``: any CPU) it means that default, and the node
    controls (an empty list where values are needed is a start error: test_node_start_errors.py)."""
    names = ("locked_joints", "locked_positions", "joints", "cpu_affinity")
    node = make("orbital", context, cli_args=["--ros-args", *(a for n in names for a in ("-p", f"{n}:=[]"))])
    assert [node.get_parameter(n).value for n in names] == [[""], [0.0], [""], [-1]]
    check_works(node, "empty lists")
    node.destroy_node()
