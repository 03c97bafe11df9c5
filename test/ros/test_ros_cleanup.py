"""A test run that is killed leaves no node behind: every node a test starts gets a parent-death signal."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

#: A test process as the suite's are: it starts the controller node through the harness, says its pid
#: and waits to be killed.
TEST_PROCESS = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})
from helpers import ros_harness
proc = ros_harness.start_node("orbital_controller", ros_harness.domain_for("cleanup"), {{}})
print(proc.pid, flush=True)
sys.stdin.read()
"""


def alive(pid):
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_test_process_leaves_no_node_running():
    test = subprocess.Popen([sys.executable, "-c", TEST_PROCESS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    node = int(test.stdout.readline())
    assert alive(node)
    os.kill(test.pid, signal.SIGKILL)          # what a CI timeout or `kill -9` of pytest does
    test.wait()
    deadline = time.monotonic() + ros_harness.TIMEOUT
    while alive(node) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(node), f"node {node} outlived the test process that started it"
