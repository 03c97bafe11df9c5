"""ROS domains of the test modules: never shared by two processes on this machine (concurrent
pytest runs, nodes left over from a killed run)."""
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

HOLDER = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parents[1])!r})  # the child process finds test/helpers as pytest does
from helpers import ros_harness
ros_harness.LOCK_DIR = ros_harness.Path(sys.argv[1])
ros_harness.in_use = lambda domain: False
print(ros_harness.domain_for("another run"), flush=True)
sys.stdin.read()
"""


def free(domain):
    fd = os.open(ros_harness.LOCK_DIR / f"{domain}.lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_another_process_gets_another_domain_and_a_node_keeps_its_domain_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(ros_harness, "LOCK_DIR", tmp_path)         # no other run takes ids meanwhile
    monkeypatch.setattr(ros_harness, "_taken", {})
    monkeypatch.setattr(ros_harness, "in_use", lambda domain: False)        # nor a participant without a lock
    other = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        theirs = int(other.stdout.readline())
        ours = ros_harness.domain_for(__name__)
        assert (theirs, ours) == tuple(ros_harness.DOMAINS[:2])             # the first free ones
        assert ros_harness.domain_for(__name__) == ours                       # the same name, the same domain
        assert ros_harness.domain_for(__name__ + "b") not in (ours, theirs)   # two names of one process
        node = ros_harness.popen([sys.executable, "-c", "import time; time.sleep(60)"], ours)
    finally:
        other.communicate("")
    try:
        ros_harness.release_domains(__name__)            # this module is done with it, its node is not
        assert not free(ours) and ros_harness.domain_for(__name__ + "c") != ours
    finally:
        node.kill()
        node.wait()
        ros_harness.release_domains(__name__)
    assert free(ours) and free(theirs)


def test_a_domain_with_a_participant_that_took_no_lock_is_skipped(tmp_path, monkeypatch):
    """A script with a fixed ROS_DOMAIN_ID in the tests' range: its shared-memory ports tell."""
    monkeypatch.setattr(ros_harness, "LOCK_DIR", tmp_path)
    monkeypatch.setattr(ros_harness, "_taken", {})
    domain = ros_harness.DOMAINS[0]
    client = ros_harness.Client(domain, [])                 # a participant, no lock
    try:
        assert ros_harness.in_use(domain)
        assert ros_harness.domain_for(__name__ + "e") != domain
    finally:
        client.close()
        ros_harness.release_domains(__name__)
