"""floating_base_controller stopped as a robot stack stops it: Ctrl-C to the process group (once and
twice), SIGTERM, and the lifecycle shutdown transition from a client, at 1 kHz.

An effort interface holds the last command it received: the last command the subscriber gets
must be exactly one zero command, after every control command, and the process must exit 0.
``studies/ros_stop_trials.py`` repeats these 20 times each.

One zero may come before the stop's: the safe command of a joint state older than
``watchdog.max_joint_state_age``, when this test's Python client (or the node) got no CPU for that
long, as on a loaded machine.  The controller must send it (its input is stale: it is right) and it
says so on /diagnostics; the verdict then counts it as the safe command it is, not as a second zero
of the stop.
"""
import signal
import time

import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

from lifecycle_msgs.msg import Transition  # noqa: E402

from helpers.orbital_node import JOINTS, PARAMS, Q, QDOT, controlling, lifecycle, stream_until  # noqa: E402

STOP_PARAMS = {**PARAMS, "control_rate_hz": 1000.0}


@pytest.fixture
def running():
    """A controller process, controlling (good input streamed), and a client."""
    domain = ros_harness.domain_for(__name__)
    proc = ros_harness.start_node("orbital_controller", domain, STOP_PARAMS)
    client = ros_harness.Client(domain, JOINTS)
    t0 = time.monotonic()
    try:
        assert stream_until(client, lambda: controlling(client, t0)), "never controlling"
        client.controlling_from = len(client.diagnostics)
        yield proc, client
    finally:
        client.close()
        ros_harness.stop(proc)


def stream_until_exit(client, proc, timeout=60.0):
    """Go on publishing inputs (a robot stack does) until the process ends; its exit code."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        client.stream(0.02, Q, QDOT, pose_every=5)
    client.drain()
    return proc.poll()


def trailing_zeros(commands):
    """How many of the last commands are all zero."""
    n = 0
    for _, cmd in reversed(commands):
        if any(cmd):
            break
        n += 1
    return n


def stale_input_safe_commands(client):
    """Whether the controller reported a safe command for a stale joint state since it was controlling."""
    return any(s.message.startswith("safe command") and "joint state" in s.message
               for s in client.diagnostics[client.controlling_from:])


def one_stop_zero(client):
    """The commands end with the stop's one zero command (after safe ones, if the input went stale)."""
    zeros = trailing_zeros(client.commands)
    return zeros == 1 or (zeros > 1 and stale_input_safe_commands(client))


def stop_verdict(client, proc, code):
    output = ros_harness.stop(proc)          # kills a process that did not end
    assert code == 0, f"exit code {code}\n{output}"
    assert one_stop_zero(client), f"last commands {[c for _, c in client.commands[-3:]]}\n{output}"
    assert "Traceback" not in output, output


def signal_stop(proc, client, signals):
    for sig in signals:
        ros_harness.signal_group(proc, sig)
        client.spin(0.002)
    return stream_until_exit(client, proc)


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGINT, signal.SIGINT), (signal.SIGTERM,),
                                     (signal.SIGINT, signal.SIGTERM)], ids=["SIGINT", "SIGINT twice", "SIGTERM",
                                                                            "SIGINT then SIGTERM"])
def test_a_signal_to_the_process_group_leaves_one_zero_command_and_exit_0(running, signals):
    proc, client = running
    stop_verdict(client, proc, signal_stop(proc, client, signals))


def test_the_shutdown_transition_from_active_leaves_one_zero_command_and_ends_the_process(running):
    proc, client = running
    assert lifecycle(client, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    stop_verdict(client, proc, stream_until_exit(client, proc))


def test_deactivate_leaves_one_zero_command_and_no_tick_after_it(running):
    proc, client = running
    assert lifecycle(client, Transition.TRANSITION_DEACTIVATE)
    client.drain()
    n = len(client.commands)
    client.stream(0.3, Q, QDOT)                  # inputs go on: an inactive node must not answer them
    client.drain()
    assert one_stop_zero(client) and len(client.commands) == n, client.commands[-3:]
    assert np.any(client.commands[-1 - trailing_zeros(client.commands)][1])
