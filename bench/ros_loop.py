"""The ROS 2 control loop: mujoco_sim and floating_base_controller as two processes for 30 s.

Reports the achieved control rate, the period jitter (p50/p99/max), the compute
time per tick (to the command) and the age of the joint state used at each tick
(time since the simulator stamped it), from the controller's own per-tick timing
log; and which tick mode ran (``joint_state``: one step per new joint state, the
timer as watchdog; ``timer``), the time spent after the command (estimates) and
the garbage collections between ticks.
Nothing else runs: this process only waits (no recording).
Goal: 1 kHz sustained, p99 period under 1.5 ms.  DDS traffic stays on the
machine (shared memory only, a domain of its own).
"""
import os
import tempfile

import numpy as np

from common import report, save
from floating_base_control.nodes import orbital_demo as demo
from floating_base_control.orbital.scenario import OrbitalScenario

SKIP_S = 2.0     # start-up transients


TICK_ON_JOINT_STATE = True


def run(duration_s=30.0, tick_on_joint_state=TICK_ON_JOINT_STATE):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "timing.csv")
        demo.run(OrbitalScenario(duration_s=duration_s),
                 controller_overrides=[("timing_log", path),
                                              ("tick_on_joint_state", str(tick_on_joint_state).lower())],
                 record=False)
        timing = np.loadtxt(path, delimiter=",", skiprows=1)
    t, compute, age, after, gc_pause = timing.T
    keep = t >= t[0] + SKIP_S
    periods = np.diff(t[keep]) * 1e3
    return {
        "ticks": int(keep.sum()),
        "control_rate_hz": round(float((keep.sum() - 1) / (t[keep][-1] - t[keep][0])), 1),
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
    }



if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "ros_loop")
