"""Work a control loop must not wait for, in a process of its own: acceptance checks and planning (ROS-free).

A 1 kHz loop in Python has its process' interpreter to itself: a check of tens of milliseconds run in the
loop's thread delays the ticks behind it, and run in another thread of the same process it still takes the
interpreter lock from the loop (measured: a reach check repeated in a thread below the loop's real-time
priority made the ticks' wake-up p99 1.2-1.8 ms and max 8 ms, against 0.08 ms and 2 ms alone; in a thread of
ordinary priority the lock's holder waits for the CPU and the p99 was 68 ms; in another process, 0.08 ms and
2 ms).  :class:`Worker` runs such jobs in a child process with ordinary scheduling (or real-time below the loop,
for short jobs a command waits for), one at a time, in order;
the loop submits a job (:meth:`Worker.submit`) and, at a tick boundary, asks its :class:`Job` whether it is
done (a non-blocking read of a pipe, only while jobs are out) and takes its result.

A job is a function named ``"module:function"`` (or ``"module:Class.method"``) with picklable arguments,
imported and called in the worker.  With ``context=True`` its first argument is the worker's context: what
``setup`` built once when the worker started (e.g. the robot's model, a planner that keeps its plans between
jobs).  A job that raises a
:class:`~floating_base_control.validation.FloatingBaseError` (a refusal with its reason) raises it again from
:meth:`Job.result`; any other exception, or the worker's end, is a :class:`WorkerError` naming it.  The worker
starts at its first job (importing the package takes it a few seconds, a minute on a loaded machine;
:meth:`Worker.start` starts it earlier), ends with its parent however the parent ends (Linux's parent-death
signal) and with :meth:`close`.  Until it is up (its setup done), a worker given a context ``here`` runs the jobs at
once in the calling process, with that context: a check then delays the loop, as it did before, instead of
waiting for the worker's start.
"""
import contextlib
import functools
import importlib
import itertools
import os
import signal
import subprocess
import sys
import traceback
from multiprocessing.connection import Connection

from floating_base_control.processes import die_with_parent
from floating_base_control.validation import FloatingBaseError


class WorkerError(RuntimeError):
    """A job failed for a reason other than a refusal, or the worker process ended."""


def _function(name):
    module, _, function = name.partition(":")
    return functools.reduce(getattr, function.split("."), importlib.import_module(module))


class Job:
    """A job submitted to a :class:`Worker` (see the module doc)."""

    def __init__(self, worker, ident):
        self.worker, self.id = worker, ident
        self._outcome = None            # (value, error) once done

    def done(self):
        """Whether the result is here (reads what the worker has sent, without waiting)."""
        if self._outcome is None:
            self.worker.collect()
        return self._outcome is not None

    def result(self):
        """The job's value; raises its refusal (:class:`FloatingBaseError`) or a :class:`WorkerError`.
        ``RuntimeError`` if it is not :meth:`done`."""
        if not self.done():
            raise RuntimeError(f"job {self.id} is not done")
        value, error = self._outcome
        if error is not None:
            raise error
        return value


def _run(function, context, with_context, args):
    """``(value, error)`` of a job (module doc)."""
    try:
        return _function(function)(*((context,) if with_context else ()), *args), None
    except FloatingBaseError as exc:
        return None, exc
    except Exception as exc:             # reported to the caller, the worker goes on
        return None, WorkerError(f"{function} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")


class Worker:
    """A child process running jobs (module doc); ``setup``: ``"module:function"`` that builds the context from
    ``setup_args`` (picklable) in the worker, or ``None``; ``here``: the context for jobs run in this process
    while the worker is not up, or ``None`` (they wait for it); ``niceness``: added to the worker's (a lower
    priority than ordinary work, for long jobs such as planning); ``realtime_priority``: once its setup is done,
    the worker runs its jobs under ``SCHED_FIFO`` at that priority if permitted (0: ordinary scheduling), for short
    jobs a command waits for: below the loop's, it never delays a tick, and ordinary processes (a loaded machine)
    do not delay it (measured: a reach check answered in 0.2-0.9 s beside other work, instead of 10 ms)."""

    def __init__(self, setup=None, *setup_args, here=None, niceness=0, realtime_priority=0):
        self.setup, self.setup_args, self.here, self.niceness = setup, setup_args, here, niceness
        self.realtime_priority = realtime_priority
        self.process = self.connection = None
        self.up = False                  # the worker has built its context
        self.jobs = {}                   # id -> Job, submitted and not yet done
        self._ids = itertools.count()

    def start(self):
        """Start the worker process if it is not running (it starts by itself at the first job)."""
        if self.process is not None and self.process.poll() is None:
            return
        self.up = False
        parent_reads, child_writes = os.pipe()
        child_reads, parent_writes = os.pipe()
        # one core's worth of work: no thread pool of BLAS beside the loop
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        args = (child_reads, child_writes, os.getpid(), self.niceness, self.realtime_priority)
        self.process = subprocess.Popen([sys.executable, "-m", "floating_base_control.background", *map(str, args)],
                                        pass_fds=(child_reads, child_writes),
                                        env=env, stdin=subprocess.DEVNULL,
                                        # a Ctrl-C or SIGTERM to the parent's process group is the parent's to
                                        # handle: it reached the worker while it imported (a KeyboardInterrupt)
                                        process_group=0)
        os.close(child_reads)
        os.close(child_writes)
        self.connection = _Pipe(parent_reads, parent_writes)
        self.connection.send((self.setup, self.setup_args))

    def submit(self, function, *args, context=False):
        """Run ``function(*args)`` (``function(context, *args)`` with ``context``) in the worker; its :class:`Job`."""
        self.start()
        job = Job(self, next(self._ids))
        if self.here is not None:
            self.collect()
            if not self.up:
                job._outcome = _run(function, self.here, context, args)
                return job
        self.jobs[job.id] = job
        try:
            self.connection.send((job.id, function, args, context))
        except OSError as exc:           # the worker ended: the job fails, the next one starts a new worker
            self._ended(f"the background worker ended ({exc})")
        return job

    def collect(self):
        """Take the results the worker has sent, without waiting; a worker that ended fails its jobs."""
        if not self.jobs and (self.up or self.connection is None):
            return
        try:
            while self.connection.poll():
                ident, value, error = self.connection.recv()
                self.up = True           # its first message says its setup is done
                job = self.jobs.pop(ident, None)
                if job is not None:
                    job._outcome = (value, error)
        except (EOFError, OSError):
            self._ended(f"the background worker ended (exit status {self.process.poll()})")

    def _ended(self, why):
        for job in self.jobs.values():
            job._outcome = (None, WorkerError(why))
        self.jobs = {}
        self.close()

    @property
    def busy(self):
        """Jobs submitted and not yet collected."""
        return len(self.jobs)

    def close(self):
        """End the worker (its unfinished jobs are dropped)."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None


class _Pipe:
    """Two ends of pipes as one duplex connection (``multiprocessing.connection``'s framing and pickling)."""

    def __init__(self, read_fd, write_fd):
        self.reader, self.writer = Connection(read_fd, writable=False), Connection(write_fd, readable=False)

    def send(self, obj):
        self.writer.send(obj)

    def recv(self):
        return self.reader.recv()

    def poll(self):
        return self.reader.poll(0)

    def close(self):
        self.reader.close()
        self.writer.close()


def _serve(read_fd, write_fd, parent, niceness, realtime_priority):
    """The worker process (in a process group of its own): ordinary scheduling, ends with its parent; builds the
    context, then (at ``realtime_priority``, if any and permitted) answers jobs in order until its parent closes
    the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()()
    if os.getppid() != parent:               # the parent ended before the signal was asked for
        return
    if sys.platform.startswith("linux"):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))     # not the loop's real-time priority
    os.nice(niceness)
    pipe = _Pipe(read_fd, write_fd)
    setup, setup_args = pipe.recv()
    context = failed = None
    try:
        context = _function(setup)(*setup_args) if setup else None
    except Exception as exc:                 # every job says so
        failed = WorkerError(f"the background worker's setup {setup} failed: {type(exc).__name__}: {exc}")
    if realtime_priority and sys.platform.startswith("linux"):
        with contextlib.suppress(PermissionError):      # not permitted: ordinary scheduling
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(realtime_priority))
    pipe.send((None, None, None))            # up
    while True:
        try:
            ident, function, args, with_context = pipe.recv()
        except EOFError:
            return
        value, error = (None, failed) if failed else _run(function, context, with_context, args)
        try:
            pipe.send((ident, value, error))
        except Exception as exc:             # a value that does not pickle
            pipe.send((ident, None, WorkerError(f"{function}: its result cannot be sent: {exc}")))


if __name__ == "__main__":         # as the package's module: what it sends back is pickled by that name
    from floating_base_control import background
    background._serve(*map(int, sys.argv[1:6]))
