"""How long can the end-effector demo's target be held while the system carries the paper's momentum?

Runs the ROS-free end-effector demo (``experiments/orbital/tasks.py``), then integrates the physically possible hold
(``analysis/hold.py``) from the simulator's state when the reference reaches the target, with the
minimum-norm shape velocity and with the 1-dim null space steered away from the joint limits; prints
when and why each ends, the shoulder-to-end-effector distance (the arm's reach) and the smallest singular
value of J* along the way.  About a minute:  ``.venv/bin/python studies/ee_hold.py [tumble_scale ...]``
"""
import sys
from dataclasses import replace

import numpy as np

from floating_base_control.analysis.hold import com_speed, hold_motion
from floating_base_control.control.end_effector import FrameWorkspace, frame_id, frame_kinematics
from floating_base_control.model import FloatingBaseModel
from floating_base_control.experiments.orbital import tasks
from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from floating_base_control.resources import orbital_robot_urdf


def reach(model, frame, q):
    """Distance from the shoulder (joint 2's frame) to the end effector, m."""
    ws = FrameWorkspace(model)
    p_e = frame_kinematics(ws, frame_id(model, frame), q)[0][:3, 3]
    p_s = frame_kinematics(ws, frame_id(model, "panda_link2"), q)[0][:3, 3]
    return float(np.linalg.norm(p_e - p_s))


def main(scales):
    settings = replace(tasks.TaskSettings(), ee_hold_horizon_s=0.0)
    model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
    for scale in scales:
        scenario = OrbitalScenario(duration_s=tasks.default_duration("end-effector", settings),
                                   mu0_omega_deg_s=tuple(scale * w for w in OrbitalScenario().mu0_omega_deg_s))
        scenario = tasks.task_scenario(scenario, "end-effector", settings)
        motion, evaluate = tasks.build("end-effector", scenario, model, settings)
        from floating_base_control.experiments.orbital import scenario as orbital
        log, _ = orbital.run(scenario, motion=motion, evaluate=evaluate)
        ee = motion.second
        i = int(np.searchsorted(log["t"], ee.reference.end_time))
        h, q = log["momentum"][i], log["q"][i]
        print(f"tumble x{scale:g}: |h_angular| {np.linalg.norm(h[:3]):.2f} N m s, CoM speed "
              f"{com_speed(model, h) * 1e3:.1f} mm/s, reach at arrival {reach(model, settings.ee_frame, q):.3f} m")
        for steer in (0.0, 0.5, 2.0, 5.0):
            hold = hold_motion(model, settings.ee_frame, q, ee.target, h, horizon_s=30.0, steer=steer)
            print(f"  steer {steer:3g}: hold {hold.duration_s:6.2f} s, ended by {hold.reason}; reach "
                  f"{reach(model, settings.ee_frame, hold.q[-1]):.3f} m, min sigma(J*) {hold.sigma_min.min():.3f}, "
                  f"max |qdot| {np.abs(hold.qdot).max():.2f} rad/s")


if __name__ == "__main__":
    main([float(x) for x in sys.argv[1:]] or [1.0])
