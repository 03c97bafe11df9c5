"""The base displacement of a closed gait: exact (eq. 9) and from the curvature (eq. 11).

    python examples/gait_displacement.py

A free-floating robot at zero momentum that moves its joints around a closed loop ends with its
base moved and turned ([Mishra2023] Sec. V-B).  The gait here is Sec. V-B2's circle on joints 2-4,
run on the package's orbital robot.
"""
import numpy as np

from floating_base_control import FloatingBaseModel
from floating_base_control.analysis.locomotion import net_displacement, sec_vb_gait, stokes_estimate
from floating_base_control.lie import log
from floating_base_control.resources import orbital_robot_urdf

model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
gait = sec_vb_gait(n=model.n, samples=128)
dg = net_displacement(model, gait.qs)               # eq. 9 integrated along the joint path, mu = 0
estimate = stokes_estimate(model, gait)                # in the virtual chassis {C}, then mapped to the base

np.set_printoptions(precision=5, suppress=True)
print("gait area in the plane (rad^2):", gait.signed_area)
print("exact   log(dg1) = [rotation; translation]:", log(dg))
print("Stokes  log(dg1) estimate                   :", log(estimate.dg))
