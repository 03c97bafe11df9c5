"""Speed of the hopping controller ([Feurstein2021]) and of its simulation, revolute hopper.

* ``HopperController.step`` (what a ROS node calls once per tick), controllers II and III,
  and Pinocchio's ``crba`` in the same run for scale (``ratio_to_crba``);
* one simulated step of the reproduction loop (sensors, controller, MuJoCo step, energy
  bookkeeping), and the real-time factor of the 0.1 ms loop: simulated time over wall time
  (``real_time_factor``) and over the process's CPU time (``real_time_factor_cpu``, what a loaded
  machine does not inflate), the median of ``LOOP_RUNS`` runs of 1 s of Exp IV.
"""
import statistics
import time

import numpy as np
import pinocchio as pin

from common import save
from engine import median_us
from floating_base_control.robots.hopper.contact import ContactDetector
from floating_base_control.robots.hopper.controller import HopperController
from floating_base_control.robots.hopper.model import HopperMeasurements
from floating_base_control.robots.hopper.model import hopper_model, planar_pose, planar_twist
from floating_base_control.experiments.hopper import scenario as hopper_experiments
from floating_base_control.experiments.hopper.scenario import experiment

#: Runs of the 1 s loop whose median the real-time factors report.
LOOP_RUNS = 3


def run():
    exp = experiment("revolute", "IV")
    log, _, _ = hopper_experiments.run(exp, 0.5, log_every=50)
    a = log.arrays()
    model_states = []
    model = hopper_model("revolute", exp.gravity)
    for i in range(0, len(a["t"]), max(1, len(a["t"]) // 32)):
        g1 = planar_pose(a["base_x"][i], a["base_z"][i], -2.5174)
        meas = HopperMeasurements(a["t"][i], np.array([a["q"][i]]), np.array([a["qdot"][i]]), g1,
                                  planar_twist(0.1, -0.2, 0.3), 20.0 * a["stance"][i])
        model_states.append((meas,))
    controllers = {v: HopperController(model, experiment("revolute", "IV", variant=v).gains) for v in ("II", "III")}
    for c in controllers.values():
        c.contact = ContactDetector(c.gains, stance=True)
    ws = model.create_data()

    def crba(meas):
        ws.q_pin[7:] = meas.q
        pin.crba(model.pin_model, ws.pin_data, ws.q_pin)

    timings = median_us({"pinocchio_crba": crba,
                         "controller_II_step": controllers["II"].step,
                         "controller_III_step": controllers["III"].step}, model_states)
    walls, cpus = [], []
    for _ in range(LOOP_RUNS):
        w0, c0 = time.perf_counter(), time.process_time()
        hopper_experiments.run(exp, 1.0)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    loop, cpu = statistics.median(walls), statistics.median(cpus)
    crba_us = timings["pinocchio_crba"]
    return {"median_us": {k: round(v, 2) for k, v in timings.items()},
            "simulation_step_us": round(loop / 1e4 * 1e6, 1), "real_time_factor": round(1.0 / loop, 3),
            "simulation_step_cpu_us": round(cpu / 1e4 * 1e6, 1), "real_time_factor_cpu": round(1.0 / cpu, 3),
            "ratio_to_crba": {k: round(v / crba_us, 1) for k, v in timings.items() if k != "pinocchio_crba"},
            "simulation_step_ratio_to_crba": round(loop / 1e4 * 1e6 / crba_us, 1)}


def report(result):
    for k, v in result["median_us"].items():
        ratio = result["ratio_to_crba"].get(k)
        print(f"  {k:44s}{v:12.1f} us" + (f"  ({ratio:.1f}x crba)" if ratio else ""))
    print(f"  simulated step (sensors + controller + MuJoCo + bookkeeping) {result['simulation_step_us']} us, "
          f"real-time factor {result['real_time_factor']} (CPU: {result['simulation_step_cpu_us']} us, "
          f"{result['real_time_factor_cpu']})")


if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "hopper")
