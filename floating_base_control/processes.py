"""Child processes that do not outlive the process that started them (ROS-free).

A node started by the demo or by a test must stop with its parent however the parent ends, a
``kill -9`` or a timed-out CI job included: nothing else would stop it, and a leftover node goes
on publishing on the machine's shared memory and using a core.
"""
import ctypes
import signal
import sys

PR_SET_PDEATHSIG = 1      # <linux/prctl.h>


def die_with_parent(sig=signal.SIGTERM):
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``sig`` when its parent dies
    (Linux's parent-death signal; elsewhere nothing).  ``SIGTERM`` lets a node leave its zero command."""
    def preexec():
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return preexec
