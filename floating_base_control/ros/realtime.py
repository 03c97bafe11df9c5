"""What a control loop in Python needs to keep its period: the garbage collector out of the step, and
the processor when it is due (real-time scheduling).

CPython collects cyclic garbage whenever enough container objects were allocated, in
whatever code happens to run: inside a control step, a full collection of a process
holding a robot model and a ROS 2 node costs milliseconds.  :class:`CollectBetweenTicks`
moves it between ticks: at the start everything that exists is collected once and frozen
(moved to a generation the collector never scans again), automatic collection is off,
and after each tick the young generations are collected when CPython would have done it
(its own thresholds), timed.  The oldest generation is not collected while active (only
cyclic garbage that survived two young collections would wait there until :meth:`stop`).
"""
import contextlib
import gc
import os
import time


class CollectBetweenTicks:
    """Garbage collection only between control ticks (see the module doc)."""

    def __init__(self):
        self.active = False
        self.collections = 0
        self.pause_max_s = 0.0
        self._was_enabled = True

    def start(self):
        """Collect and freeze what exists, then stop automatic collection."""
        if self.active:
            return
        gc.collect()
        gc.freeze()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.active = True

    def after_tick(self):
        """Collect the young generations if CPython would have; returns the pause (s)."""
        if not self.active:
            return 0.0
        count0, count1, _ = gc.get_count()
        threshold0, threshold1, _ = gc.get_threshold()
        if count0 < threshold0:
            return 0.0
        started = time.perf_counter()
        gc.collect(1 if count1 >= threshold1 else 0)
        pause = time.perf_counter() - started
        self.collections += 1
        self.pause_max_s = max(self.pause_max_s, pause)
        return pause

    def stop(self):
        """Automatic collection as before :meth:`start`; the frozen objects are scanned again."""
        if not self.active:
            return
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()
        self.active = False


def fifo_scheduling(priority):
    """Run every thread of this process under ``SCHED_FIFO`` at ``priority`` (1-99); threads started
    later inherit it.  What a hardware driver's loop and ros2_control's controller manager (priority 50)
    ask for: on two cores shared by a simulator and a controller at 1 kHz, ordinary scheduling left 2-4 %
    of the periods without a control step (measured, docs/reference/ros.md).  All threads, not only the loop's: the DDS
    threads that deliver its messages must not wait either.  Returns ``None``, or why it could not
    (the process keeps ordinary scheduling): Linux only, and only with the permission (root, CAP_SYS_NICE
    or an ``rtprio`` limit, ``/etc/security/limits.conf``)."""
    if not os.path.isdir("/proc/self/task"):
        return "real-time scheduling is set up on Linux only"
    try:
        _each_thread(lambda tid: os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority)))
    except PermissionError:
        return (f"SCHED_FIFO at priority {priority} is not permitted for this user (needs root, "
                "CAP_SYS_NICE or an rtprio limit in /etc/security/limits.conf)")
    return None


def cpu_affinity(cpus):
    """Run every thread of this process on the CPUs ``cpus`` only (threads started later inherit it), as
    ros2_control's ``cpu_affinity``.  Why a simulation needs it: Linux lets real-time tasks take at most
    95 % of each CPU per second (``/proc/sys/kernel/sched_rt_runtime_us``) and stops them for the rest of
    the second beyond it; a 1 kHz controller and simulator at ``SCHED_FIFO`` that meet on one CPU can pass
    that, and then both stand still for 50 ms (measured on two cores beside two CPU burners: periods of
    50-160 ms; none with the throttling off or with each process on a CPU of its own,
    docs/reference/ros.md).  Returns ``None``, or why not (the process keeps its CPUs)."""
    allowed = os.sched_getaffinity(0)
    if not set(cpus) <= allowed:
        return f"CPUs {sorted(set(cpus) - allowed)} are not among this process's CPUs {sorted(allowed)}"
    _each_thread(lambda tid: os.sched_setaffinity(tid, cpus))
    return None


def ordinary_scheduling():
    """Back to ordinary scheduling (``SCHED_OTHER``) for every thread of this process, after
    :func:`fifo_scheduling`."""
    _each_thread(lambda tid: os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0)))


def _each_thread(set_one):
    """``set_one(tid)`` for every thread of this process (Linux ``/proc``); one that ends meanwhile is passed
    over."""
    for tid in [int(tid) for tid in os.listdir("/proc/self/task")]:
        with contextlib.suppress(ProcessLookupError):
            set_one(tid)
