"""hopper_sim + hopper_controller as two processes with config/hopper.yaml (seed 003, Exp VI)."""
from pathlib import Path

import numpy as np
import pytest

ros_harness = pytest.importorskip("ros_harness")

from nav_msgs.msg import Odometry  # noqa: E402

from floating_base_control.nodes.runtime import node_command  # noqa: E402

CONFIG = str(Path(__file__).resolve().parents[1] / "config" / "hopper.yaml")


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


def test_the_hopper_hops_over_ros(hopper):
    def stamps():
        return np.array([o.header.stamp.sec + o.header.stamp.nanosec * 1e-9 for o in hopper.odometry])
    assert hopper.wait_for(lambda: len(hopper.odometry) > 10, timeout=30.0), "no odometry"
    assert hopper.wait_for(lambda: stamps()[-1] - stamps()[0] > 1.5, timeout=60.0), "under 1.5 s simulated in 60 s"
    z = np.array([o.pose.pose.position.z for o in hopper.odometry])
    assert z.min() > 0.05 and z.max() < 0.4, (z.min(), z.max())       # hopping, not fallen, not thrown
    lifts = np.sum(np.diff((z > 0.2).astype(int)) == 1)
    assert lifts >= 2, f"{lifts} flights"


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
