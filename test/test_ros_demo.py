"""The orbital demo over DDS, short: two node processes, recorded through topics only."""
import pytest

pytest.importorskip("rclpy")

from floating_base_control.nodes import demo  # noqa: E402
from ros_harness import domain_for  # noqa: E402


def test_ros_demo_runs_and_reports():
    log, summary = demo.run(duration_s=4.0, domain_id=domain_for(__name__))
    assert summary["status"] == "completed"
    assert summary["duration_s"] >= 4.0
    assert log["dq_norm_deg"][-1] < 0.5 * log["dq_norm_deg"][0]          # converging to the set-point
    assert summary["momentum_drift_rel"] < 1e-9
    assert "shared memory" in summary["transport"]
