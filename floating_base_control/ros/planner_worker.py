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

from floating_base_control.planning.execution import refusal
from floating_base_control.processes import die_with_parent

#: Niceness added to the worker process (lower priority than the control loop).
WORKER_NICENESS = 10
#: Seconds to wait for the worker to end when the planner is closed.
CLOSE_TIMEOUT = 5.0


class BackgroundPlanner:
    """``submit`` and ``poll`` of a :class:`~floating_base_control.planning.execution.Planner` running in a worker
    process (module doc) on ``model`` (its URDF description), with the planner's ``options`` and
    ``control_period``."""

    def __init__(self, model, options=None, control_period=1e-3):
        self._setup = (model.description.urdf, options or {}, control_period)
        self.process = None
        self._pending = {}                # request id -> request, until its result comes
        self._start()

    def _start(self):
        """A new worker, with its two threads (also after the previous one ended)."""
        self.process = subprocess.Popen([sys.executable, "-m", "floating_base_control.ros.planner_worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._outbox, self._done = queue.Queue(), deque()
        self._outbox.put(self._setup)
        threads = [threading.Thread(target=target, args=(self.process, self._outbox, self._done), daemon=True,
                                    name=name) for target, name in ((self._send, "planner requests"),
                                                                    (self._receive, "planner results"))]
        for thread in threads:
            thread.start()
        self._receiver = threads[1]

    def _send(self, process, outbox, done):
        try:
            while (item := outbox.get()) is not None:
                pickle.dump(item, process.stdin)
                process.stdin.flush()
            process.stdin.close()
        except OSError:                   # the worker ended: poll() answers what it did not
            return

    def _receive(self, process, outbox, done):
        try:
            while True:
                done.append(pickle.load(process.stdout))
        except (EOFError, OSError, pickle.UnpicklingError):       # the worker ended
            return

    def submit(self, request):
        """Queue ``request`` for the worker (never waits); a worker that ended is started anew."""
        if not self._receiver.is_alive():
            self._start()
        self._pending[request.id] = request
        self._outbox.put(request)

    def poll(self, t):
        """The results that arrived (whatever ``t``); once the worker has ended, a refusal for each request it did
        not answer (the task must not wait for it)."""
        ended = not self._receiver.is_alive()        # then every result it read is in _done
        out = []
        while self._done:
            out.append(self._done.popleft())
        if ended:
            answered = {o.request.id for o in out}
            out += [refusal(r, f"the planner's process ended (exit code {self.process.poll()})")
                    for r in self._pending.values() if r.id not in answered]
        for result in out:
            self._pending.pop(result.request.id, None)
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
    from floating_base_control.planning.execution import Planner

    urdf_xml, options, control_period = pickle.load(inbox)
    planner = Planner(FloatingBaseModel.from_urdf_string(urdf_xml, source="planner worker"), options, control_period)
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
