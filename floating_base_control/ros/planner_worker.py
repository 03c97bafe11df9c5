"""The reorientation planner in a process of its own, for a controller node whose tick must never wait (ROS-free).

:class:`BackgroundPlanner` has the interface of ``planning/execution.py``'s planners (``submit(request)``,
``poll(t)``): requests go to a worker process (``python -m floating_base_control.ros.planner_worker``, a fresh
interpreter: no fork of a process with DDS threads, and not the node's own modules) that runs a
:class:`~floating_base_control.planning.execution.Planner` on the node's model, rebuilt there from the URDF as the
node's model loaded it.  Why a process and not a thread: planning holds the GIL for seconds (Pinocchio, SciPy's
SLSQP, NumPy in Python loops); a thread would take it from the control tick for a switch interval at a time (5 ms
by default) and for whole calls into C that do not release it.  Here the tick only queues a request (a few small
arrays), which a sender thread pickles into the worker's stdin, and finds results in a deque that a receiver
thread fills from its stdout; the worker runs at a lower priority (``nice``), so that on a loaded machine the
control loop keeps its share of the CPU, and ends with its parent (the parent-death signal, ``processes.py``).
"""
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque

from floating_base_control.ros.processes import die_with_parent

#: Niceness added to the worker process (lower priority than the control loop).
WORKER_NICENESS = 10
#: Seconds to wait for the worker to end when the planner is closed.
CLOSE_TIMEOUT = 2.0


class BackgroundPlanner:
    """``submit`` and ``poll`` of a :class:`~floating_base_control.planning.execution.Planner` running in a worker
    process (module doc) on ``model`` (its URDF description), with the planner's ``options`` and
    ``control_period``."""

    def __init__(self, model, options=None, control_period=1e-3):
        self.process = subprocess.Popen([sys.executable, "-m", "floating_base_control.ros.planner_worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        pickle.dump((model.description.urdf, options or {}, control_period), self.process.stdin)
        self.process.stdin.flush()
        self.ready = False
        self._outbox, self._done = queue.Queue(), deque()
        self._threads = [threading.Thread(target=self._send, daemon=True, name="planner requests"),
                         threading.Thread(target=self._receive, daemon=True, name="planner results")]
        for thread in self._threads:
            thread.start()

    def _send(self):
        while (request := self._outbox.get()) is not None:
            pickle.dump(request, self.process.stdin)
            self.process.stdin.flush()
        self.process.stdin.close()

    def _receive(self):
        try:
            while True:
                result = pickle.load(self.process.stdout)
                if result == "ready":
                    self.ready = True
                else:
                    self._done.append(result)
        except EOFError:                  # the worker ended
            return

    def submit(self, request):
        """Queue ``request`` for the worker (never waits)."""
        self._outbox.put(request)

    def poll(self, t):
        """The results that arrived (whatever ``t``)."""
        out = []
        while self._done:
            out.append(self._done.popleft())
        return out

    def close(self):
        """End the worker."""
        self._outbox.put(None)
        try:
            self.process.wait(CLOSE_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(CLOSE_TIMEOUT)


def serve(inbox, outbox):
    """The worker: the model and options first, then one result per request until its input ends."""
    from floating_base_control.model import FloatingBaseModel
    from floating_base_control.planning.execution import Planner, refusal

    urdf_xml, options, control_period = pickle.load(inbox)
    planner = Planner(FloatingBaseModel.from_urdf_string(urdf_xml, source="planner worker"), options, control_period)
    pickle.dump("ready", outbox)
    outbox.flush()
    while True:
        try:
            request = pickle.load(inbox)
        except EOFError:
            return
        try:
            result = planner.solve(request)
        except Exception as exc:          # the node must hear of it: its task waits for this request's answer
            result = refusal(request, f"the planner failed: {type(exc).__name__}: {exc}")
        pickle.dump(result, outbox)
        outbox.flush()


if __name__ == "__main__":
    die_with_parent()()
    os.nice(WORKER_NICENESS)
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                         # a stray print must not corrupt the results' stream
    serve(sys.stdin.buffer, results)
