"""ros/runtime.py: a timer callback whose signature rclpy's EventsExecutor gets without recomputing it;
a node process whose shutdown never leaves SIGINT to its default action; the real-time scheduling a node
process asks for with ``realtime_priority``."""
import inspect
import os
import sys
import time

import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

import rclpy  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.timer import TimerInfo  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from floating_base_control.ros import runtime as rt  # noqa: E402
from floating_base_control.ros.messages import stamp_to_seconds  # noqa: E402


class Ticker:
    def __init__(self):
        self.calls = []

    def tick(self, timer: TimerInfo):
        self.calls.append(timer)


def test_timer_callback_keeps_the_signature_and_the_executor_still_passes_timer_info():
    ticker = Ticker()
    callback = rt.timer_callback(ticker.tick)
    # inspect.signature returns the stored object: nothing is recomputed per call
    assert inspect.signature(callback) is callback.__signature__
    assert list(callback.__signature__.parameters) == ["timer"]
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_harness.domain_for(__name__))
    try:
        node = rclpy.create_node("timer_callback_test", context=context)
        executor = EventsExecutor(context=context)
        try:
            executor.add_node(node)
            node.create_timer(0.01, callback)
            deadline = time.monotonic() + 30.0
            while len(ticker.calls) < 3 and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.1)
        finally:
            executor.shutdown()
            node.destroy_node()
        assert len(ticker.calls) >= 3
        assert all(isinstance(info, TimerInfo) for info in ticker.calls)
        expected = [info.expected_call_time.nanoseconds for info in ticker.calls]
        assert all((b - a) % 10_000_000 == 0 for a, b in zip(expected, expected[1:]))   # on the timer's grid
    finally:
        rclpy.shutdown(context=context)
        ros_harness.release_domains(__name__)


SPIN_A_FINALIZED_NODE = """
import signal
import rclpy
from rclpy.node import Node
from floating_base_control.ros import runtime as rt

uninstalled = []
rclpy.uninstall_signal_handlers = lambda: uninstalled.append(True)     # what rclpy.try_shutdown calls


class Finalized(Node):
    def __init__(self):
        super().__init__("finalized")
        self.finalized = True


rt.spin(Finalized)
print("uninstalled:", bool(uninstalled), "SIGINT ignored:", signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
"""


def test_spin_shuts_rclpy_down_without_uninstalling_signal_handlers():
    """rclpy's ``uninstall_signal_handlers`` (``try_shutdown``'s default) sets SIGINT to its default
    action and then restores the handler it found: a Ctrl-C in between kills the process (exit -2)
    instead of the clean exit with one zero command.  A process calling it in a loop under a SIGINT
    every 2 ms died within 300 signals; ``spin`` never calls it (it installed none of rclpy's)."""
    proc = ros_harness.popen([sys.executable, "-c", SPIN_A_FINALIZED_NODE], ros_harness.domain_for(__name__))
    try:
        output = ros_harness.output(proc, timeout=60)
    finally:
        ros_harness.release_domains(__name__)
    assert proc.returncode == 0, output
    assert "uninstalled: False SIGINT ignored: True" in output, output


def scheduling(pid):
    """``{(policy, priority, CPUs)}`` of the threads of process ``pid``."""
    return {(os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority, frozenset(os.sched_getaffinity(tid)))
            for tid in map(int, os.listdir(f"/proc/{pid}/task"))}


def test_a_node_process_runs_at_its_realtime_priority_and_on_its_cpus_or_says_why_not():
    """mujoco_sim with ``realtime_priority`` 20 and ``cpu_affinity`` [the last CPU]: once it publishes, every
    thread of its process (the DDS threads too) is SCHED_FIFO at 20 on that CPU, or the node warned that it may
    not; with 0 and [] (ros2_control's "any CPU", which rclpy passes on without a type) none is, on every CPU; a
    CPU the machine lacks is a warning, not a failure."""
    client = ros_harness.Client(ros_harness.domain_for(__name__), [])
    states = []
    client.node.create_subscription(JointState, "/joint_states", states.append, 10)
    every, last = frozenset(os.sched_getaffinity(0)), max(os.sched_getaffinity(0))
    try:
        for priority, cpus, expected in ((20, [last], {(os.SCHED_FIFO, 20, frozenset([last]))}),
                                         (0, [], {(os.SCHED_OTHER, 0, every)}),
                                         (0, [4096], {(os.SCHED_OTHER, 0, every)})):
            start = time.time()         # the states of the node before, still queued in the client, are older
            proc = ros_harness.start_node("orbital_sim", ros_harness.domain_for(__name__),
                                          {"realtime_priority": priority, "cpu_affinity": cpus})
            try:
                assert client.wait_for(lambda: sum(stamp_to_seconds(s.header.stamp) >= start for s in states) > 3), \
                    "mujoco_sim publishes no joint states"
                threads = scheduling(proc.pid)
            finally:
                output = ros_harness.stop(proc)
            assert proc.returncode == 0 and "Traceback" not in output, output
            if priority and "realtime_priority 20 not applied" in output:   # a user without the permission: told
                assert "rtprio" in output, output
                expected = {(os.SCHED_OTHER, 0, frozenset([last]))}
            assert ("cpu_affinity [4096] not applied" in output) == (cpus == [4096]), output
            assert threads == expected, (priority, cpus, threads, output)
    finally:
        client.close()
        ros_harness.release_domains(__name__)


def test_a_throttled_warning_is_logged_once_per_period_whatever_its_text():
    """``throttled_warning``: within its period only the first warning reaches the logger (as rclpy's
    ``throttle_duration_sec`` per call site); a period of 0 lets every one through."""
    logged = []

    class Logger:
        def warning(self, text):
            logged.append(text)
    hourly, always = rt.throttled_warning(Logger(), 3600.0), rt.throttled_warning(Logger(), 0.0)
    for text in ("stale", "stale", "another"):
        hourly(text)
    always("a")
    always("b")
    assert logged == ["stale", "a", "b"]
