"""ros/realtime.py: real-time scheduling of a node's process (in a child process: pytest's own stays as it is)."""
import os
import subprocess
import sys

FIFO_SCHEDULING = """
import os, threading
from floating_base_control.ros.realtime import fifo_scheduling

listed = threading.Event()              # the two threads live until the threads are listed, however late
before = threading.Thread(target=listed.wait, daemon=True)
before.start()
problem = fifo_scheduling(7)
after = threading.Thread(target=listed.wait, daemon=True)    # started by a thread that has it: inherits it
after.start()
print(repr(problem))
print(sorted({(os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority)
              for tid in map(int, os.listdir("/proc/self/task"))}))
listed.set()
"""


def test_fifo_scheduling_covers_every_thread_or_says_why_not():
    out = subprocess.run([sys.executable, "-c", FIFO_SCHEDULING], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    problem, policies = out.stdout.splitlines()
    if problem == "None":
        assert policies == str([(os.SCHED_FIFO, 7)])                       # three threads, all of them
    else:                                                                   # a user without the permission
        assert "not permitted" in problem and "rtprio" in problem, problem
        assert policies == str([(os.SCHED_OTHER, 0)])
