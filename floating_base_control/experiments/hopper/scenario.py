"""The hopping experiments of Feurstein [Feurstein2021], Tables 4.7-4.8 and 4.12-4.13, run on
the MuJoCo plant with the controller of ``robots/hopper/controller.py``, at the step ``TIMESTEP``.

Choices where the thesis is ambiguous (docs/explanation/hopper.md has the evidence):

* ``g``: the prismatic tables are consistent with 9.8 (``E_0 = 2.9047`` is the
  initial gravity potential at 9.8 to 5 digits), the revolute ones with 9.81
  (``E(0) = 2.8382`` is the potential of the Exp V initial state at 9.81, not at
  9.8).  Each robot uses that value; ``gravity=`` overrides it.
* ``E_des`` and ``r_des`` are the tabulated numbers.
* The prismatic hopper starts exactly upright (Table 4.7), where the planar
  simulation stays by symmetry forever; the thesis' Exp I tips over "after 7
  jumps due to simulation noise".  Its experiments here start tilted by
  ``TILT = 1e-7`` rad, a stand-in for that noise (it tips after 7 hops too).
* The thesis gives results "for the first type of polar control only" (controller II;
  Sect. 4.4); controller III's experiments here are the thesis' Exp II-VI with the polar
  spring on ``alpha_c`` instead of ``alpha_i,cf`` (``variant="III"``), with ``q_ref`` the
  tabulated initial knee angle.
* The stance/flight rule is not stated; the default (``contact_rule="foot_height"``, the
  floor flag ``o^y_if <= 0`` from odometry and encoders) reproduces the Exp VI energy figures.
"""
import math
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from floating_base_control.model import FloatingBaseModel
from floating_base_control.robots.hopper.controller import HopperController, HopperGains
from floating_base_control.robots.hopper.coordinates import polar_angle
from floating_base_control.robots.hopper.laws import radial_spring_energy
from floating_base_control.validation import InputError
from floating_base_control.resources import hopper_urdf
from floating_base_control.results import log_columns
from floating_base_control.robots.hopper.model import PLANE_NORMAL, hopper_model, planar_pose, planar_twist
from floating_base_control.sim.hopper import FLOOR_D, FLOOR_K, HopperPlant
from floating_base_control.sim.loop import CommandDelay, loop_delay_steps

EXPERIMENT_NAMES = ("I", "II", "III", "IV", "V", "VI")

#: MuJoCo step of the experiments, s, but for revolute Exp III (``REVOLUTE_III_STEP``): each
#: verdict (falls or not, hop count) is the same at a 4x smaller step (docs/explanation/hopper.md, "Step
#: convergence"; test_hopper_steps.py).
TIMESTEP = 1e-4
#: Revolute Exp III's step, s: at 0.1 ms its hop count before the fall is not converged (5 to 10
#: hops as the initial base angle moves by 1e-9 rad; 4 from 0.05 ms down, studies/hopper_chaos.py).
REVOLUTE_III_STEP = 5e-5


@dataclass(frozen=True)
class Experiment:
    """One experiment: gains and the initial state in the thesis' planar coordinates."""

    robot: str
    name: str
    gains: HopperGains
    #: ``(o^x_b, o^y_b, theta_ib, q1, v^x_b, v^y_b, omega_ib, qdot1)``, body-frame base velocity
    initial: tuple
    gravity: float
    duration: float
    description: str
    table: str
    tilt: float = 0.0      #: added to theta_ib(0), rad (stands in for the thesis' "simulation noise")
    timestep: float = TIMESTEP   #: MuJoCo step at which its verdict is step-converged, s
    urdf: Optional[str] = None   #: the robot's URDF (links ``base_link`` and ``foot``); None: the thesis' robot's

    def initial_state(self):
        """``(g1, q, V1, qdot)`` of the initial state in the package's conventions."""
        x, y, th, q, vx, vy, w, qd = self.initial
        return planar_pose(x, y, th + self.tilt), np.array([q]), planar_twist(vx, vy, w), np.array([qd])


#: Initial tilt of the prismatic experiments, rad.
TILT = 1e-7


def _prismatic():
    ic = (0.0, 0.3, -math.pi / 2, 0.114, 0.0, 0.0, 0.0, 0.0)                 # Table 4.7
    base = HopperGains(variant="I", K_r=2200.0, r_des=0.114, K_p=0.0)        # Table 4.8
    table = "Tables 4.7-4.8"
    return {
        "I": Experiment("prismatic", "I", base, ic, 9.8, 6.0,
                        "under-actuated hopping in place (radial spring only)", table, TILT),
        "II": Experiment("prismatic", "II", replace(base, variant="II", K_p=6.0), ic, 9.8, 6.0,
                         "fully actuated hopping in place, no energy control", table, TILT),
        "III": Experiment("prismatic", "III", replace(base, variant="II", K_p=6.0, K_E=20.0, E_des=2.9047),
                          ic, 9.8, 6.0, "fully actuated hopping in place with energy control", table, TILT),
    }


def _revolute():
    ic = (0.0, 0.3, -2.5174, 1.7802, 0.0, 0.0, 0.0, 0.0)                     # Table 4.13
    ic_v = (0.0, 0.3, -1.9938, 1.7802, 0.0, 0.0, 0.0, 0.0)
    ic_vi = (2.7676, 0.2574, -2.5243, 1.7802, -0.1919, 0.1263, 0.3301, 0.0)
    base = HopperGains(variant="I", K_r=2200.0, r_des=0.1411, K_p=0.0, q_ref=1.7802)   # Table 4.12
    polar = replace(base, variant="II", K_p=6.0)
    energy = replace(polar, K_E=20.0, E_des=2.8382)
    damped = replace(energy, D_r_flight=20.0)
    table = "Tables 4.12-4.13"
    g = 9.81
    return {
        "I": Experiment("revolute", "I", base, ic, g, 3.0, "under-actuated hopping in place", table),
        "II": Experiment("revolute", "II", polar, ic, g, 6.0,
                         "fully actuated, no energy control", table),
        "III": Experiment("revolute", "III", energy, ic, g, 6.0, "fully actuated with energy control", table,
                          timestep=REVOLUTE_III_STEP),
        "IV": Experiment("revolute", "IV", damped, ic, g, 6.0,
                         "fully actuated, energy control, radial damping in flight", table),
        "V": Experiment("revolute", "V", damped, ic_v, g, 20.0,
                        "as IV from a 30 deg angle of attack: forward gait", table),
        "VI": Experiment("revolute", "VI", damped, ic_vi, g, 20.0,
                         "as V from its converged apex state (t = 16.701 s of V): stationary forward gait",
                         table),
    }


EXPERIMENTS = {"prismatic": _prismatic(), "revolute": _revolute()}


def experiment(robot, name, variant=None, gravity=None, contact_rule=None):
    """The thesis' experiment ``name`` (I..VI) of ``robot``; ``variant`` replaces the polar
    controller (e.g. ``"III"``), ``gravity`` the value of g, ``contact_rule`` the stance/flight
    rule (``controller.CONTACT_RULES``)."""
    if robot not in EXPERIMENTS:
        raise InputError(f"robot must be one of {tuple(EXPERIMENTS)}, got {robot!r}")
    table = EXPERIMENTS[robot]
    if name not in table:
        raise InputError(f"the thesis has no experiment {name!r} for the {robot} hopper "
                         f"(it has {', '.join(table)})")
    exp = table[name]
    if variant is not None:
        if exp.gains.variant == "I" and variant != "I":
            raise InputError(f"experiment {name} of the {robot} hopper is under-actuated (no polar "
                             "spring): its controller is variant I")
        exp = replace(exp, gains=replace(exp.gains, variant=variant))
    if gravity is not None:
        exp = replace(exp, gravity=float(gravity))
    if contact_rule is not None:
        exp = replace(exp, gains=replace(exp.gains, contact_rule=contact_rule))
    return exp


@dataclass
class RunLog:
    """Time series (decimated) and per-step event lists of one run.  The series are kept as rows (a dict each,
    the same keys) and turned into columns when read: a row costs one list append, not one per key."""

    rows: list = field(default_factory=list)
    touchdowns: list = field(default_factory=list)      #: (t, alpha_cf, foot speed, kinetic energy)
    liftoffs: list = field(default_factory=list)        #: (t, alpha_cf, radial spring energy)
    apexes: list = field(default_factory=list)          #: (t, CoM height, CoM forward speed)
    fell_at: float = math.nan
    steps: int = 0

    def append(self, **row):
        self.rows.append(row)

    def arrays(self):
        """One array per key of the rows (:func:`~floating_base_control.results.log_columns`)."""
        return log_columns(self.rows)


@dataclass
class EnergyFlows:
    """Cumulative energy flows of a run (J), in the thesis' balance sheet (Fig. 4.14f)."""

    external: float = 0.0      #: work of the base torque
    joint: float = 0.0         #: work of the joint torques without the radial damper
    damping: float = 0.0       #: dissipated by the radial damper (>= 0)
    touchdown: float = 0.0     #: dissipated by the floor during the touchdown impacts
    floor: float = 0.0         #: taken by the floor after the impacts (dissipation, lost elastic energy)

    def add(self, work, impact):
        self.external += work.base
        self.joint += work.joint - work.damping
        self.damping -= work.damping
        if impact:
            self.touchdown -= work.floor
        else:
            self.floor -= work.floor


#: A touchdown impact lasts until the foot speed falls below this fraction of its touchdown value.
IMPACT_END_FRACTION = 0.1
#: ... or at most this long, s.
IMPACT_MAX_DURATION = 0.005


def hopper_urdf_of(exp):
    """The URDF ``exp`` runs: its own, else its robot's."""
    return exp.urdf or hopper_urdf(exp.robot)


def run(exp, duration=None, floor="viscoelastic", base="planar", timestep=None, control_every=1, log_every=10,
        fall_height=0.4, fall_angle_deg=60.0, floor_K=FLOOR_K, floor_D=FLOOR_D, control_period=0.0,
        loop_delay_s=None, progress=None):
    """Simulate ``exp`` for ``duration`` seconds (default: the experiment's) at the MuJoCo step
    ``timestep`` (default: the experiment's); returns ``(log, flows, meta)``.  ``floor_K``, ``floor_D``: the
    viscoelastic floor's stiffness (N/m) and damping (N s/m), default the thesis' (Tables 4.6, 4.11).

    The controller runs every ``control_every`` steps on the plant's sensors, its
    ``control_period`` the hold its contact rule accounts for (``HopperController``: 0 for a
    controller at every step; ``control_every * timestep`` for the 1 kHz loop of the ROS 2
    nodes, ``timestep=1e-4, control_every=10, control_period=1e-3``), and each command acts
    ``loop_delay_s`` later (``sim/loop.py``; ``None``: one control period, as ros2_control; 0: in the
    step its state was read, the thesis' loop).  The run stops when the robot falls: CoM below
    ``fall_height * r_des``, or the CoM-foot line more than ``fall_angle_deg`` from the vertical.
    ``progress(t)`` is called every 1000 steps with the simulated time.
    """
    duration = exp.duration if duration is None else float(duration)
    timestep = exp.timestep if timestep is None else float(timestep)
    model = FloatingBaseModel.from_urdf(hopper_urdf_of(exp), gravity=(0.0, 0.0, -float(exp.gravity))) if exp.urdf \
        else hopper_model(exp.robot, exp.gravity)
    plant = HopperPlant(model, hopper_urdf_of(exp), floor=floor, base=base, timestep=timestep,
                        floor_K=floor_K, floor_D=floor_D)
    controller = HopperController(model, exp.gains, control_period=control_period)
    plant.set_state(*exp.initial_state())
    log, flows = RunLog(), EnergyFlows()
    events = _Events(log, exp.gains)
    meas = plant.sense()
    E0 = plant.energy()
    n = model.n
    delay = CommandDelay(loop_delay_steps(loop_delay_s, timestep, timestep * control_every),
                         (np.zeros(n), 0.0, np.zeros(n)))
    fallen_height, fallen_angle = fall_height * exp.gains.r_des, math.radians(fall_angle_deg)
    for k in range(int(round(duration / timestep))):
        if k % control_every == 0:
            cmd = controller.step(meas)
            delay.send(k, (cmd.tau, cmd.base_torque, cmd.tau_damping))
        applied = delay.at(k)
        com, com_vel, L, alpha_cf, impact = events.observe(plant, cmd)
        if k % log_every == 0:
            _log_row(log, plant, cmd, com, com_vel, L, alpha_cf, flows, E0)
        if com[2] < fallen_height or abs(alpha_cf) > fallen_angle:
            log.fell_at = plant.time
            break
        flows.add(plant.step(*applied), impact)
        meas = plant.sense()
        log.steps = k + 1
        if progress is not None and k % 1000 == 0:
            progress(plant.time)
    com, com_vel, L = plant.com_and_momentum()
    _log_row(log, plant, controller.step(meas), com, com_vel, L, _alpha_cf(com, plant.foot_position()),
             flows, E0)
    viscoelastic = floor == "viscoelastic"      # K and D mean nothing for MuJoCo's contact
    meta = {"E0": E0, "E_end": plant.energy(), "timestep": timestep, "control_every": control_every,
            "loop_delay_s": delay.delay * timestep,
            "floor": floor, "floor_K": floor_K if viscoelastic else None,
            "floor_D": floor_D if viscoelastic else None, "base": base, "duration": duration,
            "urdf": hopper_urdf_of(exp)}
    return log, flows, meta


class _Events:
    """Touchdowns, lift-offs, apexes and the touchdown impact window, from the plant's ground
    truth at every step."""

    def __init__(self, log, gains):
        self.log, self.gains = log, gains
        self.touching, self.impact_until, self.td_speed, self.prev_vz = False, -1.0, 0.0, None

    def observe(self, plant, cmd):
        """``(com, com_vel, L, alpha_cf, in_impact)`` at the current state (MuJoCo's rows: read them
        before the next step); records the events."""
        com, com_vel, L = plant.com_and_momentum(copy=False)
        alpha_cf = _alpha_cf(com, plant.foot_position(copy=False))
        t, touching = plant.time, plant.touching()
        if touching and not self.touching:
            self.td_speed = float(np.linalg.norm(plant.foot_velocity()))
            self.log.touchdowns.append((t, alpha_cf, self.td_speed, plant.energies()[0]))
            self.impact_until = t + IMPACT_MAX_DURATION
        elif self.touching and not touching:
            self.log.liftoffs.append((t, alpha_cf, radial_spring_energy(cmd.r_cf, self.gains.r_des, self.gains.K_r)))
        if self.impact_until > t and np.linalg.norm(plant.foot_velocity()) < IMPACT_END_FRACTION * self.td_speed:
            self.impact_until = -1.0
        if self.prev_vz is not None and self.prev_vz > 0.0 >= com_vel[2] and not touching:
            self.log.apexes.append((t, com[2], com_vel[0]))
        self.prev_vz, self.touching = com_vel[2], touching
        return com, com_vel, L, alpha_cf, self.impact_until > t


def _alpha_cf(com, foot):
    """Ground-truth ``alpha_i,cf`` ([Feurstein2021] eq. 4.22) of the world CoM and foot positions, rad."""
    (cx, cy, cz), (fx, fy, fz) = com.tolist(), foot.tolist()
    return polar_angle((fx - cx, fy - cy, fz - cz))[0]


def _log_row(log, plant, cmd, com, com_vel, L, alpha_cf, flows, E0):
    """A row of ``log`` at the current state (the base's attitude as its rotation matrix: ``RunLog.arrays``
    converts it).  MuJoCo's rows as Python floats: numpy's scalars cost a microsecond per operation."""
    g1, q, qdot = plant.base_pose_and_shape()
    kinetic, gravity = plant.energies()
    force = plant.floor_force()
    (com_x, com_y, com_z), (com_vx, _, com_vz) = com.tolist(), com_vel.tolist()
    (_, R_xy, _, _), (R_yx, _, R_yz, y), _, _ = g1.tolist()
    mass = plant.mass
    log.append(t=plant.time, base_position=g1[:3, 3].copy(), base_rotation=g1[:3, :3].copy(),
               com_x=com_x, com_y=com_y, com_z=com_z, com_vx=com_vx,
               com_vz=com_vz, base_x=g1[0, 3], base_z=g1[2, 3], q=q[0], qdot=qdot[0],
               L=float(L @ PLANE_NORMAL), p_x=mass * com_vx, p_z=mass * com_vz,
               alpha_cf=alpha_cf, alpha=cmd.alpha, r_cf=cmd.r_cf, r_cf_dot=cmd.r_cf_dot,
               stance=int(cmd.stance), touching=int(plant.touching()), kinetic=kinetic, gravity=gravity,
               spring=cmd.virtual_spring_energy, E_ctrl=cmd.energy, E_mech=kinetic + gravity,
               tau=cmd.tau[0], base_torque=cmd.base_torque, tau_r=cmd.tau_r, tau_p=cmd.tau_p,
               floor_fx=force[0], floor_fz=force[2],
               out_of_plane=max(abs(com_y), abs(y), abs(R_xy), abs(R_yx), abs(R_yz)),
               in_external=flows.external, in_joint=flows.joint, out_damping=flows.damping,
               out_touchdown=flows.touchdown, out_floor=flows.floor, stored=kinetic + gravity - E0)
