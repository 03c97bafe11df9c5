"""The watchdog over input streams and the safe command (ROS-free part of the nodes' safety)."""
import numpy as np
import pytest

from floating_base_control import InputError
from floating_base_control.control.watchdog import Watchdog, WatchdogConfig, safe_torque


def test_watchdog_reasons_and_freshness():
    w = Watchdog(WatchdogConfig({"joint state": 0.1, "base pose": 1.0}))
    assert w.reasons(0.0) == ["no joint state yet", "no base pose yet"]
    w.received("joint state", 0.0)
    w.received("base pose", 0.0)
    assert w.reasons(0.05) == [] and w.fresh("joint state", 0.05)
    assert w.reasons(0.5) == ["joint state stale (none for 0.1 s)"] and not w.fresh("joint state", 0.5)
    w.received("joint state", 0.6, "joint state lacks joints ['c']")
    assert "joint state lacks joints ['c']" in w.reasons(0.6) and not w.fresh("joint state", 0.6)
    w.received("joint state", 0.7)
    assert w.reasons(0.7) == []


def test_safe_torque_is_finite_and_limited():
    limits = np.array([1.0, 1.0, 5.0])
    damping = WatchdogConfig({}, "damping", 2.0)
    assert safe_torque(damping, np.array([0.1, -3.0, 1.0]), limits).tolist() == [-0.2, 1.0, -2.0]
    assert safe_torque(damping, None, limits).tolist() == [0.0, 0.0, 0.0]
    assert safe_torque(damping, np.array([np.nan, 0, 0]), limits).tolist() == [0.0, 0.0, 0.0]
    assert safe_torque(WatchdogConfig({}, "zero"), np.ones(3), limits).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(InputError, match="safe_mode"):
        WatchdogConfig({}, "brake")
