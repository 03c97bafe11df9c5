"""Motion tasks of the orbital scenario: a joint trajectory and an end-effector target (issue 16), a
reorientation of the spacecraft (issue 27, ``reorient.py``).

``run_task(scenario, task)`` runs :func:`~floating_base_control.experiments.orbital.scenario.run` with
the controller's ``tau_c`` from a motion task and adds, to the log and the summary,
the tracking errors measured on the simulator's ground truth:

* ``trajectory``: a smooth (quintic) joint trajectory from ``q0`` through
  :attr:`TaskSettings.via` to ``q_d``, sent at ``trajectory_start_s`` (once the
  observer has settled, as a client would), tracked by
  :class:`~floating_base_control.control.tracking.JointTask`;
* ``end-effector``: the joints held at ``q0`` until ``ee_start_s`` (the observer has
  settled), then ``ee_frame`` driven to a world target ``ee_offset_m`` away from where
  it is then and rotated ``ee_rotation_deg`` about ``ee_rotation_axis`` (world axes), by
  :class:`~floating_base_control.control.end_effector.EndEffectorTask`, handed over in
  ``ee_blend_s``.  With the scenario's momentum the whole robot tumbles at ~10 deg/s:
  an end effector held still in the inertial frame needs the joints to keep moving, so
  a hold lasts only seconds before the arm runs into a singularity or a limit
  (``analysis/hold.py``).  The run therefore ends ``ee_hold_s`` after the reference has
  reached the target, and the summary reports how long the physics allows the hold
  (``ee_hold_possible_s``, from the simulator's state when the reference arrives).
"""
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from floating_base_control.analysis.hold import com_speed, hold_motion
from floating_base_control.control.end_effector import (DEFAULT_DAMPING_RATIO, DEFAULT_NULLSPACE_DAMPING,
                                                       DEFAULT_NULLSPACE_STIFFNESS, DEFAULT_STIFFNESS, CartesianGains,
                                                       EndEffectorTask, FrameWorkspace, PoseReference, frame_id,
                                                       frame_kinematics)
from floating_base_control.control.handover import Handover
from floating_base_control.control.shape import ShapeGains
from floating_base_control.control.trajectory import TrajectoryReference, Waypoint
from floating_base_control.control.tracking import JointTask
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.experiments.orbital.dispersions import controller_model
from floating_base_control.experiments.orbital import reorient as reorientation

TASKS = ("setpoint", "trajectory", "end-effector", "reorient")


@dataclass
class TaskSettings:
    """The tasks' references and gains (SI units unless the name says otherwise)."""

    trajectory_start_s: float = 3.0
    via: tuple = ((0.0, -0.8, 0.0, -2.3, 0.0, 1.5, 0.8), (0.4, -0.6, -0.4, -2.0, 0.4, 1.2, 1.2))
    segment_s: float = 3.0                               #: time between waypoints
    acceleration_limit: float = 5.0                      #: rad/s^2, every joint
    #: joint gains: control/stability.py's delay_robust_joint_gains on the trajectory's shapes
    #: (trajectory_shapes), to 3 digits: stable with margin at one period of loop delay and over DDS
    stiffness: tuple = (134.0, 317.0, 187.0, 212.0, 7.89, 9.68, 1.48)
    damping: tuple = (11.6, 27.4, 16.2, 18.4, 0.683, 0.838, 0.129)
    ee_frame: str = "panda_link8"
    ee_start_s: float = 10.0                             #: the target is sent then (joints held before)
    ee_blend_s: float = 0.5                              #: handover from the joint hold to the impedance
    ee_speed: float = 0.3                                #: m/s, of the reference toward the target
    ee_angular_speed: float = 0.6                        #: rad/s
    ee_offset_m: tuple = (0.0, 0.3, 0.0)                 #: world frame
    ee_rotation_deg: float = 30.0
    ee_rotation_axis: tuple = (0.0, 0.0, 1.0)            #: world frame
    ee_stiffness: tuple = DEFAULT_STIFFNESS                    #: control/end_effector.py's defaults
    ee_damping: tuple = (0.5, 0.5, 0.5, 150.0, 150.0, 150.0)   #: used only without ``ee_damping_ratio``
    ee_damping_ratio: float = DEFAULT_DAMPING_RATIO      #: D_x from the task inertia (control/end_effector.py)
    ee_feedforward: bool = True                          #: the task-space feedforward F_ff
    ee_hold_s: float = 1.5                               #: the run ends this long after the reference arrives
    ee_hold_horizon_s: float = 10.0                      #: longest physically possible hold looked for (0: none)
    #: observer gains (k, l_rot, l_trans) of the end-effector run: 2 rad/s attitude bandwidth, damping ratio 0.7
    ee_observer: tuple = (3.0, 300.0, 300.0)
    nullspace_stiffness: tuple = (DEFAULT_NULLSPACE_STIFFNESS,) * 7
    nullspace_damping: tuple = (DEFAULT_NULLSPACE_DAMPING,) * 7
    reorient: reorientation.ReorientSettings = field(default_factory=reorientation.ReorientSettings)  #: reorient.py

    def to_dict(self):
        return asdict(self)


def trajectory_shapes(settings, model, q0, q_d, count=49):
    """``count`` shapes along the trajectory's reference from ``q0`` (sent at time 0), evenly in time to its end:
    where the trajectory task's gains are analysed (control/stability.py)."""
    reference = TrajectoryReference(np.asarray(q0, dtype=float), model.position_limits, model.velocity_limits,
                                    np.full(model.n, settings.acceleration_limit))
    points = waypoints(settings, np.asarray(q0, dtype=float), q_d)
    reference.command(0.0, points)
    return [reference.sample(t).q for t in np.linspace(0.0, points[-1].time_from_start, count)]


def default_via(model, q0, q_d):
    """Waypoints for a robot without its own (:attr:`TaskSettings.via` is the Panda's), shaped as the Panda's:
    40 % of the way from ``q0`` to ``q_d``, then 20 % past ``q_d``, kept inside the joint ranges as the
    default set-points are (``robots/orbital/spacecraft.py``)."""
    q0, q_d = np.asarray(q0, dtype=float), np.asarray(q_d, dtype=float)
    lo, hi = model.position_limits.T
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(bounded, lo, -np.pi), np.where(bounded, hi, np.pi)
    margin = 0.25 * (hi - lo)
    return (q0 + 0.4 * (q_d - q0), np.clip(q_d + 0.2 * (q_d - q0), lo + margin, hi - margin))


def default_trajectory_gains(settings, model, q0, q_d):
    """``(K, D)`` of the trajectory task for a robot without its own (:attr:`TaskSettings.stiffness` is the
    Panda's, computed so to 3 digits): ``control/stability.py``'s delay-robust gains on the trajectory's
    shapes (:func:`trajectory_shapes`)."""
    from floating_base_control.control.stability import delay_robust_joint_gains
    return delay_robust_joint_gains([model.reduced_shape_inertia(q)
                                     for q in trajectory_shapes(settings, model, q0, q_d)])


def waypoints(settings, q0, q_d):
    """Quintic waypoints through ``via`` to ``q_d``: zero accelerations, velocities by central differences
    of the neighbouring points, at rest at the end."""
    points = [np.asarray(q0, dtype=float)] + [np.asarray(p, dtype=float) for p in settings.via] \
        + [np.asarray(q_d, dtype=float)]
    out = []
    for i in range(1, len(points)):
        last = i == len(points) - 1
        v = np.zeros_like(q0) if last else (points[i + 1] - points[i - 1]) / (2 * settings.segment_s)
        out.append(Waypoint(i * settings.segment_s, points[i], v, np.zeros_like(v)))
    return out


def ee_displacement(settings):
    """The target's displacement from the end effector's pose when it is sent, in the world axes."""
    axis = np.asarray(settings.ee_rotation_axis, dtype=float)
    D = np.eye(4)
    D[:3, :3] = pin.exp3(np.deg2rad(settings.ee_rotation_deg) * axis / np.linalg.norm(axis))
    D[:3, 3] = settings.ee_offset_m
    return D


def ee_reach_s(settings):
    """Duration of the end effector's reference from its start to the target."""
    return PoseReference(0.0, np.eye(4), ee_displacement(settings), settings.ee_speed, settings.ee_angular_speed).T


def ee_pose(ws, fid, g1, q):
    """World pose of the end-effector frame ``fid`` with the base at ``g1`` and the shape ``q``."""
    return g1 @ frame_kinematics(ws, fid, q)[0]


def ee_errors(ws, fid, g1, q, target):
    """The end-effector columns of the log: its world position and its errors to ``target`` (NaN without one)."""
    g_e = ee_pose(ws, fid, g1, q)
    row = {"dq_norm_deg": np.nan, "ee_position": g_e[:3, 3].copy(), "ee_position_error_m": np.nan,
           "ee_orientation_error_deg": np.nan}
    if target is not None:
        row["ee_position_error_m"] = np.linalg.norm(g_e[:3, 3] - target[:3, 3])
        row["ee_orientation_error_deg"] = np.rad2deg(np.linalg.norm(pin.log3(g_e[:3, :3] @ target[:3, :3].T)))
    return row


def default_duration(task, settings):
    """Simulated seconds of a task's demo: 15 s, and for the end effector ``ee_hold_s`` after the reference
    reaches the target (the final second is then measured while the physics allows the hold); for the
    reorientation ``None``: from its plan (``reorient.default_duration``)."""
    if task == "reorient":
        return None
    if task == "end-effector":
        return settings.ee_start_s + ee_reach_s(settings) + settings.ee_hold_s
    return 15.0


def joint_hold(model, q0, settings):
    """The joint task holding ``q0`` (what the arm does before the end-effector target arrives)."""
    reference = TrajectoryReference(q0, model.position_limits, model.velocity_limits,
                                    np.full(model.n, settings.acceleration_limit))
    return JointTask(model, reference, ShapeGains(settings.stiffness, settings.damping))


def build(task, scenario, model, settings):
    """``(motion, evaluate)`` for :func:`orbital.run`: the motion task and its ground-truth columns."""
    q0 = np.array(scenario.q0, dtype=float)
    if task == "trajectory":
        motion = joint_hold(model, q0, settings)
        reference = motion.reference
        reference.command(settings.trajectory_start_s, waypoints(settings, q0, scenario.q_d))

        def evaluate(t, g1, q):
            return {"dq_norm_deg": np.rad2deg(np.linalg.norm(q - reference.sample(t).q))}
        return motion, evaluate
    if task == "end-effector":
        gains = CartesianGains(settings.ee_stiffness, settings.ee_damping, settings.nullspace_stiffness,
                               settings.nullspace_damping, settings.ee_damping_ratio)
        ee = EndEffectorTask(model, settings.ee_frame, gains, q0, settings.ee_speed, settings.ee_angular_speed,
                             settings.ee_feedforward)
        ee.command(ee_displacement(settings), settings.ee_start_s, relative=True)
        motion = Handover(joint_hold(model, q0, settings), ee, settings.ee_start_s, settings.ee_blend_s)
        ws, fid = FrameWorkspace(model), frame_id(model, settings.ee_frame)

        def evaluate(t, g1, q):
            row = ee_errors(ws, fid, g1, q, ee.target)
            seen = ee.target is not None   # what the controller sees (its pose estimate) to its reference
            row["ee_estimated_position_error_m"] = np.linalg.norm(ee.error[3:]) if seen else np.nan
            row["ee_estimated_orientation_error_deg"] = np.rad2deg(np.linalg.norm(ee.error[:3])) if seen else np.nan
            return row
        return motion, evaluate
    raise ValueError(f"task must be one of {TASKS}, got {task!r}")


def task_scenario(scenario, task, settings):
    """``scenario`` with the task's observer: the end effector's accuracy is the observer's attitude estimate
    seen through the arm's lever, and a hold keeps the joints moving at ~1 rad/s, where the default observer
    (1 rad/s attitude bandwidth) lags by 2-3 mrad (docs/how-to/command-motion.md); other tasks keep the scenario's."""
    if task != "end-effector":
        return scenario
    return replace(scenario, observer=ObserverGains(*settings.ee_observer))


def run_task(scenario, task, settings=None, progress=None):
    """Run ``scenario`` with ``task`` (one of :data:`TASKS`, with :func:`task_scenario`'s observer); returns
    ``(log, summary)``."""
    settings = settings or TaskSettings()
    scenario = task_scenario(scenario, task, settings)
    if task == "reorient":
        return reorientation.run(scenario, settings.reorient, progress)
    if task == "setpoint":
        log, summary = orbital.run(scenario, progress)
        summary.update(task=task, tracking_rms_joint_error_deg=float(np.sqrt(np.mean(log["dq_norm_deg"] ** 2))))
        return log, summary
    model = controller_model(scenario, scenario.urdf or orbital_robot_urdf())
    motion, evaluate = build(task, scenario, model, settings)
    log, summary = orbital.run(scenario, progress, motion=motion, evaluate=evaluate)
    summary.update(task_summary(task, log), task_settings=settings.to_dict())
    if task == "end-effector":
        ee = motion.second
        summary.update(hold_summary(scenario, ee.reference.end_time if ee.target is not None else None, ee.target,
                                    log, settings))
    return log, summary


def hold_summary(scenario, arrival, target, log, settings):
    """How long the physics allows ``target`` to be held (``analysis/hold.py``), from the simulator's shape
    and momentum when the reference reaches it (``arrival``, s of the log; ``None``: no target), on the plant's
    model; and whether the run's final second lies within that hold."""
    out = {"ee_reference_arrival_s": arrival, "ee_hold_possible_s": None, "ee_hold_limit": None,
           "ee_final_window_within_hold": None}
    if arrival is None or arrival > log["t"][-1] or settings.ee_hold_horizon_s <= 0:
        return out
    i = int(np.searchsorted(log["t"], arrival))
    plant_model = FloatingBaseModel.from_urdf(scenario.urdf or orbital_robot_urdf())
    h = log["momentum"][i]
    hold = hold_motion(plant_model, settings.ee_frame, log["q"][i], target, h, settings.ee_hold_horizon_s)
    return {"ee_reference_arrival_s": float(arrival), "ee_hold_possible_s": float(hold.duration_s),
            "ee_hold_limit": hold.reason, "ee_com_speed_m_s": com_speed(plant_model, h),
            "ee_final_window_within_hold": bool(log["t"][-1] <= arrival + hold.duration_s)}


def task_summary(task, log):
    """The task's keys of ``summary.json``: RMS over the whole run, "final" the mean over the last second
    (as ``final_joint_error_deg``, which for a trajectory is the error to the reference)."""
    if task == "trajectory":
        return {"task": task, "tracking_rms_joint_error_deg": float(np.sqrt(np.mean(log["dq_norm_deg"] ** 2))),
                "max_joint_error_deg": float(log["dq_norm_deg"].max())}
    t, position, orientation = log["t"], log["ee_position_error_m"], log["ee_orientation_error_deg"]
    last = t >= t[-1] - 1.0
    within = (position < 1e-3) & (orientation < 0.1)          # NaN (no target yet) compares False
    estimated = {f"final_{k}": float(log[k][last].mean()) for k in
                 ("ee_estimated_position_error_m", "ee_estimated_orientation_error_deg") if k in log}
    return {**estimated, "final_observer_attitude_error_deg": float(np.rad2deg(np.nanmean(log["eps_rot_norm"][last]))),
            "task": task, "tracking_rms_joint_error_deg": None, "final_joint_error_deg": None,
            "final_ee_position_error_m": float(position[last].mean()),
            "final_ee_orientation_error_deg": float(orientation[last].mean()),
            "min_ee_position_error_m": float(np.nanmin(position)),
            "min_ee_orientation_error_deg": float(np.nanmin(orientation)),
            "ee_time_within_1mm_0.1deg_s": float(within.sum() * np.median(np.diff(t)))}


def plot(out_dir, log, summary):
    """``tracking.png``: the task's error on the ground truth (and, for the end effector, its path);
    ``reorientation.png`` for the reorientation."""
    if summary["task"] == "reorient":
        return reorientation.plot(out_dir, log, summary)
    from floating_base_control.results import pyplot
    plt = pyplot()
    t = log["t"]
    title = f"task {summary['task']}, compensation {summary['compensation']}"
    if summary["task"] == "end-effector":
        fig, (a, b, c) = plt.subplots(3, 1, figsize=(8, 10))
        a.semilogy(t, log["ee_position_error_m"] * 1e3, "C0", label="position error [mm]")
        a.semilogy(t, log["ee_orientation_error_deg"], "C1", label="orientation error [deg]")
        if "ee_estimated_position_error_m" in log:
            a.semilogy(t, log["ee_estimated_position_error_m"] * 1e3, "C0--", lw=0.8, label="controller's own [mm]")
            a.semilogy(t, log["ee_estimated_orientation_error_deg"], "C1--", lw=0.8, label="controller's own [deg]")
        a.axhline(1.0, color="gray", ls=":")
        a.axhline(0.1, color="gray", ls="--")
        a.set_ylim(bottom=1e-3)
        if summary.get("ee_hold_possible_s") is not None:
            arrival = summary["ee_reference_arrival_s"]
            a.axvspan(arrival, arrival + summary["ee_hold_possible_s"], color="C2", alpha=0.15,
                      label=f"physically possible hold ({summary['ee_hold_possible_s']:.2f} s)")
        a.set_ylabel("end-effector error (ground truth)")
        a.set_xlabel("time [s]")
        a.legend()
        for ax, (i, j) in zip((b, c), ((0, 1), (1, 2))):
            ax.plot(log["ee_position"][:, i], log["ee_position"][:, j], lw=0.8, label="end-effector path")
            ax.plot(*log["ee_position"][-1, [i, j]], "o", label="end")
            ax.set_xlabel(f"world {'xyz'[i]} [m]")
            ax.set_ylabel(f"world {'xyz'[j]} [m]")
            ax.set_aspect("equal", adjustable="datalim")
            ax.legend()
    else:
        fig, a = plt.subplots(1, 1, figsize=(8, 4))
        a.semilogy(t, np.maximum(log["dq_norm_deg"], 1e-6))
        a.axhline(0.05, color="gray", ls=":", label="0.05 deg")
        a.set_ylabel(r"tracking error $|q - q_r(t)|$ [deg]")
        a.set_xlabel("time [s]")
        a.legend()
    a.set_title(title)
    fig.tight_layout()
    fig.savefig(Path(out_dir) / "tracking.png", dpi=110)
    plt.close(fig)
