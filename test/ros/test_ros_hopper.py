"""hopper_sim + hopper_controller as two processes with config/hopper.yaml ([Feurstein2021], Exp VI)."""
import os
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


#: Simulated time the ROS run must cover: 16 hops bit for bit, past the old code's earliest blow-ups (3.4 s; they
#: came at 3.4-9.4 s); 6 s, not 10, keeps ``make test`` within its 10 minutes (``FBC_HOPPER_RUN_S``: a longer run
#: by hand, e.g. issue 24's 20 s, 3 of 3 runs bit for bit).
HOPPED = float(os.environ.get("FBC_HOPPER_RUN_S", 6.0))


@pytest.fixture(scope="module")
def hopper():
    """Both nodes started together, as hopper_sim.launch.py starts them, with config/hopper.yaml."""
    domain = ros_harness.domain_for(__name__)
    # a lockstep that never steps without an answer, however loaded the machine: the test is about the physics
    overrides = {"hopper_controller": [], "hopper_sim": [("lockstep_timeout", 10.0)]}
    client = ros_harness.Client(domain, [])
    client.odometry, client.force = [], []
    # a queue for every state of the run at 1 kHz: the loop, in lockstep, does not wait for this client, and a
    # loaded client that takes its messages later than the queue's length would lose the first (t = 0)
    depth = int(2e3 * HOPPED)
    client.node.create_subscription(Odometry, "/base_odometry", client.odometry.append, depth)
    client.node.create_subscription(WrenchStamped, "/foot_force", client.force.append, depth)
    # the simulator offers t = 0 once, as soon as a controller is there: this client must have found the
    # simulator by then, or it misses the state (seen in CI: the first state received was t = 1 ms)
    procs = [ros_harness.popen(node_command("hopper_sim", CONFIG, overrides["hopper_sim"]), domain)]
    assert client.wait_for(lambda: all(client.node.count_publishers(topic)
                                       for topic in ("/base_odometry", "/foot_force"))), "no hopper_sim"
    procs.append(ros_harness.popen(node_command("hopper_controller", CONFIG, overrides["hopper_controller"]), domain))
    yield client
    client.close()
    for output in ros_harness.stop_all(procs):
        assert "Traceback" not in output, output


def in_process_loop():
    """What the two nodes do in lockstep, in one process: yields ``(stamp in ns, odometry position, foot
    force)`` of each published state (1 ms apart: ten physics steps on the commands that answered the
    previous one, from the state at t = 0 on).  The controller sees the states as the messages carry them."""
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
                                  params["foot_frame"], base_torque_limit=params["base_torque_limit"],
                                  control_period=1.0 / params["control_rate_hz"])
    per_tick = round(sim["physics_rate_hz"] / sim["publish_rate_hz"])
    odom, tick = Odometry(), 0
    while True:
        meas = plant.sense()
        m.fill_pose_msg(odom.pose.pose, meas.g1)
        m.fill_twist_msg(odom.twist.twist, meas.V1)
        stamp = tick * per_tick * 1_000_000_000 // round(sim["physics_rate_hz"])
        yield stamp, odom.pose.pose.position, float(meas.foot_force)
        cmd = controller.step(HopperMeasurements(stamp * 1e-9, meas.q, meas.qdot, m.pose_from_msg(odom.pose.pose),
                                                 m.twist_from_msg(odom.twist.twist), max(meas.foot_force, 0.0)))
        for _ in range(per_tick):
            plant.advance(cmd.tau, cmd.base_torque)
        tick += 1


def ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def flights(stamps, force):
    """Flights of at least 30 ms (docs/explanation/hopper.md's hops) in a foot force series: runs of zero force."""
    air = np.r_[False, np.asarray(force) <= 0.0, False]
    edges = np.flatnonzero(np.diff(air.astype(int)))
    t = np.r_[np.asarray(stamps) * 1e-9, np.inf]
    return sum(t[end] - t[begin] >= 0.03 for begin, end in zip(edges[::2], edges[1::2]))


def test_the_hopper_hops_over_ros_as_the_in_process_loop_bit_for_bit(hopper):
    """Exp VI over ROS for HOPPED s of simulated time, where it used to blow up: every state received is
    the in-process loop's, bit for bit, the first answering t = 0 (the simulator waited for the controller,
    however long it took to come up).  A step on one stale command, one tick late, would show as ~1e-7 m.
    The loop hops: no fall, a flight every ~0.39 s (51 in 20 s, docs/explanation/hopper.md), forward."""
    # the in-process loop first, while the nodes run (the client's queues hold every state of the run)
    stamps, x, z, force = [], [], [], []
    for stamp, p, f in in_process_loop():
        if stamp > HOPPED * 1e9:
            break
        stamps.append(stamp), x.append(p.x), z.append(p.z), force.append(f)
    assert hopper.wait_for(lambda: hopper.odometry and ns(hopper.odometry[-1]) >= HOPPED * 1e9,
                           timeout=60.0 + 20.0 * HOPPED), f"the simulation did not reach {HOPPED:g} s"
    # the states the client received (a difference of 1e-16 anywhere grows, in this gait, to millimetres
    # within seconds)
    ros = {ns(o): o.pose.pose.position for o in hopper.odometry}
    assert min(ros) == 0 and len(ros) > 100 and max(ros) >= HOPPED * 1e9, (min(ros), len(ros), max(ros))
    compared = 0
    for stamp, px, pz in zip(stamps, x, z):
        if stamp in ros:
            assert (ros[stamp].x, ros[stamp].z) == (px, pz), f"the ROS run left the in-process loop at {stamp} ns"
            compared += 1
    assert compared == len(ros.keys() & set(stamps))
    assert min(z) > 0.09 and max(z) < 0.3, (min(z), max(z))              # hopping, not fallen, not thrown
    assert 2.4 * HOPPED <= flights(stamps, force) <= 2.7 * HOPPED, flights(stamps, force)
    speed = (x[-1] - x[0]) / HOPPED
    assert 0.15 < speed < 0.3, speed
    received = {ns(f): f.wrench.force.z for f in hopper.force}
    assert all(received[s] == f for s, f in zip(stamps, force) if s in received)
    problems = [s for s in hopper.diagnostics if s.level != m.OK]
    assert not problems, problems[:3]


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


def test_a_physics_blow_up_stops_the_states_with_an_error_and_the_controller_sends_its_safe_command():
    """A floor far too stiff for its step (1e7 N/m at 1 ms) makes MuJoCo's acceleration blow up within a
    second: hopper_sim says so on /diagnostics (ERROR, with the simulated time), publishes no state after
    it (MuJoCo reset the robot to the origin: never published) and the controller, whose inputs stopped
    while /clock goes on, sends zero."""
    name = __name__ + "_blow_up"
    domain = ros_harness.domain_for(name)
    sim = [("physics_rate_hz", 1000.0), ("floor_K", 1e7), ("lockstep_timeout", 10.0)]
    procs = [ros_harness.popen(node_command("hopper_sim", CONFIG, sim), domain)]
    client = ros_harness.Client(domain, [])
    odometry = []
    client.node.create_subscription(Odometry, "/base_odometry", odometry.append, 1000)
    # the physics (waiting for the controller's first command) may diverge within a second of the
    # controller's start: the states must find this subscription by then
    assert client.wait_for(lambda: client.node.count_publishers("/base_odometry")), "hopper_sim did not start"
    procs.append(ros_harness.popen(node_command("hopper_controller", CONFIG), domain))

    def sim_errors():
        return [s for s in client.diagnostics if s.name == "/hopper_sim: simulation" and s.level == m.ERROR]

    def safe_after_error():
        return sim_errors() and any(s.name == "/hopper_controller: control loop" and "safe command" in s.message
                                    for s in client.diagnostics[client.diagnostics.index(sim_errors()[0]):])
    try:
        assert client.wait_for(lambda: sim_errors(), timeout=120.0), "no ERROR from hopper_sim"
        error = sim_errors()[0]
        assert "physics diverged" in error.message, error.message
        failed_at = float({kv.key: kv.value for kv in error.values}["sim_time_s"])
        assert 0.1 < failed_at < 2.0, failed_at
        assert client.wait_for(safe_after_error), "the controller did not report its safe command"
        # its watchdog goes on sending the safe command while /clock runs: the commands never stop
        assert client.wait_for(lambda: client.commands and client.commands[-1][1] == [0.0]), client.commands[-3:]
        assert odometry and max(ns(o) for o in odometry) * 1e-9 < failed_at     # no state from the reset robot
        assert all(o.pose.pose.position.z > -0.5 for o in odometry)
    finally:
        client.close()
        outputs = ros_harness.stop_all(procs)
        ros_harness.release_domains(name)
    assert not any("Traceback" in out for out in outputs), outputs
