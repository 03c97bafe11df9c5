"""Run the orbital controller in your own loop: here against the model's own reduced dynamics.

    python examples/orbital_controller_loop.py

:class:`OrbitalController` is ROS-free: at each tick give it the time, the measured joints and the
base pose samples that arrived (``[(t_taken, g1), ...]``); it returns the joint torques.  It never
reads the base velocity: its observer estimates the locked velocity ``mu`` from the slow pose
samples ([Mishra2023] Lemma 11).  The "plant" below integrates the REL equations (Theorem 1, eq. 18)
of the same model; on a robot it is your drivers, in simulation ``sim/plant.py``.
"""
import numpy as np

from floating_base_control import FloatingBaseModel
from floating_base_control.lie import exp
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.robots.orbital.spacecraft import (default_observer_gains, default_shape_gains,
                                                             default_shape_setpoints)

model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
q0, q_d = default_shape_setpoints(model)
controller = OrbitalController(model, q_d, default_shape_gains(model, q0, q_d), default_observer_gains(model, q0),
                               compensation="tau2")

dt, pose_period, duration = 1e-3, 0.1, 2.0        # 1 kHz control, a 10 Hz base pose (e.g. a camera)
g1, q, qdot = np.eye(4), q0.copy(), np.zeros(model.n)
mu = np.r_[np.deg2rad([10.0, 1.14, 0.0]), 0.0, 0.0, 0.0]     # the momentum the robot carries, [omega; v]
for k in range(int(round(duration / dt)) + 1):
    t = k * dt
    samples = [(t, g1.copy())] if k % int(round(pose_period / dt)) == 0 else []
    out = controller.step(t, q, qdot, samples)
    if k % 500 == 0:
        print(f"t = {t:4.1f} s   |q - q_d| = {np.linalg.norm(q - q_d):.4f} rad   "
              f"|mu - mu_hat| = {np.linalg.norm(mu - out.mu_hat_o):.2e}   |tau| = {np.linalg.norm(out.tau):6.2f} N m")
    mu_dot, qddot = model.forward_dynamics_reduced(q, mu, qdot, out.tau)     # eq. 18
    qdot = qdot + dt * qddot                                                 # semi-implicit Euler
    q, mu = q + dt * qdot, mu + dt * mu_dot
    g1 = g1 @ exp(dt * model.base_velocity(q, mu, qdot))                     # eq. 9
