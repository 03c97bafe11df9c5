"""hopper_sim + hopper_controller as two processes with config/hopper.yaml ([Feurstein2021], Exp VI)."""
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from helpers import node_sections

ros_harness = pytest.importorskip("helpers.ros_harness")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from floating_base_control.robots.hopper.controller import HopperController, HopperGains  # noqa: E402
from floating_base_control.robots.hopper.model import HopperMeasurements  # noqa: E402
from floating_base_control.robots.hopper.model import planar_pose, planar_twist  # noqa: E402
from floating_base_control.sim.hopper import HopperPlant  # noqa: E402
from floating_base_control.model import FloatingBaseModel  # noqa: E402
from floating_base_control.ros import messages as m  # noqa: E402
from floating_base_control.ros.params import hopper_controller_params  # noqa: E402
from floating_base_control.ros.runtime import node_command  # noqa: E402
from floating_base_control.resources import hopper_urdf  # noqa: E402

CONFIG = str(Path(__file__).resolve().parents[2] / "config" / "hopper.yaml")


@pytest.fixture(scope="module")
def hopper():
    domain = ros_harness.domain_for(__name__)
    # lockstep without a wall-clock limit that a loaded machine could hit: the test is about the physics
    overrides = {"hopper_controller": [], "hopper_sim": [("lockstep_timeout", 2.0)]}
    procs = [ros_harness.popen(node_command(module, CONFIG, overrides[module]), domain)
             for module in ("hopper_controller", "hopper_sim")]
    client = ros_harness.Client(domain, [])
    client.odometry = []
    client.node.create_subscription(Odometry, "/base_odometry", client.odometry.append, 1000)
    yield client
    client.close()
    for p in procs:
        output = ros_harness.stop(p)
        assert "Traceback" not in output, output


def in_process_loop(first_command_tick):
    """What the two nodes do in lockstep, in one process: yields ``(stamp in ns, odometry position)`` of
    the state published after each publish period (1 ms: ten physics steps on the last commands).  The
    controller answers every state from the ``first_command_tick``-th on (the earlier ones go out before
    it is up); it sees them as the messages carry them."""
    config = node_sections(CONFIG)
    sim, params = config["hopper_sim"], {s.name: s.default for s in hopper_controller_params()}
    params.update(config["hopper_controller"])
    urdf = hopper_urdf(sim["robot"])
    model = FloatingBaseModel.from_urdf(urdf, gravity=(0.0, 0.0, -sim["gravity"]))
    plant = HopperPlant(model, urdf, floor=sim["floor"], base=sim["base"], timestep=1.0 / sim["physics_rate_hz"],
                        floor_K=sim["floor_K"], floor_D=sim["floor_D"])
    x, y, th, q, vx, vy, w, qd = sim["initial_state"]
    plant.set_state(planar_pose(x, y, th), np.array([q]), planar_twist(vx, vy, w), np.array([qd]))
    controller = HopperController(model, HopperGains(**{f.name: params[f.name] for f in fields(HopperGains)}),
                                  params["foot_frame"], base_torque_limit=params["base_torque_limit"])
    per_tick = round(sim["physics_rate_hz"] / sim["publish_rate_hz"])
    tau, base, odom, tick = np.zeros(model.n), 0.0, Odometry(), 0
    while True:
        for _ in range(per_tick):
            plant.advance(tau, base)
        tick += 1
        meas = plant.sense()
        m.fill_pose_msg(odom.pose.pose, meas.g1)
        m.fill_twist_msg(odom.twist.twist, meas.V1)
        yield tick * per_tick * 1_000_000_000 // round(sim["physics_rate_hz"]), odom.pose.pose.position
        if tick >= first_command_tick:
            cmd = controller.step(HopperMeasurements(0.0, meas.q, meas.qdot, m.pose_from_msg(odom.pose.pose),
                                                     m.twist_from_msg(odom.twist.twist), max(meas.foot_force, 0.0)))
            tau, base = cmd.tau, cmd.base_torque


def test_the_hopper_hops_over_ros(hopper):
    def stamps():
        return np.array([o.header.stamp.sec + o.header.stamp.nanosec * 1e-9 for o in hopper.odometry])
    assert hopper.wait_for(lambda: len(hopper.odometry) > 10, timeout=30.0), "no odometry"
    assert hopper.wait_for(lambda: stamps()[-1] - stamps()[0] > 1.5, timeout=60.0), "under 1.5 s simulated in 60 s"
    z = np.array([o.pose.pose.position.z for o in hopper.odometry])
    assert z.min() > 0.05 and z.max() < 0.4, (z.min(), z.max())       # hopping, not fallen, not thrown
    lifts = np.sum(np.diff((z > 0.2).astype(int)) == 1)
    assert lifts >= 2, f"{lifts} flights"


def test_the_lockstep_loop_over_ros_is_the_in_process_loop_bit_for_bit(hopper):
    """Each state is answered by the commands computed from it, both of them (efforts and base torque)
    before the physics goes on: a step on one stale command, one tick late, would show as ~1e-7 m."""
    assert hopper.wait_for(lambda: len(hopper.odometry) > 1000, timeout=60.0), "no odometry"
    ros = {o.header.stamp.sec * 1_000_000_000 + o.header.stamp.nanosec: o.pose.pose.position
           for o in hopper.odometry[:1000]}

    def matches(first_command_tick, until):
        for stamp, p in in_process_loop(first_command_tick):
            if stamp > until:
                return True
            if stamp in ros and (ros[stamp].x, ros[stamp].z) != (p.x, p.z):
                return False
    # how many states went out before the controller was up: the one start that matches the first 50 ms received
    starts = [k for k in range(1, 40) if matches(k, min(ros) + 50_000_000)]
    assert len(starts) == 1, starts
    assert matches(starts[0], max(ros))


def test_gains_are_live_parameters_checked_by_the_controller(hopper):
    (result,) = hopper.set_parameters("/hopper_controller", K_r=1e9)
    assert not result.successful and "out of range" in result.reason.lower()
    (result,) = hopper.set_parameters("/hopper_controller", liftoff_force=5.0)
    assert not result.successful and "hysteresis" in result.reason
    (result,) = hopper.set_parameters("/hopper_controller", atomically=True, touchdown_force=1.0, liftoff_force=1.5)
    assert not result.successful and "hysteresis" in result.reason    # checked together, not one by one
    (result,) = hopper.set_parameters("/hopper_controller", variant="I")
    assert not result.successful                                        # read-only
    (result,) = hopper.set_parameters("/hopper_controller", K_p=5.0)
    assert result.successful


def test_a_set_of_inputs_with_a_refused_message_gets_the_safe_command_at_once():
    """The controller alone: joint state, odometry and foot force with one stamp, the odometry in another
    frame (refused).  Each set is a step, with the safe command (zero): its answer follows it, as the
    simulator in lockstep waits for one, not the watchdog at 10 Hz."""
    name = __name__ + "_refused"
    domain = ros_harness.domain_for(name)
    proc = ros_harness.start_node("hopper_controller", domain, {"control_rate_hz": 10.0})
    client = ros_harness.Client(domain, [])
    joints = FloatingBaseModel.from_urdf(hopper_urdf("revolute")).joint_names
    odometry = client.node.create_publisher(Odometry, "/base_odometry", 10)
    force = client.node.create_publisher(WrenchStamped, "/foot_force", 10)
    try:
        sent = 0
        while sent < 200 or (len(client.commands) <= 0.3 * sent and sent < 4000):
            stamp = client.stamp()
            state = JointState(name=list(joints), position=[1.0] * len(joints), velocity=[0.0] * len(joints))
            odom, wrench = Odometry(), WrenchStamped()
            odom.pose.pose.orientation.w = 1.0
            odom.header.frame_id = "elsewhere"
            wrench.wrench.force.z = 10.0
            for msg, publisher in ((state, client.joint_pub), (odom, odometry), (wrench, force)):
                msg.header.stamp = stamp
                publisher.publish(msg)
            sent += 1
            client.spin(0.005)
        assert len(client.commands) > 0.3 * sent, f"{len(client.commands)} commands for {sent} input sets"
        assert not any(np.any(c) for _, c in client.commands)
    finally:
        client.close()
        output = ros_harness.stop(proc)
        ros_harness.release_domains(name)
    assert "Traceback" not in output and "base odometry frame_id is not the world frame" in output, output
