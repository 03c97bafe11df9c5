"""``fbc inspect``: what loading a URDF merged, locked or mimicked, then its locked inertia,
connection and curvature at a few shapes."""
import json
import sys

import numpy as np

from floating_base_control.analysis.model_report import loading_report, shape_report
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.robots.orbital.spacecraft import default_shape_setpoints
from floating_base_control.urdf_loader import MIMIC_MODES
from floating_base_control.cli._options import count, joint_value
from floating_base_control.cli._table import refuse


def register(sub):
    p = sub.add_parser("inspect", help="locked inertia, mechanical connection and curvature "
                                       "of a floating-base URDF at a few shapes")
    p.add_argument("--urdf", help="URDF whose root link is the floating base "
                                  "(default: the orbital robot)")
    p.add_argument("--lock", action="append", default=[], metavar="JOINT=VALUE", type=joint_value,
                   help="hold a joint at VALUE (rad or m); repeatable")
    p.add_argument("--mimic", choices=MIMIC_MODES, default="lock",
                   help="mimic joints: lock each group at its leader's position (default) or refuse them")
    p.add_argument("--random", type=count, default=2, help="number of random shapes (default 2)")
    p.add_argument("--seed", type=count, default=0, help="seed of the random shapes")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


CHECKS = {"seed": ("--seed", lambda a: None if a.random else "applies to --random shapes (there are none)", 0)}


def run(args):
    refuse(CHECKS, args)
    model = FloatingBaseModel.from_urdf(args.urdf or orbital_robot_urdf(), locked=dict(args.lock),
                                        mimic=args.mimic)
    lo, hi = model.position_limits.T
    mid = default_shape_setpoints(model)[0]         # the middle of each range, 0 where unlimited
    rng = np.random.default_rng(args.seed)
    shapes = {"zero": np.clip(np.zeros(model.n), lo, hi), "mid-range": mid}
    for k in range(args.random):
        shapes[f"random {k + 1}"] = np.clip(mid + rng.uniform(-1, 1, model.n), lo, hi)
    reports = {name: shape_report(model, q) for name, q in shapes.items()}
    loading = loading_report(model)
    if args.json:
        json.dump({"model": repr(model), "loading": loading, "shapes": reports}, sys.stdout, indent=2)
        print()
        return
    print(model)
    _print_loading(loading)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    for name, r in reports.items():
        print(f"\n== shape '{name}': q = {np.array(r['q_rad'])} rad")
        print(f"  locked system: {r['mass_kg']:.3f} kg, CoM in base frame "
              f"{np.array(r['com_in_base_m'])} m")
        print(f"  principal inertia at the CoM: {np.array(r['principal_inertia_at_com_kgm2'])} kg m^2")
        print(f"  |A_l| rotation per joint (rad/rad):  {np.array(r['connection_rotation_per_joint'])}")
        print(f"  |A_l| translation per joint (m/rad): "
              f"{np.array(r['connection_translation_per_joint_m'])}")
        print(f"  cond(Lambda_q) = {r['reduced_shape_inertia_condition']:.1f}")
        print(f"  largest curvature: joints {r['max_curvature_pair']}, |rotation| = "
              f"{r['max_curvature_rotation']:.4g} rad/rad^2, DA_l = "
              f"{np.array(r['max_curvature_twist'])}")


def _print_loading(r):
    print(f"base link {r['base_link']!r}" + (f" (root link {r['dropped_root_link']!r} dropped: its child is "
                                              "the floating base)" if r["dropped_root_link"] else ""))
    for body, links in r["merged_links"].items():
        print(f"  merged into {body!r} by fixed joints: {', '.join(links)}")
    for joint, value in r["locked_joints"].items():
        mimic = r["mimic_joints"].get(joint)
        how = (f" (mimics {mimic[0]!r}: {mimic[1]:g} x + {mimic[2]:g})" if mimic else "")
        print(f"  locked {joint!r} at {value:.6g}{how}")
    for key, text in (("joints_without_position_limits", "no position limits"),
                      ("joints_without_effort_limits", "no effort limit (URDF effort 0 or missing)")):
        if r[key]:
            print(f"  {text}: {', '.join(r[key])}")
    for key in ("joint_damping", "joint_friction"):
        if r[key]:
            print(f"  URDF {key.replace('_', ' ')} (not in the model, ideal joints): {r[key]}")
