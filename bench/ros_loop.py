"""The ROS 2 control loop: mujoco_sim and floating_base_controller as two processes for 30 s.

Reports the achieved control rate, the period jitter (p50/p99/max), the compute
time per tick (to the command) and the age of the joint state used at each tick
(time since the simulator stamped it), from the controller's own per-tick timing
log; and which tick mode ran (``joint_state``: one step per new joint state, the
timer as watchdog; ``timer``), the time spent after the command (estimates) and
the garbage collections between ticks.
Nothing else runs: this process only waits (no recording).  The CPU time each node
process uses (share of a core; the controller's per tick) is reported too: on a machine shared
with other work it says more about the loop's own cost than the rates do; and how each process was
scheduled (``realtime_priority`` of config/orbital_robot.yaml: SCHED_FIFO where permitted).
Goal: 1 kHz sustained, p99 period under 1.5 ms.  DDS traffic stays on the
machine (shared memory only, a domain of its own).
"""
import os
import tempfile
import threading
import time

import numpy as np

from common import report, save
from floating_base_control.ros import orbital_demo as demo
from floating_base_control.ros.loop_comparison import node_children, scheduling
from floating_base_control.experiments.orbital.scenario import OrbitalScenario

SKIP_S = 2.0     # start-up transients


TICK_ON_JOINT_STATE = True


NODES = {"sim": "ros.orbital_sim", "controller": "ros.orbital_controller"}


class NodeCpu:
    """CPU time of the node processes (children of this one, Linux ``/proc``), sampled while they run:
    the share of a core each one uses, which a loaded machine changes less than the rates."""

    def __init__(self, period=0.5):
        self.samples, self.period, self.done = [], period, threading.Event()
        self.scheduling = {name: "unknown" for name in NODES}
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _sample(self):
        tick = os.sysconf("SC_CLK_TCK")
        while not self.done.wait(self.period):
            cpu = {}
            for name, pid in node_children(NODES):
                try:
                    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                except OSError:            # it just ended
                    continue
                cpu[name] = (int(stat[11]) + int(stat[12])) / tick
                self.scheduling[name] = scheduling(pid)
            if len(cpu) == len(NODES):
                self.samples.append((time.monotonic(), cpu))

    def fractions(self, window_s):
        """Each node's CPU use (s per s) over the last ``window_s`` seconds that both ran (NaN if unknown)."""
        if not self.samples:
            return {name: float("nan") for name in NODES}
        end_t, end = self.samples[-1]
        start_t, start = next((t, c) for t, c in self.samples if t >= end_t - window_s)
        span = end_t - start_t
        return {name: (end[name] - start[name]) / span if span > 0 else float("nan") for name in NODES}


def run(duration_s=30.0, tick_on_joint_state=TICK_ON_JOINT_STATE):
    with tempfile.TemporaryDirectory() as tmp, NodeCpu() as cpu:
        path = os.path.join(tmp, "timing.csv")
        demo.run(OrbitalScenario(duration_s=duration_s),
                 controller_overrides=[("timing_log", path),
                                              ("tick_on_joint_state", str(tick_on_joint_state).lower())],
                 record=False)
        timing = np.loadtxt(path, delimiter=",", skiprows=1)
    # the last two thirds of the run: the physics runs, start-up (imports, discovery) is over
    cpu_use = cpu.fractions(2.0 * duration_s / 3.0)
    t, compute, age, after, gc_pause = timing.T
    keep = t >= t[0] + SKIP_S
    periods = np.diff(t[keep]) * 1e3
    rate = float((keep.sum() - 1) / (t[keep][-1] - t[keep][0]))
    return {
        "ticks": int(keep.sum()),
        "control_rate_hz": round(rate, 1),
        "period_p50_ms": round(float(np.percentile(periods, 50)), 3),
        "period_p99_ms": round(float(np.percentile(periods, 99)), 3),
        "period_max_ms": round(float(periods.max()), 3),
        "compute_p50_ms": round(float(np.percentile(compute[keep], 50) * 1e3), 3),
        "compute_p99_ms": round(float(np.percentile(compute[keep], 99) * 1e3), 3),
        "joint_state_age_p50_ms": round(float(np.nanpercentile(age[keep], 50) * 1e3), 3),
        "joint_state_age_p99_ms": round(float(np.nanpercentile(age[keep], 99) * 1e3), 3),
        "joint_state_age_max_ms": round(float(np.nanmax(age[keep]) * 1e3), 3),
        "tick_mode": "joint_state" if tick_on_joint_state else "timer",
        "after_tick_p99_ms": round(float(np.percentile(after[keep], 99) * 1e3), 3),
        "gc_between_ticks": True,
        "gc_collections": int((gc_pause[keep] > 0).sum()),
        "gc_pause_max_ms": round(float(gc_pause[keep].max() * 1e3), 3),
        "load_average_1min": round(os.getloadavg()[0], 2),
        **{f"{name}_cpu_fraction": round(use, 3) for name, use in cpu_use.items()},
        "controller_cpu_per_tick_ms": round(cpu_use["controller"] / rate * 1e3, 3),
        **{f"{name}_scheduling": policy for name, policy in cpu.scheduling.items()},
    }



if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "ros_loop")
