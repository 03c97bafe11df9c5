"""The orbital closed loop: cost of one controller step, and the 30 s scenario.

* ``OrbitalController.step`` (observer + REL terms + torque) at the states of a
  real run: median and 99th percentile in microseconds, against Pinocchio's
  ``crba`` + ``computeCoriolisMatrix`` timed in the same run (as ratios), the
  median of the ticks that receive a pose sample, and the bytes a tick
  allocates (tracemalloc: peak above the tick's start, in a separate run).
  Garbage is collected between ticks, as the ROS node does
  (``realtime.CollectBetweenTicks``).  Beside it, the jitter of the machine itself: a fixed
  pure-Python workload as long as the step's median, timed the same way (its p99 over its median);
* the default 30 s scenario (controller + MuJoCo at 2 kHz + sensors +
  evaluation logging): wall time, and its summary numbers.
"""
import os
import time
import tracemalloc

import numpy as np
import pinocchio as pin

from common import report, save
from floating_base_control.orbital import scenario as orbital
from floating_base_control.realtime import CollectBetweenTicks


def step_timing(ticks=3000):
    """Time ``controller.step`` inside the default scenario's own loop."""
    times, pose_ticks, crba_c = [], [], []
    original = orbital.OrbitalController.step
    collector = CollectBetweenTicks()

    def timed(self, t, q, qdot, pose_samples=(), mu_true=None):
        t0 = time.perf_counter()
        out = original(self, t, q, qdot, pose_samples, mu_true)
        times.append(time.perf_counter() - t0)
        pose_ticks.append(bool(pose_samples))
        pm, ws = self.model.cc_pin_model, self.ws
        t1 = time.perf_counter()
        pin.crba(pm, ws.pin_data, ws.q_pin)
        pin.computeCoriolisMatrix(pm, ws.pin_data, ws.q_pin, ws.v_cc)
        crba_c.append(time.perf_counter() - t1)
        collector.after_tick()
        return out

    orbital.OrbitalController.step = timed
    collector.start()
    try:
        orbital.run(orbital.OrbitalScenario(duration_s=ticks / 1000.0))
    finally:
        collector.stop()
        orbital.OrbitalController.step = original
    us = np.array(times[10:]) * 1e6
    with_pose = us[np.array(pose_ticks[10:])]
    ref = float(np.median(crba_c[10:]) * 1e6)
    median, p99 = float(np.median(us)), float(np.percentile(us, 99))
    return {"controller_step_median_us": round(median, 1),
            "controller_step_p99_us": round(p99, 1),
            "controller_step_max_us": round(float(us.max()), 1),
            "pinocchio_crba_plus_coriolis_us": round(ref, 2),
            "controller_step_ratio_to_pinocchio": round(median / ref, 1),
            "controller_step_p99_ratio_to_pinocchio": round(p99 / ref, 2),
            "controller_step_p99_over_median": round(p99 / median, 2),
            "controller_step_pose_sample_ticks": int(with_pose.size),
            "controller_step_pose_sample_median_us": round(float(np.median(with_pose)), 1),
            "controller_step_pose_sample_over_median": round(float(np.median(with_pose)) / median, 2),
            "gc_between_ticks": True,
            "gc_collections": collector.collections,
            "load_average_1min": round(os.getloadavg()[0], 2)}


def _fixed_workload(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_jitter(median_us, runs=3000):
    """p99 / median of :func:`_fixed_workload` sized to take ``median_us``: what this machine's own
    interruptions add to a computation of the step's length that never changes."""
    t0 = time.perf_counter()
    _fixed_workload(100_000)
    n = max(1, round(median_us * 1e-6 / ((time.perf_counter() - t0) / 100_000)))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _fixed_workload(n)
        times.append(time.perf_counter() - t0)
    us = np.array(times[10:]) * 1e6
    median = float(np.median(us))
    return {"fixed_workload_median_us": round(median, 1),
            "fixed_workload_p99_over_median": round(float(np.percentile(us, 99)) / median, 2)}


def step_allocations(ticks=1000):
    """Bytes one ``controller.step`` allocates: tracemalloc's peak during the tick above the traced
    memory at its start (what the tick needs beyond what already exists), after 100 ticks."""
    peaks = []
    original = orbital.OrbitalController.step

    def traced(self, *args, **kwargs):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out = original(self, *args, **kwargs)
        peaks.append(tracemalloc.get_traced_memory()[1] - before)
        return out

    orbital.OrbitalController.step = traced
    tracemalloc.start()
    try:
        orbital.run(orbital.OrbitalScenario(duration_s=ticks / 1000.0))
    finally:
        tracemalloc.stop()
        orbital.OrbitalController.step = original
    peaks = np.array(peaks[100:])
    return {"controller_step_bytes_per_tick": int(np.median(peaks)),
            "controller_step_bytes_per_tick_max": int(peaks.max())}


def scenario_30s():
    t0 = time.perf_counter()
    _, summary = orbital.run(orbital.OrbitalScenario(duration_s=30.0))
    wall = time.perf_counter() - t0
    keys = ("final_joint_error_deg", "final_observer_pose_error", "final_observer_velocity_error",
            "momentum_drift_rel", "tau_hat_total_variation_ratio", "status")
    return {"scenario_30s_wall_s": round(wall, 1), "real_time_factor": round(30.0 / wall, 2),
            **{k: summary[k] for k in keys}}


def run():
    timing = step_timing()
    return {**timing, **machine_jitter(timing["controller_step_median_us"]), **step_allocations(),
            **scenario_30s()}



if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "orbital")
