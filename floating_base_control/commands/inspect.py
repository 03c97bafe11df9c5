"""``fbc inspect``: locked inertia, connection and curvature of a URDF at a few shapes."""
import json
import sys

import numpy as np

from ..analysis.model_report import shape_report
from ..model import FloatingBaseModel
from ..resources import orbital_robot_urdf


def register(sub):
    p = sub.add_parser("inspect", help="locked inertia, mechanical connection and curvature "
                                       "of a floating-base URDF at a few shapes")
    p.add_argument("--urdf", help="URDF whose root link is the floating base "
                                  "(default: the orbital robot)")
    p.add_argument("--random", type=int, default=2, help="number of random shapes (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random shapes")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def run(args):
    model = FloatingBaseModel.from_urdf(args.urdf or orbital_robot_urdf())
    lo, hi = model.position_limits.T
    mid = np.where(np.isfinite(lo + hi), 0.5 * (lo + hi), 0.0)
    rng = np.random.default_rng(args.seed)
    shapes = {"zero": np.clip(np.zeros(model.n), lo, hi), "mid-range": mid}
    for k in range(args.random):
        shapes[f"random {k + 1}"] = np.clip(mid + rng.uniform(-1, 1, model.n), lo, hi)
    reports = {name: shape_report(model, q) for name, q in shapes.items()}
    if args.json:
        json.dump({"model": repr(model), "shapes": reports}, sys.stdout, indent=2)
        print()
        return
    print(model)
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
