"""The orbital robot scenario of [Mishra2023] Sec. V-A5: closed loop against MuJoCo.

The controller (observer + shape controller) reads only the sensor models: the
joint encoders and the slow, noisy, delayed base pose.  Ground truth (pose,
twist, locked velocity, momentum) is logged for evaluation only; the single
exception is the ``truth`` compensation baseline, which is fed the true
locked velocity on purpose.

The default scenario: the robot carries the paper's momentum, a locked angular
velocity ``mu_omega(0) = [10, 1.14, 0]`` deg/s, right after synchronizing with
a tumbling target; the base pose arrives at 10 Hz with 1 mrad / 1 mm noise and
20 ms latency; the set-point is away from the start; the observer starts from
the first pose sample with ``mu_hat = 0``.

The loop is the robot's (``sim/loop.py``): each command acts ``loop_delay_s`` after the state it was
computed from, by default one control period (ros2_control's read-update-write, the DDS loop), with
optional jitter and lost commands; ``loop_delay_s = 0`` is the papers' loop, where the command acts in
the instant the state was read.
"""
import dataclasses
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.robots.orbital.spacecraft import (Spacecraft, default_observer_gains, default_shape_gains,
                                                             default_shape_setpoints, mount_arm)
from floating_base_control.control.limits import LimitMonitor
from floating_base_control.control.shape import ShapeGains, compensation_law
from floating_base_control.dynamics.rel_matrices import locked_velocity, reduced_shape_inertia
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.estimation.sampling import check_observer_sampling
from floating_base_control.kinematics import shape_inertias
from floating_base_control.lie import inv, log
from floating_base_control.linalg import norm
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.results import log_columns
from floating_base_control.urdf_loader import read_urdf
from floating_base_control.validation import InputError
from floating_base_control.sim.friction import SigmoidFriction
from floating_base_control.sim.loop import CommandDelay, loop_delay_steps
from floating_base_control.sim.plant import MujocoPlant
from floating_base_control.sim.sensors import JointEncoders, pose_sensor_model
from floating_base_control.experiments.orbital import verdicts
from floating_base_control.experiments.orbital.dispersions import controller_model


@dataclass
class OrbitalScenario:
    """Everything that defines a run (SI units unless the name says otherwise)."""

    name: str = "ideal"                      #: "ideal" (this class's defaults) or "realistic"
    duration_s: float = 30.0
    compensation: str = "tau2"
    control_rate_hz: float = 1000.0
    sim_substeps: int = 2                    #: MuJoCo steps per control tick (2 kHz physics)
    pose_rate_hz: float = 10.0
    pose_rotation_noise: float = 1e-3        #: rad per axis
    pose_position_noise: float = 1e-3        #: m per axis
    pose_latency_s: float = 0.02
    pose_attitude_bias: float = 0.0          #: rad per axis, standard deviation of a slowly varying bias
    pose_bias_time_s: float = 600.0          #: correlation time of that bias
    pose_position: bool = True               #: False: an attitude-only pose source (e.g. a star tracker)
    pose_rate_jitter: float = 0.0            #: relative jitter of the sample period
    pose_latency_jitter_s: float = 0.0       #: extra latency, uniform in [0, this]
    pose_dropout: float = 0.0                #: probability that a pose sample is lost
    pose_sensor: str = "PoseSensor"          #: the pose sensor model (sim/sensors.py's POSE_SENSORS)
    q_noise: float = 0.0                     #: rad
    qdot_noise: float = 1e-3                 #: rad/s
    encoder_resolution: float = 0.0          #: rad; > 0: quantized q, qdot by filtered differentiation
    velocity_filter_hz: float = 50.0         #: cut-off of that differentiation's filter
    friction_scale: tuple = ()               #: () no joint friction; else Gaz et al. 2019's, scaled per joint
    mu0_omega_deg_s: tuple = (10.0, 1.14, 0.0)
    mu0_v: tuple = (0.0, 0.0, 0.0)
    q0: tuple = (-0.2, -1.0, 0.2, -2.55, -0.2, 1.75, 0.6)
    q_d: tuple = (0.3, -0.5, -0.3, -2.05, 0.3, 1.25, 1.1)
    stiffness: tuple = (30.0, 30.0, 20.0, 20.0, 5.0, 5.0, 2.0)
    damping: tuple = (3.0, 3.0, 1.0, 1.0, 0.2, 0.2, 0.05)
    integral_time_s: float = 0.0             #: T_i of PD + I (K_i = K / T_i, control/setpoint.py); 0: PD only
    observer: ObserverGains = field(default_factory=ObserverGains)
    model_mass_error: float = 0.0            #: relative error of the spacecraft's mass and inertia
    model_dispersion: bool = False           #: controller's model drawn from ``seed`` (dispersions.py)
    seed: int = 0
    convergence_joint_error_deg: float = 0.1
    observer_check: str = "error"            #: gains unstable at the pose rate: "error" or "warn" (to study it)
    log_rate_hz: float = 100.0
    urdf: Optional[str] = None               #: default: the orbital robot
    joint_dynamics: str = "urdf"             #: URDF joint damping/friction in the plant, or "ideal" (sim/plant.py)
    #: command-to-plant delay (sim/loop.py); None: one control period, as ros2_control and the DDS loop;
    #: 0: the command acts in the instant its state was read (the papers' loop)
    loop_delay_s: Optional[float] = None
    loop_jitter_s: float = 0.0               #: further delay of each command, uniform in [0, this]
    loop_drop: float = 0.0                   #: probability that a command is lost (the plant keeps the last)
    collisions: bool = False                 #: the plant collides the arm with the spacecraft (URDF primitives)

    def to_dict(self):
        return asdict(self)


def integral_gains(scenario):
    """``K_i = K / T_i`` (``None``: no integral action)."""
    if scenario.integral_time_s < 0:
        raise InputError(f"integral_time_s must be >= 0, got {scenario.integral_time_s}")
    return np.array(scenario.stiffness) / scenario.integral_time_s if scenario.integral_time_s else None


def configuration_check(scenario, model):
    """Check the observer gains against the pose rate (:mod:`~floating_base_control.estimation.sampling`)
    with ``model``'s locked inertia at ``q0``; returns ``(SamplingCheck, verdict thresholds)``."""
    sampling = check_observer_sampling(scenario.observer, model.locked_inertia(np.array(scenario.q0, dtype=float)),
                                       1.0 / scenario.control_rate_hz, 1.0 / scenario.pose_rate_hz,
                                       scenario.pose_latency_s, on_unstable=scenario.observer_check)
    return sampling, verdicts.thresholds(scenario, sampling.natural_frequency)


def loop_delay(scenario):
    """The loop delay a run of ``scenario`` applies, s (``loop_delay_s`` rounded to the physics step)."""
    dt = 1.0 / scenario.control_rate_hz
    return loop_delay_steps(scenario.loop_delay_s, dt / scenario.sim_substeps, dt) * dt / scenario.sim_substeps


def command_delay(scenario, n):
    """The :class:`~floating_base_control.sim.loop.CommandDelay` of a run of ``scenario`` (``n`` joints)."""
    dt = 1.0 / scenario.control_rate_hz
    step = dt / scenario.sim_substeps
    return CommandDelay(loop_delay_steps(scenario.loop_delay_s, step, dt), np.zeros(n),
                        loop_delay_steps(scenario.loop_jitter_s, step, dt), scenario.loop_drop, seed=(scenario.seed, 3))


def run(scenario, progress=None, motion=None, evaluate=None, until=None):
    """Run the closed loop; returns ``(log, summary)`` (arrays per logged tick, and a dict).

    ``until(t)``: true ends the run at that tick (logged), before ``duration_s`` (a task that is done).
    ``motion``: the controller's motion task (default: eq. 52 about ``q_d``); ``evaluate(t, g1, q)``:
    more ground-truth columns of the log (a dict; its ``dq_norm_deg`` replaces the set-point error).  With
    ``collisions`` the summary counts the control ticks at which MuJoCo found a contact between the arm and the
    spacecraft (``arm_spacecraft_contact_ticks``)."""
    urdf_path = scenario.urdf or orbital_robot_urdf()
    truth_model = FloatingBaseModel.from_urdf(urdf_path)          # evaluation only
    model = controller_model(scenario, urdf_path)
    sampling, limits = configuration_check(scenario, model)
    dt = 1.0 / scenario.control_rate_hz
    plant = MujocoPlant.from_urdf(urdf_path, truth_model, timestep=dt / scenario.sim_substeps,
                                  contacts=scenario.collisions, joint_dynamics=scenario.joint_dynamics,
                                  geometry="primitives" if scenario.collisions else "none")
    if scenario.collisions:
        plant.collide_base_with_arm()
    contact_ticks = 0
    if scenario.friction_scale:
        plant.friction = SigmoidFriction(scale=tuple(scenario.friction_scale))
    encoders = JointEncoders(scenario.q_noise, scenario.qdot_noise, seed=scenario.seed * 2 + 1,
                             resolution=scenario.encoder_resolution, dt=dt,
                             velocity_filter_hz=scenario.velocity_filter_hz)
    pose_sensor = pose_sensor_model(scenario.pose_sensor)(
        scenario.pose_rate_hz, scenario.pose_rotation_noise, scenario.pose_position_noise, scenario.pose_latency_s,
        seed=scenario.seed * 2 + 2, attitude_bias=scenario.pose_attitude_bias, bias_time_s=scenario.pose_bias_time_s,
        position=scenario.pose_position, rate_jitter=scenario.pose_rate_jitter,
        latency_jitter_s=scenario.pose_latency_jitter_s, dropout=scenario.pose_dropout)
    gains = ShapeGains(scenario.stiffness, scenario.damping, integral_gains(scenario))
    controller = OrbitalController(model, scenario.q_d, gains, scenario.observer, scenario.compensation,
                                   motion=motion, control_period=1.0 / scenario.control_rate_hz)
    q0 = np.array(scenario.q0, dtype=float)
    mu0 = np.r_[np.deg2rad(scenario.mu0_omega_deg_s), scenario.mu0_v]
    plant.set_state(np.eye(4), q0, mu0, np.zeros(truth_model.n))   # qdot = 0: V1 = mu
    ticks = int(round(scenario.duration_s * scenario.control_rate_hz))
    every = max(1, int(round(scenario.control_rate_hz / scenario.log_rate_hz)))
    log = Log()
    status = "completed"
    truth_fed = compensation_law(scenario.compensation).true_mu
    J0 = plant.momentum()
    monitor = LimitMonitor(truth_model.position_limits, truth_model.velocity_limits)
    delay, substeps = command_delay(scenario, truth_model.n), scenario.sim_substeps
    for i in range(ticks + 1):
        t = i * dt
        stop = until is not None and until(t)
        logged = i % every == 0 or i == ticks or stop
        if logged or truth_fed or pose_sensor.due(t):      # the base's truth only when something reads it
            g1, q, V1, qdot = plant.state()
            pose_sensor.sample(t, g1)
        else:
            q, qdot = plant.joint_state()
        kin = shape_inertias(truth_model, truth_model.scratch, q) if truth_fed else None
        mu = locked_velocity(kin, V1, qdot) if truth_fed else None
        q_m, qdot_m = encoders.read(q, qdot)
        out = controller.step(t, q_m, qdot_m, pose_sensor.deliver(t), mu_true=mu)
        saturated = out.saturated                          # a property evaluated when read: once
        monitor.update(q, qdot, saturated)
        if logged:
            if mu is None:                                 # for the evaluation only: after the tick
                kin = shape_inertias(truth_model, truth_model.scratch, q)
                mu = locked_velocity(kin, V1, qdot)
            row = _evaluate(scenario, truth_model, controller, plant, out, saturated, t, g1, q, qdot, mu, kin)
            if evaluate is not None:
                row.update(evaluate(t, g1, q))
            log.append(row)
            status = verdicts.divergence(row, out.tau, log.rows[0]["dq_norm_deg"], limits["divergence"])
            if status == "completed" and controller.health.restarts:     # it caught the estimate diverging
                status = f"diverged: observer restarted ({controller.health.last_restart})"
            if status != "completed":
                break
            if progress and i % (every * 500) == 0:
                progress(t)
        if stop:
            break
        if i < ticks:
            delay.send(i * substeps, out.tau)
            for tau, steps in delay.segments(i * substeps, substeps):
                plant.step(tau, steps)
            if scenario.collisions and plant.contacts():
                contact_ticks += 1
    arrays = log.arrays()
    summary = summarize(scenario, arrays, J0, status, (sampling, limits), monitor, stopped=stop)
    if scenario.collisions:
        summary["arm_spacecraft_contact_ticks"] = int(contact_ticks)
    return arrays, summary


def _evaluate(scenario, model, controller, plant, out, saturated, t, g1, q, qdot, mu, kin):
    obs = controller.observer
    return evaluation_row(model, obs.gains.L, controller.q_d, controller.shape_gains.stiffness, t, g1, q, qdot,
                          mu, obs.g_hat, out.mu_hat_o, out.tau, out.tau_hat_1, out.tau_hat_2,
                          plant.momentum(), saturated, kin)


_ROTATION = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])      # the rotational half of [omega; v]
_ROTATION.flags.writeable = False


def evaluation_row(model, L, q_d, stiffness, t, g1, q, qdot, mu, g_hat, mu_hat_o, tau, tau_hat_1, tau_hat_2,
                   momentum, saturated, kin=None):
    """One logged row from ground truth and the controller's outputs: errors and the Lyapunov
    candidate ``W`` of eq. 53 (``g_hat = None``: observer not started yet; ``kin``: ``model``'s
    :func:`~floating_base_control.kinematics.shape_inertias` at ``q``, if already computed).  The base's
    attitude is the rotation matrix ``base_rotation``, a quaternion in :meth:`Log.arrays`."""
    if g_hat is not None:
        eps = log(inv(g_hat) @ g1)
        mu_e = mu - mu_hat_o
    else:
        eps, mu_e = np.full(6, np.nan), np.full(6, np.nan)
    dq = q - q_d
    mu_e_parts = [norm(mu_e[:3]), norm(mu_e[3:])]
    kin = kin if kin is not None else shape_inertias(model, model.scratch, np.asarray(q, dtype=float))
    W3 = 0.5 * qdot @ reduced_shape_inertia(kin) @ qdot
    W = lyapunov_candidate(L, kin.M_b, eps, mu_e, W3, dq, stiffness)
    # without the base translation's terms: what converges when only the attitude is measured
    W_rotation = lyapunov_candidate(L, kin.M_b, _ROTATION * eps, _ROTATION * mu_e, W3, dq, stiffness)
    return {"t": t, "q": q, "base_position": g1[:3, 3].copy(), "base_rotation": g1[:3, :3].copy(),
            "dq_norm_deg": np.rad2deg(norm(dq)), "qdot_norm": norm(qdot),
            "tau": tau, "tau_hat_1_norm": norm(tau_hat_1),
            "tau_hat_2_norm": norm(tau_hat_2), "eps_norm": norm(eps),
            "mu_e_norm": norm(mu_e), "eps_rot_norm": norm(eps[:3]),
            "eps_pos_norm": norm(eps[3:]), "mu_e_omega_norm": mu_e_parts[0], "mu_e_v_norm": mu_e_parts[1],
            "qdot": qdot, "mu": mu, "mu_hat_o": mu_hat_o,
            "momentum": momentum, "W": W, "W_rotation": W_rotation, "W3": W3, "saturated": saturated}


def lyapunov_candidate(L, M_b, eps, mu_e, W3, dq, stiffness):
    """``W`` of [Mishra2023] eq. 53: the observer's pose and velocity errors' energies, the shape's kinetic
    energy ``W3`` and the joint springs' energy."""
    return 0.5 * eps @ L @ eps + 0.5 * mu_e @ M_b @ mu_e + W3 + 0.5 * dq @ (stiffness * dq)


class Log:
    """Rows of :func:`evaluation_row`, turned into one array per key."""

    def __init__(self):
        self.rows = []

    def append(self, row):
        self.rows.append(row)

    def arrays(self):
        """One array per key (:func:`~floating_base_control.results.log_columns`)."""
        return log_columns(self.rows)


#: What an attitude-only pose source (``pose_position=False``) leaves unobservable: the observer cannot
#: estimate it, the verdict does not judge it, and tau_hat_2 does not need it (eq. 45's Galilean invariance).
UNOBSERVABLE_WITHOUT_POSITION = ("base position", "base linear velocity")


def total_variation(x):
    return float(np.abs(np.diff(x)).sum())


def summarize(scenario, log, J0, status, check=None, monitor=None, stopped=False):
    """The numbers of ``summary.json``; "final" values are means over the last second.  ``check``:
    :func:`configuration_check`'s result, ``monitor``: the :class:`LimitMonitor` of every tick (default:
    both from the plant's URDF, the monitor over the logged rows); ``stopped``: the run ended early, its task
    done (``run``'s ``until``)."""
    if check is None or monitor is None:
        model = FloatingBaseModel.from_urdf(scenario.urdf or orbital_robot_urdf())
        check = check or configuration_check(scenario, model)
        if monitor is None:
            monitor = LimitMonitor(model.position_limits, model.velocity_limits)
            for q, qdot, saturated in zip(log["q"], log["qdot"], log["saturated"]):
                monitor.update(q, qdot, saturated)
    sampling, limits = check
    t = log["t"]
    last = t >= t[-1] - 1.0
    scale = np.abs(J0).max()        # at rest: no relative drift (None)
    drift = np.abs(log["momentum"] - J0).max(axis=1) / scale if scale > 0 else None
    final = {
        "final_joint_error_deg": float(log["dq_norm_deg"][last].mean()),
        "final_observer_pose_error": float(np.nanmean(log["eps_norm"][last])),
        "final_observer_velocity_error": float(np.nanmean(log["mu_e_norm"][last])),
    }
    for key, name, _ in verdicts.QUANTITIES:
        final[f"final_{name}"] = float(np.nanmean(log[key][last])) if limits["convergence"][name] is not None else None
    attitude_only = not scenario.pose_position           # then the base translation is unobservable
    final["final_observer_observable_pose_error"] = float(np.nanmean(
        log["eps_rot_norm" if attitude_only else "eps_norm"][last]))
    final["final_observer_observable_velocity_error"] = float(np.nanmean(
        log["mu_e_omega_norm" if attitude_only else "mu_e_norm"][last]))
    verdict = verdicts.convergence(final, limits["convergence"])
    converged = (status == "completed" and (stopped or t[-1] >= scenario.duration_s - 1e-9)
                 and all(v is not False for v in verdict.values()))
    after_first_second = t >= 1.0
    return {
        **final,
        "momentum_drift_rel": None if drift is None else float(drift.max()),
        "compensation": scenario.compensation,
        "duration_s": float(t[-1]),
        "control_rate_hz": scenario.control_rate_hz,
        "pose_rate_hz": scenario.pose_rate_hz,
        "status": status,
        "converged": bool(converged),
        "verdicts": verdict,
        "convergence_thresholds": limits["convergence"],
        "divergence_thresholds": limits["divergence"],
        "observer_sampling": sampling._asdict(),
        "tau_hat_total_variation_ratio": total_variation(log["tau_hat_1_norm"][after_first_second])
        / max(total_variation(log["tau_hat_2_norm"][after_first_second]), 1e-300),
        "final_tau_hat_1_norm": float(log["tau_hat_1_norm"][last].mean()),
        "final_tau_hat_2_norm": float(log["tau_hat_2_norm"][last].mean()),
        "torque_saturated_fraction": float(np.mean(log["saturated"])),
        **monitor.report(),
        "initial_momentum": J0.tolist(),
        "scenario": scenario.name,
        "unobservable": list(UNOBSERVABLE_WITHOUT_POSITION) if attitude_only else [],
        "scenario_parameters": scenario.to_dict(),
        "loop_delay_s": loop_delay(scenario),
    }


def arm_scenario(arm_urdf, spacecraft=Spacecraft(), locked=None, urdf_out=None, **overrides):
    """:class:`OrbitalScenario` of the arm at ``arm_urdf`` on ``spacecraft``.

    The mounted URDF is written to ``urdf_out`` (default: a temporary file) and becomes the
    scenario's ``urdf``; start, set-point and gains default to the robot-scaled values above;
    ``overrides`` set any other field of :class:`OrbitalScenario` (or these ones).
    """
    xml = mount_arm(read_urdf(arm_urdf), spacecraft, str(arm_urdf), locked)
    if urdf_out is None:
        urdf_out = Path(tempfile.mkdtemp(prefix="fbc_arm_")) / "robot.urdf"
    Path(urdf_out).write_text(xml, encoding="utf-8")
    model = FloatingBaseModel.from_urdf(urdf_out)
    q0, q_d = default_shape_setpoints(model)
    gains = default_shape_gains(model, q0, q_d)
    plain = lambda v: tuple(map(float, v))           # noqa: E731  (scenario fields go to YAML and ROS)
    fields = dict(urdf=str(urdf_out), q0=plain(q0), q_d=plain(q_d), stiffness=plain(gains.stiffness),
                  damping=plain(gains.damping), observer=default_observer_gains(model, q0))
    unknown = set(overrides) - {f.name for f in dataclasses.fields(OrbitalScenario)}
    if unknown:
        raise InputError(f"unknown scenario fields {sorted(unknown)}")
    return OrbitalScenario(**{**fields, **overrides})
