"""What a control loop in Python needs to keep its period: the garbage collector out of the step.

CPython collects cyclic garbage whenever enough container objects were allocated, in
whatever code happens to run: inside a control step, a full collection of a process
holding a robot model and a ROS 2 node costs milliseconds.  :class:`CollectBetweenTicks`
moves it between ticks: at the start everything that exists is collected once and frozen
(moved to a generation the collector never scans again), automatic collection is off,
and after each tick the young generations are collected when CPython would have done it
(its own thresholds), timed.  The oldest generation is not collected while active (only
cyclic garbage that survived two young collections would wait there until :meth:`stop`).
"""
import gc
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
