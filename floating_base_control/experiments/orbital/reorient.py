"""The reorientation task of the orbital scenario (issue 27): turn the spacecraft with the arm's joint loops.

:func:`run` runs :func:`~.scenario.run` with a :class:`~floating_base_control.planning.execution.ReorientTask`
as the controller's motion: the target is the rotation ``angle_deg`` about ``axis`` of the base frame at the
start (the plant starts at ``g1 = I``, so it is also the world attitude to reach); the task plans from the
observer's estimate once it has settled (``settle_s``), tracks the plan with gains stable on its shapes with the
loop's delay (``control/stability.py``) and the scenario's compensation, re-plans every cycle and corrects from
rest (``planning/execution.py``).  The in-process loop applies each command one control period late (as the
scenario's ``loop_delay_s`` says).  The plant
collides the arm with the spacecraft (the URDF's primitives, ``collisions``) and counts the contacts.
Everything judged comes from the simulator's ground truth: the final attitude error (``R_target^T R1``; with
momentum at the plan's end, interpolated between the logged rows), the joints' speed ratios and limit
margins (every tick, :class:`~floating_base_control.control.limits.LimitMonitor`), the contacts.  The naive
baseline (:func:`~floating_base_control.planning.baseline.baseline_plan`) is planned in the same run, from
the same shape, for the same target: its rotation per cycle (exact eq. 9) is the comparison.
"""
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from floating_base_control.control.shape import ShapeGains
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.experiments.orbital.dispersions import controller_model
from floating_base_control.planning import execution, reorientation as ro
from floating_base_control.planning.baseline import baseline_plan
from floating_base_control.planning.holonomy import rotation_matrix, rotation_vector
from floating_base_control.planning.limits import DEFAULT_MARGIN
from floating_base_control.planning.rotations import rotation_angle, rotation_from_axis_angle
from floating_base_control.resources import orbital_robot_urdf

#: Seconds simulated at most after the plan planned at the start: the observer's convergence with momentum
#: (``execution.MAX_SETTLE_S``), corrections from rest; the run ends earlier, ``END_S`` after the task is done.
AFTER_PLAN_S, END_S = execution.MAX_SETTLE_S + 20.0, 1.0


@dataclass
class ReorientSettings:
    """The target and the executor's settings (SI units unless the name says otherwise)."""

    axis: tuple = (0.0, 0.0, 1.0)             #: base frame at the start
    angle_deg: float = 30.0
    stiffness: tuple = None                   #: tracking gains; None: each plan's (delay-robust on its shapes)
    damping: tuple = None
    lead_s: float = execution.LEAD_S
    settle_s: float = execution.SETTLE_S
    tolerance_deg: float = math.degrees(execution.TOLERANCE)
    max_corrections: int = execution.MAX_CORRECTIONS
    planning_latency_s: float = 0.0           #: results of the in-process planner come this late (sim time)
    margin: float = DEFAULT_MARGIN            #: rad inside the joint limits
    baseline: bool = True                     #: plan the naive baseline too (its rotation per cycle)
    duration_s: float = None                  #: simulated seconds; None: default_duration

    def to_dict(self):
        return asdict(self)


def target(settings):
    """The target attitude (3x3): ``angle_deg`` about ``axis`` of the base at the start (``g1(0) = I``)."""
    return rotation_from_axis_angle(settings.axis, math.radians(settings.angle_deg))


def build(scenario, model, settings):
    """``(task, evaluate)``: the :class:`ReorientTask` with its target set, and the log's ground-truth columns."""
    q0, period = np.array(scenario.q0, dtype=float), 1.0 / scenario.control_rate_hz
    planner = execution.SynchronousPlanner(model, {"margin": settings.margin}, settings.planning_latency_s, period)
    gains = None if settings.stiffness is None else ShapeGains(settings.stiffness, settings.damping)
    task = execution.ReorientTask(model, planner, q0, gains, period, settings.lead_s, settings.settle_s,
                                  math.radians(settings.tolerance_deg), settings.max_corrections)
    R_target = target(settings)
    task.command(R_target)

    def evaluate(t, g1, q):
        return {"dq_norm_deg": math.degrees(np.linalg.norm(task.error)),
                "base_rotation_error": rotation_vector(R_target.T @ g1[:3, :3]),
                "base_rotation_error_deg": math.degrees(rotation_angle(R_target.T @ g1[:3, :3])),
                "estimated_rotation_error_deg": math.degrees(task.estimated_error())}
    return task, evaluate


def default_duration(scenario, model, settings):
    """Simulated seconds at most: settling, the plan (planned here at zero momentum, from the scenario's start) and
    :data:`AFTER_PLAN_S` more (the run ends :data:`END_S` after the task is done)."""
    plan = ro.plan_reorientation(model, np.array(scenario.q0, dtype=float), target(settings), margin=settings.margin)
    return settings.settle_s + plan.duration + AFTER_PLAN_S


def run(scenario, settings=None, progress=None):
    """Run the reorientation in ``scenario`` (with the arm-spacecraft collisions); ``(log, summary)``."""
    settings = settings or ReorientSettings()
    scenario = replace(scenario, collisions=True)
    model = controller_model(scenario, scenario.urdf or orbital_robot_urdf())
    scenario = replace(scenario, duration_s=settings.duration_s or default_duration(scenario, model, settings))
    task, evaluate = build(scenario, model, settings)
    ended = []

    def until(t):
        if task.status in ("done", "refused") and not ended:
            ended.append(t)
        return bool(ended) and t >= ended[0] + END_S
    log, summary = orbital.run(scenario, progress, motion=task, evaluate=evaluate, until=until)
    summary.update(task_summary(scenario, model, settings, task, log, summary))
    return log, summary


def task_summary(scenario, model, settings, task, log, summary):
    """The task's keys of ``summary.json`` (module doc); ``duration_s`` is the reorientation's (first plan's start to
    the last plan's end), the run's simulated time stays in ``simulated_s``."""
    first = task.first_plan or {}
    started = first.get("start_time_s")
    at = task.end_time if task.momentum and task.end_time is not None else float(log["t"][-1])
    error = _error_at(log, at)
    R_target = target(settings)
    out = {"task": "reorient", "simulated_s": summary["duration_s"],
           "target_rotation_deg": math.degrees(rotation_angle(R_target)),
           "target_axis": list(settings.axis), "final_base_rotation_error_deg": error,
           "final_base_rotation_error_at_s": at, "task_status": task.status,
           "cycles": task.cycles, "corrections": task.corrections,
           "remainders": sum(event.startswith("remainder from") for _, event, _ in task.log),
           "duration_s": None if started is None or task.motion_end is None else task.motion_end - started,
           "planning_time_s": first.get("planning_time_s"), "planning_cpu_s": first.get("planning_cpu_s"),
           "first_plan": first,
           "rotation_per_cycle_deg": first.get("rotation_per_cycle_deg"),
           "momentum": task.momentum,
           "max_joint_speed_ratio": float(max(summary["max_velocity_limit_ratio"])),
           "min_joint_limit_margin_rad": float(min(summary["min_position_limit_margin_rad"])),
           "arm_spacecraft_contacts": summary.get("arm_spacecraft_contact_ticks"),
           "refusals": task.refusals, "events": [(round(t, 4), event, str(details)[:300]) for t, event, details
                                                 in task.log],
           "joint_velocity_limits": model.velocity_limits.tolist(), "reorient_settings": settings.to_dict()}
    if task.cycles:
        turned = R_target @ rotation_matrix(log["base_rotation_error"][int(np.argmin(np.abs(log["t"] - at)))])
        out["measured_rotation_per_cycle_deg"] = math.degrees(rotation_angle(turned)) / task.cycles
    if settings.baseline:
        out.update(_baseline(scenario, model, settings, R_target, first))
    return out


def _error_at(log, t):
    """Angle (deg) of the ground truth's attitude error at ``t``, interpolated between the logged rows (on their
    rotation vectors: the rows are 10 ms apart)."""
    times, errors = log["t"], log["base_rotation_error"]
    i = int(np.clip(np.searchsorted(times, t), 1, len(times) - 1))
    w = (t - times[i - 1]) / (times[i] - times[i - 1])
    return float(math.degrees(np.linalg.norm((1 - w) * errors[i - 1] + w * errors[i])))


def _baseline(scenario, model, settings, R_target, first):
    """The naive baseline for the target from the start shape (its rotation about the axis per cycle, eq. 9), and
    the ratios to the first plan's, per cycle and per second."""
    plan = baseline_plan(model, np.array(scenario.q0, dtype=float), R_target, margin=settings.margin)
    s = plan.summary()
    out = {"baseline_rotation_per_cycle_deg": s["rotation_per_cycle_deg"], "baseline_cycles": s["cycles"],
           "baseline_duration_s": s["duration_s"], "baseline_rotation_rate_deg_s": s["rotation_rate_deg_s"],
           "baseline_loop_joints": s["loop_joints"], "baseline_predicted_error_deg": s["predicted_error_deg"]}
    if first:
        out["rotation_per_cycle_ratio"] = first["rotation_per_cycle_deg"] / s["rotation_per_cycle_deg"]
        out["rotation_rate_ratio"] = first["rotation_rate_deg_s"] / s["rotation_rate_deg_s"]
    return out


def plot(out_dir, log, summary):
    """``reorientation.png``: the attitude error (truth and the controller's estimate) and the joints' speeds."""
    from floating_base_control.results import pyplot
    plt = pyplot()
    t = log["t"]
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    a.semilogy(t, np.maximum(log["base_rotation_error_deg"], 1e-4), "C0", label="ground truth")
    a.semilogy(t, np.maximum(log["estimated_rotation_error_deg"], 1e-4), "C1--", lw=0.8, label="observer's estimate")
    a.axhline(0.1, color="gray", ls=":", label="0.1 deg")
    for time, event, _ in summary["events"]:
        if "from" in event:
            a.axvline(time, color="C2", lw=0.5, alpha=0.5)
    a.set_ylabel(r"base attitude error to the target [deg]")
    a.set_title(f"reorientation {summary['target_rotation_deg']:.0f} deg about {summary['target_axis']}: "
                f"{summary['cycles']} cycles, final {summary['final_base_rotation_error_deg']:.3f} deg")
    a.legend()
    b.plot(t, np.abs(log["qdot"]) / np.asarray(summary["joint_velocity_limits"]), lw=0.8)
    b.axhline(1.0, color="gray", ls=":")
    b.set_ylabel("|qdot| / speed limit")
    b.set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(Path(out_dir) / "reorientation.png", dpi=110)
    plt.close(fig)
