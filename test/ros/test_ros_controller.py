"""floating_base_controller as a separate process, driven only through topics and services."""
import time

import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402

from helpers.orbital_node import JOINTS, PARAMS, Q, QDOT, S, controlling, stream_until  # noqa: E402

@pytest.fixture(scope="module")
def ros():
    yield from ros_harness.controller_with_client(__name__, PARAMS, JOINTS)


def commanded(client, since, torque):
    cmd = client.last_command(since)
    return cmd is not None and np.allclose(cmd, torque)


def diagnostic_says(client, text, since_index):
    return any(text in s.message for s in client.diagnostics[since_index:])


def test_torques_come_back_for_valid_input(ros):
    t0 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t0)), f"no control torque; last {ros.last_command()}"
    cmd = np.array(ros.last_command())
    assert cmd.shape == (7,) and np.isfinite(cmd).all()
    assert abs(cmd[6] - (-1.0 * 0.5)) < 0.01                        # -D qdot on joint 7 (+ tiny tau_hat)
    assert np.all(np.abs(cmd) <= [87, 87, 87, 87, 12, 12, 12])


def test_gain_out_of_range_is_rejected_and_a_valid_one_takes_effect(ros):
    (result,) = ros.set_parameters("/floating_base_controller", stiffness__panda_joint1=5000.0)
    assert not result.successful and "out of range" in result.reason.lower(), result.reason
    (result,) = ros.set_parameters("/floating_base_controller", compensation="bogus")
    assert not result.successful and "must be one of" in result.reason
    (result,) = ros.set_parameters("/floating_base_controller", stiffness__panda_joint1=80.0)
    assert result.successful
    t0 = time.monotonic()
    assert stream_until(ros, lambda: (c := ros.last_command(t0)) is not None and abs(c[0] - 8.0) < 0.5)
    ros.set_parameters("/floating_base_controller", stiffness__panda_joint1=S.stiffness[0])


@pytest.mark.parametrize("case, q, qdot, names, says", [
    ("NaN", np.r_[np.nan, Q[1:]], QDOT, JOINTS, "non-finite"),
    ("wrong names", Q, QDOT, ["foo"] + JOINTS[1:], "lacks joints ['panda_joint1']"),
    ("wrong lengths", Q[:5], QDOT[:5], JOINTS, "7 names but 5 positions"),
])
def test_bad_input_gives_a_safe_command_and_a_diagnostic_then_recovers(ros, case, q, qdot, names, says):
    t0 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t0))
    n_diag, t1 = len(ros.diagnostics), time.monotonic()
    assert stream_until(ros, lambda: commanded(ros, t1, 0.0) and diagnostic_says(ros, says, n_diag), q, qdot,
                        names=names), f"{case}: {ros.last_command()}, {[s.message for s in ros.diagnostics[n_diag:]]}"
    t2 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t2)), f"{case}: no recovery"


def test_stale_input_gives_a_safe_command_then_recovers(ros):
    t0 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t0))
    n_diag, t1 = len(ros.diagnostics), time.monotonic()
    assert ros.wait_for(lambda: commanded(ros, t1, 0.0) and diagnostic_says(ros, "joint state stale", n_diag))
    t1 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t1))


def test_stale_base_pose_gives_joint_damping_then_recovers(ros):
    t0 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t0))
    n_diag, t1 = len(ros.diagnostics), time.monotonic()
    assert stream_until(ros, lambda: commanded(ros, t1, -2.0 * QDOT)                 # safe_damping * qdot
                        and diagnostic_says(ros, "base pose stale", n_diag), pose_every=0), ros.last_command()
    t2 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t2))


def test_deactivation_sends_zero_once_then_nothing(ros):
    """An effort interface (ros2_control's forward_command_controller) holds the last command."""
    def transition(tid):
        return ros.call(ChangeState, "/floating_base_controller/change_state",
                        ChangeState.Request(transition=Transition(id=tid))).success
    t0 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t0))
    assert transition(Transition.TRANSITION_DEACTIVATE)
    assert ros.wait_for(lambda: commanded(ros, t0, 0.0)), ros.last_command()
    ros.drain()
    n = len(ros.commands)
    ros.stream(0.5, Q, QDOT)
    ros.drain()
    assert len(ros.commands) == n
    assert transition(Transition.TRANSITION_ACTIVATE)
    t1 = time.monotonic()
    assert stream_until(ros, lambda: controlling(ros, t1))
