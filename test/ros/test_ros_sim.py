"""mujoco_sim as a separate process: the simulated hardware behind standard topics."""
import os
import signal
import time

import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

from geometry_msgs.msg import PoseStamped, WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from floating_base_control.planning.rotations import rotation_angle  # noqa: E402
from floating_base_control.ros.messages import g_from_pose_msg, stamp_to_seconds  # noqa: E402

PARAMS = {"publish_rate_hz": 200.0, "pose_rate_hz": 10.0, "pose_latency_s": 0.05, "command_timeout": 0.2,
          "ground_truth_rate_hz": 50.0, "q0": "[-0.2, -1.0, 0.2, -2.55, -0.2, 1.75, 0.6]", "publish_clock": True}


@pytest.fixture(scope="module")
def sim():
    domain = ros_harness.domain_for(__name__)
    proc = ros_harness.start_node("orbital_sim", domain, PARAMS)
    client = ros_harness.Client(domain, [])
    client.joint_states, client.poses, client.momenta, client.clock, client.truth = [], [], [], [], []
    node = client.node

    def now():
        return node.get_clock().now().nanoseconds * 1e-9
    node.create_subscription(JointState, "/joint_states", lambda m: client.joint_states.append((now(), m)), 1000)
    node.create_subscription(PoseStamped, "/base_pose", lambda m: client.poses.append((now(), m)), 100)
    node.create_subscription(WrenchStamped, "/mujoco_sim/momentum", lambda m: client.momenta.append(m), 1000)
    node.create_subscription(Clock, "/clock", lambda m: client.clock.append(stamp_to_seconds(m.clock)), 1000)
    node.create_subscription(Odometry, "/mujoco_sim/ground_truth", client.truth.append, 1000)
    client.cmd_pub = node.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
    client.proc = proc
    assert client.wait_for(lambda: len(client.joint_states) >= 3, timeout=60.0), "the simulator publishes nothing"
    yield client
    client.close()
    output = ros_harness.stop(proc)
    assert "Traceback" not in output, output


def started(sim):
    """The simulator after its first command (a zero torque), with pose samples flowing."""
    if not sim.poses:
        sim.cmd_pub.publish(Float64MultiArray(data=[0.0] * 7))
        assert sim.wait_for(lambda: len(sim.poses) >= 3, timeout=30.0), "no pose samples after a command"
    return sim


def stamps_span(messages):
    return stamp_to_seconds(messages[-1][1].header.stamp) - stamp_to_seconds(messages[0][1].header.stamp)


def test_paused_until_the_first_command(sim):
    """wait_for_command: the initial state, freshly stamped, without pose samples or ground truth."""
    sim.joint_states.clear()
    assert sim.wait_for(lambda: len(sim.joint_states) > 10 and stamps_span(sim.joint_states) > 2.0, timeout=60.0)
    assert not sim.poses and not sim.momenta
    q = np.array([msg.position for _, msg in sim.joint_states])
    assert np.allclose(q, [-0.2, -1.0, 0.2, -2.55, -0.2, 1.75, 0.6], atol=0, rtol=0)   # q_noise = 0
    stamps = [stamp_to_seconds(msg.header.stamp) for _, msg in sim.joint_states]
    arrivals = [t for t, _ in sim.joint_states]
    assert stamps[-1] - stamps[0] > 0.5 * (arrivals[-1] - arrivals[0]) > 0          # fresh stamps, not frozen
    started(sim)
    q = np.array(sim.joint_states[-1][1].position)
    assert not np.allclose(q, [-0.2, -1.0, 0.2, -2.55, -0.2, 1.75, 0.6], atol=1e-6)     # mu(0) != 0 moves the arm


def test_rates_names_and_pose_latency(sim):
    """Rates from the stamps (simulated time), so a loaded machine does not change the verdict."""
    started(sim)
    sim.joint_states.clear(), sim.poses.clear()
    assert sim.wait_for(lambda: len(sim.poses) >= 10, timeout=30.0)
    stamps = np.array([stamp_to_seconds(m.header.stamp) for _, m in sim.joint_states])
    assert np.median(np.diff(stamps)) == pytest.approx(0.005, abs=1e-6)       # 200 Hz
    assert sim.joint_states[-1][1].name == [f"panda_joint{i}" for i in range(1, 8)]
    pose_stamps = [stamp_to_seconds(m.header.stamp) for _, m in sim.poses]
    assert np.allclose(np.diff(pose_stamps), 0.1, atol=1e-6)                  # 10 Hz, stamped when taken
                                                                               # (1e-6: float seconds since 1970)
    delays = [t - stamp_to_seconds(m.header.stamp) for t, m in sim.poses]
    assert min(delays) >= 0.05                                                 # never before the 50 ms latency


def test_a_short_stall_is_caught_up_as_the_world_would_not_wait(sim):
    """The process stopped for 0.05 s (a virtual machine's vCPUs stall like that under load): the physics
    catches the stall up at once (``MAX_CATCH_UP_S``), so across the stop the tumbling base turns at the
    rate it had before and after it, measured on the ground truth's stamps; a pause would show a base
    that stood still while the stamps ran on (an observer would see the tumble stop)."""
    started(sim)
    sim.truth.clear()
    assert sim.wait_for(lambda: len(sim.truth) >= 10, timeout=30.0)
    os.kill(sim.proc.pid, signal.SIGSTOP)
    time.sleep(0.05)
    os.kill(sim.proc.pid, signal.SIGCONT)
    n = len(sim.truth)
    assert sim.wait_for(lambda: len(sim.truth) >= n + 10, timeout=30.0)
    stamps = np.array([stamp_to_seconds(m.header.stamp) for m in sim.truth])
    R = [g_from_pose_msg(m.pose.pose)[:3, :3] for m in sim.truth]
    rates = np.array([rotation_angle(a.T @ b) for a, b in zip(R, R[1:])]) / np.diff(stamps)
    gap = int(np.argmax(np.diff(stamps)))
    assert np.diff(stamps)[gap] > 0.04, np.diff(stamps)                             # the stop was seen
    assert rates[gap] == pytest.approx(np.median(rates), rel=0.05), (rates[gap], np.median(rates))


def test_stamps_stay_on_one_clock_when_the_simulator_falls_behind(sim):
    """The process stopped for 0.5 s, longer than the physics catches up at once (``MAX_CATCH_UP_S``, 0.1 s):
    beyond it the physics stands still, and every sample keeps the stamp of the time it was taken: joint states on the
    200 Hz grid, each a new one, pose samples on the 10 Hz grid (those due during the stop too), none
    delivered before its 50 ms latency."""
    started(sim)
    sim.joint_states.clear(), sim.poses.clear()
    assert sim.wait_for(lambda: len(sim.poses) >= 2, timeout=30.0)
    os.kill(sim.proc.pid, signal.SIGSTOP)
    time.sleep(0.5)
    os.kill(sim.proc.pid, signal.SIGCONT)
    assert sim.wait_for(lambda: len(sim.poses) >= 12, timeout=30.0)
    stamps = np.array([stamp_to_seconds(m.header.stamp) for _, m in sim.joint_states])
    steps = np.diff(stamps) / 0.005
    assert np.allclose(steps, np.round(steps), atol=1e-3)                         # the 200 Hz grid
    assert steps.min() > 0.5          # every joint state a new sample (none again after a tick that caught up)
    assert np.diff(stamps).max() > 0.3                                             # the stop was seen
    pose_stamps = [stamp_to_seconds(m.header.stamp) for _, m in sim.poses]
    assert np.allclose(np.diff(pose_stamps), 0.1, atol=1e-6), np.diff(pose_stamps)
    offsets = (np.array(pose_stamps) - stamps[0]) / 0.005
    assert np.allclose(offsets, np.round(offsets), atol=1e-3)                     # one clock with the joint states
    delays = [t - stamp_to_seconds(m.header.stamp) for t, m in sim.poses]
    assert min(delays) >= 0.05


def test_momentum_is_conserved_while_commanded(sim):
    """Gentle torques (joint limits are not hit: MuJoCo's limit impulses cost ~1e-6 of momentum)."""
    started(sim)
    sim.momenta.clear()
    i = 0
    while len(sim.momenta) <= 20 and i < 3000:
        sim.cmd_pub.publish(Float64MultiArray(data=(0.02 * np.sin(0.1 * i + np.arange(7))).tolist()))
        sim.spin(0.01)
        i += 1
    J = np.array([[m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z,
                   m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in sim.momenta])
    assert len(J) > 20
    drift = np.abs(J - J[0]).max() / np.abs(J[0]).max()
    assert drift < 1e-9, f"momentum drift {drift:.2e}"


def send_until(sim, data, predicate, timeout=30.0):
    """Send a command every 10 ms until ``predicate()`` (one command can time out before a late tick)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sim.cmd_pub.publish(Float64MultiArray(data=list(data)))
        sim.spin(0.01)
        if predicate():
            return True
    return False


def test_commands_are_applied_checked_and_time_out(sim):
    def applied(effort):
        return np.allclose(sim.joint_states[-1][1].effort, effort)
    started(sim)
    tau = np.r_[np.zeros(6), 0.5]
    assert send_until(sim, tau, lambda: applied(tau))
    assert sim.wait_for(lambda: applied(0.0))                                   # after command_timeout


def test_a_wrong_command_is_ignored(sim):
    """A command of the wrong length changes nothing: the simulator goes on applying the last good
    one until it times out, then zero (whatever the machine's load makes of the timing)."""
    started(sim)
    tau = np.r_[np.zeros(6), 0.3]
    assert send_until(sim, tau, lambda: np.allclose(sim.joint_states[-1][1].effort, tau))
    n = len(sim.joint_states)
    for _ in range(5):
        sim.cmd_pub.publish(Float64MultiArray(data=[1.0, 2.0]))
        sim.spin(0.01)
    assert sim.wait_for(lambda: np.allclose(sim.joint_states[-1][1].effort, 0.0))
    efforts = [msg.effort for _, msg in sim.joint_states[n:]]
    assert all(np.allclose(e, tau) or np.allclose(e, 0.0) for e in efforts)


def test_the_clock_is_the_stamps_time(sim):
    """publish_clock: a use_sim_time controller runs on /clock; it ticks (and sends the first
    command) before the physics starts, so the clock runs while paused too."""
    assert sim.wait_for(lambda: len(sim.clock) > 10)
    stamps = {stamp_to_seconds(msg.header.stamp) for _, msg in sim.joint_states}
    assert sum(t in stamps for t in sim.clock[-10:]) >= 8        # the same instants (the last may be in flight)
    assert np.all(np.diff(sim.clock) >= 0)


def test_lockstep_steps_the_physics_only_with_commands():
    """lockstep on the wall clock: without commands the robot stands still (stamps go on), each command moves
    it on."""
    domain = ros_harness.domain_for(__name__ + ".lockstep")
    proc = ros_harness.start_node("orbital_sim", domain, {**PARAMS, "lockstep": True, "lockstep_timeout": 10.0,
                                                          "publish_clock": False})
    client = ros_harness.Client(domain, [])
    try:
        states = []
        client.node.create_subscription(JointState, "/joint_states", states.append, 1000)
        pub = client.node.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
        assert client.wait_for(lambda: states, timeout=60.0), "the simulator publishes nothing"
        q0 = states[-1].position
        pub.publish(Float64MultiArray(data=[0.0] * 7))
        assert client.wait_for(lambda: states[-1].position != q0), "a command did not move the physics on"
        n = len(states)
        assert client.wait_for(lambda: len(states) > n + 20)
        standing = states[n:]
        assert all(s.position == standing[0].position for s in standing)            # no command: no physics
        assert stamp_to_seconds(standing[-1].header.stamp) - stamp_to_seconds(standing[0].header.stamp) > 0.05
        pub.publish(Float64MultiArray(data=[0.0] * 7))
        assert client.wait_for(lambda: states[-1].position != standing[-1].position)
    finally:
        client.close()
        output = ros_harness.stop(proc)
    assert "Traceback" not in output, output


def test_lockstep_on_its_clock_advances_time_with_the_physics_only():
    """lockstep with publish_clock: time is the simulator's.  Without a command nothing is published and no
    time passes, however long the wait; each command gives one state one publish period later, stamped as
    /clock says, with the physics moved on."""
    domain = ros_harness.domain_for(__name__ + ".lockstep_clock")
    proc = ros_harness.start_node("orbital_sim", domain, {**PARAMS, "lockstep": True, "lockstep_timeout": 10.0})
    client = ros_harness.Client(domain, [])
    try:
        states, clock = [], []
        client.node.create_subscription(JointState, "/joint_states", states.append, 1000)
        client.node.create_subscription(Clock, "/clock", lambda m: clock.append(stamp_to_seconds(m.clock)), 1000)
        pub = client.node.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
        assert client.wait_for(lambda: states, timeout=60.0), "the simulator publishes nothing"
        pub.publish(Float64MultiArray(data=[0.0] * 7))           # the first command starts the physics
        assert client.wait_for(lambda: states[-1].position != states[0].position)
        stamps = []
        for _ in range(20):
            n = len(states)
            pub.publish(Float64MultiArray(data=[0.0] * 7))
            assert client.wait_for(lambda: len(states) > n), "a command was not answered with a state"
            stamps.append(stamp_to_seconds(states[-1].header.stamp))
        # a wait counted as time would show as a gap of more than one period
        assert np.allclose(np.diff(stamps), 1.0 / PARAMS["publish_rate_hz"], rtol=0, atol=1e-6), np.diff(stamps)
        # /clock is another topic: its message for the last state may reach this client after the state
        assert client.wait_for(lambda: clock and clock[-1] >= stamps[-1]), (clock[-1:], stamps[-1])
        assert clock[-1] == stamps[-1]
    finally:
        client.close()
        output = ros_harness.stop(proc)
    assert "Traceback" not in output, output


def test_a_timer_firing_right_after_a_late_tick_that_caught_up_publishes_nothing_again():
    """The tick due at one period ran 1.2 periods late and stepped the physics through the next period
    too; the timer then fires at once for that next period: nothing new to publish (publishing the same
    sample again made the controller step twice on it).  In process, with the node's wall clock set."""
    from types import SimpleNamespace

    import rclpy
    from rclpy.parameter import Parameter

    from floating_base_control.ros.orbital_sim import SimNode

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_harness.domain_for(__name__ + ".in_process"))
    try:
        # the node takes the garbage collector over while it lives (realtime.CollectBetweenTicks)
        node = SimNode(context=context, parameter_overrides=[Parameter("wait_for_command", value=False)])
        try:
            period, wall, published = 1e-3, [100.0], []
            node._wall = lambda: wall[0]
            node._publish_joint_state = lambda t, applied: published.append(round((t - 100.0) / period, 6))
            info = SimpleNamespace(expected_call_time=SimpleNamespace(nanoseconds=100_000_000_000))
            for late in (0.0, 2.2, 2.25, 3.1):        # in periods since the first tick
                wall[0] = 100.0 + late * period
                node._tick(info)
            assert published == [0.0, 2.0, 3.0]
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
