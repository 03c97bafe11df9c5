"""``fbc plan reorient``: a reorientation plan for any URDF (planning/reorientation.py), written as files.

``fbc plan reorient --urdf PATH --axis X Y Z --angle-deg A [--q0 ...] [--out DIR]`` plans the joint loops that
turn the base by ``A`` degrees about ``(X, Y, Z)`` (the base frame at the plan's start; the rotation is the base's
final attitude relative to its initial one) and writes ``plan.json``, ``plan.csv`` and ``plan.png``.
"""
import csv
import math

import numpy as np

from floating_base_control.analysis.locomotion import ccf_map
from floating_base_control.model import FloatingBaseModel
from floating_base_control.planning import reorientation as ro
from floating_base_control.planning.holonomy import rotation_vector
from floating_base_control.planning.limits import DEFAULT_MARGIN
from floating_base_control.planning.rotations import rotation_angle, rotation_from_axis_angle
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.results import pyplot, write_json
from floating_base_control.validation import InputError
from floating_base_control.cli import _options as opt

DESCRIPTION = """\
Plan a reorientation of the floating base with joint loops (planning/reorientation.py): the loop that turns
the base the most per second within the limits (curvature, [Mishra2023] Theorem 2 and eq. 11, then the exact
eq. 9), repeated N times and landed on the target exactly, timed within the speed and acceleration limits.
Writes plan.json (times, positions, velocities, the predicted rotation as a 3x3 matrix, cycles, duration,
planning time), plan.csv (time, positions, velocities, predicted rotation vector) and plan.png (the loop over
the CCF map of its two main joints, the predicted base attitude, the joints' margins and speeds).
Without --urdf: the orbital robot (the Panda on the spacecraft) from its configuration's set-point."""

#: Grid points per axis of the CCF map under the loop in the plot.
CCF_GRID = 25


def register(sub):
    p = sub.add_parser("plan", help="plans for the robot (a reorientation of the base with joint loops)")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    r = kinds.add_parser("reorient", help="turn the base by a rotation with joint loops", description=DESCRIPTION)
    opt.add_model(r, "default: the orbital robot, urdf/orbital_robot.urdf")
    r.add_argument("--axis", type=opt.finite_float, nargs=3, default=(0.0, 0.0, 1.0), metavar=("X", "Y", "Z"),
                   help="rotation axis in the base frame at the start (default 0 0 1)")
    r.add_argument("--angle-deg", type=opt.finite_float, default=30.0, help="rotation angle, degrees (default 30)")
    r.add_argument("--q0", type=opt.finite_float, nargs="+", metavar="Q",
                   help="start shape, rad, in the model's joint order (default: the orbital robot's set-point "
                        "without --urdf, else the zero shape)")
    r.add_argument("--margin", type=opt.non_negative, default=DEFAULT_MARGIN,
                   help=f"rad kept inside the joint position limits (default {DEFAULT_MARGIN})")
    r.add_argument("--out", default="out/plan", metavar="DIR", type=opt.writable_dir,
                   help="directory for plan.json, plan.csv and plan.png (default out/plan)")
    r.set_defaults(func=run)


def start_shape(model, args):
    """``--q0``, or the default start shape (``--q0``'s help)."""
    if args.q0 is not None:
        if len(args.q0) != model.n:
            raise InputError(f"--q0 has {len(args.q0)} values, the model has {model.n} joints "
                             f"({', '.join(model.joint_names)})")
        return np.array(args.q0, dtype=float)
    if args.urdf is None:
        from floating_base_control.experiments.orbital.scenario import OrbitalScenario
        return np.array(OrbitalScenario().q0, dtype=float)
    return np.zeros(model.n)


def run(args):
    model = FloatingBaseModel.from_urdf(args.urdf or orbital_robot_urdf())
    q0 = start_shape(model, args)
    target = rotation_from_axis_angle(args.axis, math.radians(args.angle_deg))
    plan = ro.plan_reorientation(model, q0, target, margin=args.margin)
    out = opt.output_dir(args)
    write_json(out / "plan.json", plan_report(model, q0, plan))
    write_csv(out / "plan.csv", plan)
    plot(model, q0, plan, out / "plan.png")
    s = plan.summary()
    print(f"{s['target_rotation_deg']:.2f} deg about {list(args.axis)}: {plan.cycles} cycles of a loop in "
          f"{', '.join(s['loop_joints'])}, {plan.duration:.2f} s, predicted error {s['predicted_error_deg']:.2e} deg, "
          f"planned in {plan.planning_time:.2f} s ({plan.planning_cpu_time:.2f} s of CPU)")
    print(f"wrote {out / 'plan.json'}, {out / 'plan.csv'} and {out / 'plan.png'}")


def plan_report(model, q0, plan):
    """``plan.json``: the issue's keys (``predicted_rotation``: the 3x3 matrix ``R1(0)^T R1(end)``) and the plan's
    summary."""
    return {"model": model.source, "joint_names": list(model.joint_names), "q0": q0,
            "target_rotation": plan.target, "predicted_rotation": plan.predicted_rotation,
            "predicted_rotation_format": "3x3 rotation matrix, base frame at the start",
            "cycles": plan.cycles, "duration_s": plan.duration, "planning_time_s": plan.planning_time,
            "cycle_times": plan.cycle_times, "summary": plan.summary(),
            "times": plan.times, "positions": plan.positions, "velocities": plan.velocities}


def write_csv(path, plan):
    """One row per sample: time, the joints' positions and velocities, the predicted rotation vector (rad)."""
    names = plan.joint_names
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["t", *(f"q_{n}" for n in names), *(f"qdot_{n}" for n in names), "phi_x", "phi_y", "phi_z"])
        for t, q, qdot, R in zip(plan.times, plan.positions, plan.velocities, plan.attitudes):
            w.writerow([f"{t:.6f}", *(f"{x:.9g}" for x in q), *(f"{x:.9g}" for x in qdot),
                        *(f"{x:.9g}" for x in rotation_vector(R))])


def plot(model, q0, plan, path):
    """The loop over the CCF map of its two joints that move most (rotation about the target axis, base frame),
    the predicted attitude (rotation vector), and the joints' margins to their limits and speed ratios."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    _loop_over_ccf(model, q0, plan, axes[0, 0])
    a = axes[0, 1]
    phi = np.degrees([rotation_vector(R) for R in plan.attitudes])
    for k, label in enumerate("xyz"):
        a.plot(plan.times, phi[:, k], label=f"rotation vector {label}")
    a.plot(plan.times, [math.degrees(rotation_angle(plan.target.T @ R)) for R in plan.attitudes], "k--",
           lw=0.8, label="angle to the target")
    for t in plan.cycle_times:
        a.axvline(t, color="gray", lw=0.4)
    a.set(xlabel="time [s]", ylabel="deg", title="predicted base attitude R1(0)^T R1(t) (eq. 9)")
    a.legend(fontsize=8)
    limits = plan.limits
    margins = np.minimum(plan.positions - limits.lower, limits.upper - plan.positions)   # limits: less the margin
    axes[1, 0].plot(plan.times, margins, lw=0.8)
    axes[1, 0].axhline(0.0, color="gray", ls=":")
    axes[1, 0].set(xlabel="time [s]", ylabel="rad", title=f"joint margin to the limits minus {limits.margin} rad")
    axes[1, 1].plot(plan.times, np.abs(plan.velocities) / limits.velocity, lw=0.8)
    axes[1, 1].axhline(1.0, color="gray", ls=":")
    axes[1, 1].set(xlabel="time [s]", ylabel="|qdot| / limit", title="joint speeds")
    axes[1, 1].legend(plan.joint_names, fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _loop_over_ccf(model, q0, plan, ax):
    moving = np.ptp(plan.positions, axis=0)
    i, j = sorted(np.argsort(moving)[-2:])
    Psi = np.zeros((model.n, 2))
    Psi[i, 0] = Psi[j, 1] = 1.0
    r = plan.positions[:, [i, j]] - q0[[i, j]]
    pad = 0.1 * max(np.ptp(r), 0.1)
    r1 = np.linspace(r[:, 0].min() - pad, r[:, 0].max() + pad, CCF_GRID)
    r2 = np.linspace(r[:, 1].min() - pad, r[:, 1].max() + pad, CCF_GRID)
    axis = plan.axis
    ccf = np.tensordot(axis, ccf_map(model, Psi, r1, r2, q0, "base")[:3], axes=1)
    image = ax.contourf(r1 + q0[i], r2 + q0[j], ccf, 30, cmap="RdBu_r")
    plt = pyplot()
    plt.colorbar(image, ax=ax, label="CCF about the target axis [rad/rad^2]")
    ax.plot(plan.positions[:, i], plan.positions[:, j], "k-", lw=1.0, label="joint loop (projected)")
    ax.plot(q0[i], q0[j], "ko")
    ax.set(xlabel=f"{model.joint_names[i]} [rad]", ylabel=f"{model.joint_names[j]} [rad]",
           title="the loop over the CCF map (Algorithm 1, base frame)")
    ax.legend(fontsize=8)
