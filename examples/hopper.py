"""A hopper in your own loop: the [Feurstein2021] controller on the MuJoCo plant.

    python examples/hopper.py

The revolute hopper of the thesis' Exp. VI (Tables 4.12-4.13): a body and a two-link leg, hopping
forward at its stationary gait, its energy regulated in stance, its attitude held by the polar spring.
The controller reads only the plant's sensors (base odometry, the leg's encoder, the foot force) and runs
at 1 kHz; MuJoCo steps at 10 kHz.  ``fbc demo hopper`` runs the same experiments with their reports.
"""
from floating_base_control.experiments.hopper.scenario import experiment
from floating_base_control.resources import hopper_urdf
from floating_base_control.robots.hopper.controller import HopperController
from floating_base_control.robots.hopper.model import hopper_model
from floating_base_control.sim.hopper import HopperPlant

exp = experiment("revolute", "VI")                      # gains and initial state from the thesis
model = hopper_model(exp.robot, exp.gravity)             # the controller's Pinocchio model
plant = HopperPlant(model, hopper_urdf(exp.robot), timestep=1e-4)
controller = HopperController(model, exp.gains, control_period=1e-3)
plant.set_state(*exp.initial_state())
x0 = exp.initial_state()[0][0, 3]

touchdowns, stance = 0, False
for k in range(20000):                                   # 2 s
    meas = plant.sense()
    if k % 10 == 0:                                      # 1 kHz control, each command held 10 steps
        cmd = controller.step(meas)
        touchdowns += cmd.stance and not stance
        stance = cmd.stance
    plant.step(cmd.tau, cmd.base_torque, cmd.tau_damping)

g1, q, _ = plant.base_pose_and_shape()            # ground truth, for the printout only
print(f"Exp. {exp.name} of the {exp.robot} hopper: {touchdowns} touchdowns in 2 s, "
      f"{g1[0, 3] - x0:.3f} m forward; base height {g1[2, 3]:.3f} m, knee q = {q[0]:.4f} rad")
