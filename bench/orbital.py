"""The orbital closed loop: cost of one controller step, and the 30 s scenario.

* ``OrbitalController.step`` (observer + REL terms + torque) at the states of a
  real run: median and 99th percentile in microseconds, against Pinocchio's
  ``crba`` + ``computeCoriolisMatrix`` timed in the same run (as ratios), the
  median of the ticks that receive a pose sample, and the bytes a tick
  allocates (tracemalloc: peak above the tick's start, in a separate run).
  Garbage is collected between ticks, as the ROS node does
  (``realtime.CollectBetweenTicks``).  Beside it, the jitter of the machine itself: a fixed
  pure-Python workload as long as the step's median, timed the same way (its p99 over its median),
  and the p99 over the median of the reference (``crba`` + ``computeCoriolisMatrix``) in the loop;
  and how often, and for how long, the machine interrupts a running loop;
* the controller alone: the same run's inputs replayed into a fresh controller, tick after tick
  without the simulator between them (its torques checked bit for bit against the run's): median,
  p99 over median and pose-sample ticks over median, what the step's own code does to its tail;
* the default 30 s scenario (controller + MuJoCo at 2 kHz + sensors +
  evaluation logging): wall time, and its summary numbers;
* the realistic scenario of seed 0 for 60 s (friction at every physics step, quantized encoders, the
  star tracker, MuJoCo at 1 kHz; a campaign's run): simulated time over CPU time, ``realistic_real_time_factor``.
"""
import os
import time
import tracemalloc

import numpy as np
import pinocchio as pin

from common import report, save
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.experiments.orbital.realistic import realistic_scenario
from floating_base_control.ros.realtime import CollectBetweenTicks


def _microseconds(times):
    """Timings in seconds without the first 10 (warm-up), in us; with their median and p99."""
    us = np.array(times[10:]) * 1e6
    return us, float(np.median(us)), float(np.percentile(us, 99))


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
    us, median, p99 = _microseconds(times)
    with_pose = us[np.array(pose_ticks[10:])]
    _, ref, ref_p99 = _microseconds(crba_c)
    return {"controller_step_median_us": round(median, 1),
            "controller_step_p99_us": round(p99, 1),
            "controller_step_max_us": round(float(us.max()), 1),
            "pinocchio_crba_plus_coriolis_us": round(ref, 2),
            "controller_step_ratio_to_pinocchio": round(median / ref, 1),
            "controller_step_p99_ratio_to_pinocchio": round(p99 / ref, 2),
            "controller_step_p99_over_median": round(p99 / median, 2),
            "pinocchio_crba_plus_coriolis_p99_over_median": round(ref_p99 / ref, 2),
            "controller_step_pose_sample_ticks": int(with_pose.size),
            "controller_step_pose_sample_median_us": round(float(np.median(with_pose)), 1),
            "controller_step_pose_sample_over_median": round(float(np.median(with_pose)) / median, 2),
            "gc_between_ticks": True,
            "gc_collections": collector.collections,
            "load_average_1min": round(os.getloadavg()[0], 2)}


def controller_alone(ticks=3000):
    """The step's timing without the loop around it: the default scenario's controller inputs, recorded,
    replayed into a fresh controller tick after tick (garbage collected between ticks as above)."""
    made, inputs = [], []

    class Recorded(orbital.OrbitalController):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append((args, kwargs))

        def step(self, t, q, qdot, pose_samples=(), mu_true=None):
            out = super().step(t, q, qdot, pose_samples, mu_true)
            inputs.append((t, q.copy(), qdot.copy(), list(pose_samples), out.tau.copy()))
            return out

    original = orbital.OrbitalController
    orbital.OrbitalController = Recorded
    try:
        orbital.run(orbital.OrbitalScenario(duration_s=ticks / 1000.0))
    finally:
        orbital.OrbitalController = original
    (args, kwargs), = made
    controller, collector, times = original(*args, **kwargs), CollectBetweenTicks(), []
    collector.start()
    try:
        for t, q, qdot, samples, tau in inputs:
            t0 = time.perf_counter()
            out = controller.step(t, q, qdot, samples)
            times.append(time.perf_counter() - t0)
            if not np.array_equal(out.tau, tau):
                raise RuntimeError(f"the replayed controller differs from the run at t = {t}")
            collector.after_tick()
    finally:
        collector.stop()
    us, median, p99 = _microseconds(times)
    with_pose = us[[bool(samples) for _, _, _, samples, _ in inputs[10:]]]
    return {"controller_alone_step_median_us": round(median, 1),
            "controller_alone_step_p99_over_median": round(p99 / median, 2),
            "controller_alone_pose_sample_over_median": round(float(np.median(with_pose)) / median, 2)}


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
    _, median, p99 = _microseconds(times)
    return {"fixed_workload_median_us": round(median, 1),
            "fixed_workload_p99_over_median": round(p99 / median, 2)}


def machine_interruptions(seconds=2.0, gap_us=2.0):
    """How often this machine takes the processor from a running loop, and for how long: the gaps over
    ``gap_us`` between successive clock readings of a Python loop (a reading takes ~0.1 us).  A step of
    median ``m`` is hit with a probability of about ``rate * m``: over 1 %, its p99 is at least
    ``m`` plus such a gap, whatever the step computes."""
    gaps, limit = [], gap_us * 1e-6
    start = previous = time.perf_counter()
    while previous - start < seconds:
        now = time.perf_counter()
        if now - previous > limit:
            gaps.append(now - previous)
        previous = now
    us = np.array(gaps) * 1e6
    return {"machine_interruptions_per_s": round(us.size / seconds),
            "machine_interruption_median_us": round(float(np.median(us)), 1) if us.size else 0.0,
            "machine_interruption_p90_us": round(float(np.percentile(us, 90)), 1) if us.size else 0.0}


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


def realistic_60s():
    """The realistic scenario of seed 0 for 60 s, as a campaign runs it: simulated time over the process's CPU
    time (one core's real-time factor, what a campaign's throughput per worker follows), and over wall time."""
    scenario = realistic_scenario(0, duration_s=60.0)
    cpu, wall = time.process_time(), time.perf_counter()
    _, summary = orbital.run(scenario)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"realistic_60s_cpu_s": round(cpu, 2), "realistic_60s_wall_s": round(wall, 2),
            "realistic_real_time_factor": round(60.0 / cpu, 2),
            "realistic_real_time_factor_wall": round(60.0 / wall, 2),
            "realistic_final_joint_error_deg": summary["final_joint_error_deg"],
            "realistic_status": summary["status"]}


def run():
    timing = step_timing()
    return {**timing, **machine_jitter(timing["controller_step_median_us"]), **machine_interruptions(),
            **controller_alone(), **step_allocations(), **scenario_30s(), **realistic_60s()}



if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "orbital")
