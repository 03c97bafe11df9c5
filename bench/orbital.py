"""The orbital closed loop: cost of one controller step, and the 30 s scenario.

* ``OrbitalController.step`` (observer + REL terms + torque) at the states of a
  real run: median and 99th percentile in microseconds, against Pinocchio's
  ``crba`` + ``computeCoriolisMatrix`` timed in the same run;
* the default 30 s scenario (controller + MuJoCo at 2 kHz + sensors +
  evaluation logging): wall time, and its summary numbers.
"""
import time

import numpy as np
import pinocchio as pin

from common import report, save
from floating_base_control.orbital import scenario as orbital


def step_timing(ticks=3000):
    """Time ``controller.step`` inside the default scenario's own loop."""
    times, crba_c = [], []
    original = orbital.OrbitalController.step

    def timed(self, *args, **kwargs):
        t0 = time.perf_counter()
        out = original(self, *args, **kwargs)
        times.append(time.perf_counter() - t0)
        pm, ws = self.model.cc_pin_model, self.ws
        t1 = time.perf_counter()
        pin.crba(pm, ws.pin_data, ws.q_pin)
        pin.computeCoriolisMatrix(pm, ws.pin_data, ws.q_pin, ws.v_cc)
        crba_c.append(time.perf_counter() - t1)
        return out

    orbital.OrbitalController.step = timed
    try:
        orbital.run(orbital.OrbitalScenario(duration_s=ticks / 1000.0))
    finally:
        orbital.OrbitalController.step = original
    us = np.array(times[10:]) * 1e6
    ref = float(np.median(crba_c[10:]) * 1e6)
    return {"controller_step_median_us": round(float(np.median(us)), 1),
            "controller_step_p99_us": round(float(np.percentile(us, 99)), 1),
            "controller_step_max_us": round(float(us.max()), 1),
            "pinocchio_crba_plus_coriolis_us": round(ref, 2),
            "controller_step_ratio_to_pinocchio": round(float(np.median(us)) / ref, 1)}


def scenario_30s():
    t0 = time.perf_counter()
    _, summary = orbital.run(orbital.OrbitalScenario(duration_s=30.0))
    wall = time.perf_counter() - t0
    keys = ("final_joint_error_deg", "final_observer_pose_error", "final_observer_velocity_error",
            "momentum_drift_rel", "tau_hat_total_variation_ratio", "status")
    return {"scenario_30s_wall_s": round(wall, 1), "real_time_factor": round(30.0 / wall, 2),
            **{k: summary[k] for k in keys}}


def run():
    return {**step_timing(), **scenario_30s()}



if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "orbital")
