"""nodes/runtime.py: a timer callback whose signature rclpy's EventsExecutor gets without recomputing it."""
import inspect
import time

import pytest

ros_harness = pytest.importorskip("ros_harness")

import rclpy  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.timer import TimerInfo  # noqa: E402

from floating_base_control.nodes import runtime as rt  # noqa: E402


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
