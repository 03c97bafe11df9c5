"""``fbc integrability``: does the average angular velocity integrate ([Saccon2017] Prop. 4.1)?"""
import numpy as np

from floating_base_control.analysis import integrability as itg
from floating_base_control.analysis.locomotion import reconstruct
from floating_base_control.lie import log
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.results import pyplot, write_json
from floating_base_control.cli import _options as opt
from floating_base_control.cli._table import refuse

DESCRIPTION = """\
Integrability of the locked (average) velocity, [Saccon2017] Prop. 4.1: samples the shape
space and reports the largest curvature of the mechanical connection (Theorem 2 of
[Mishra2023]; [Saccon2017]'s calB_ij = -P DA_l(e_i) e_j), per joint pair, with a verdict.
The centroidal frame F(s) = g1^-1 g_C is built at one shape by the staircase of
eqs. 26-28 and compared with integrating the locked velocity along the straight line
(equal iff flat).  With --loop, the holonomy of that closed joint loop: how C has
turned and moved relative to the base (at zero momentum the base moves by its inverse)."""


def register(sub):
    p = sub.add_parser("integrability", help="is the centroidal frame a function of the shape? "
                       "curvature scan, staircase frame and holonomy ([Saccon2017])",
                       description=DESCRIPTION)
    opt.add_model(p, "default: the orbital robot")
    p.add_argument("--samples", type=opt.positive_count, default=200, help="random shapes (default 200)")
    p.add_argument("--seed", type=opt.count, default=0, help="seed of the random shapes")
    p.add_argument("--tol", type=opt.positive, default=itg.FLAT_TOL,
                   help=f"verdict threshold on |rotational curvature| (default {itg.FLAT_TOL:g})")
    p.add_argument("--at", nargs="+", type=opt.joint_value, metavar="JOINT=RAD",
                   help="shape at which to build F(s) (other joints 0; default: a random shape)")
    p.add_argument("--loop", metavar="CSV", help="closed joint loop: a CSV file whose header "
                   "names joints, one row per sample (joints not named stay at --center)")
    p.add_argument("--center", nargs="+", type=opt.joint_value, default=[], metavar="JOINT=RAD",
                   help="values of the joints not in the loop file (default 0)")
    opt.add_output(p, "integrability")
    p.set_defaults(func=run)


def read_loop(model, args):
    header, values = opt.read_path(args.loop)
    idx = opt.joint_indices(model, header, args.loop)
    loop = np.tile(opt.joint_vector(model, args.center, "--center"), (len(values), 1))
    loop[:, idx] = values
    return loop


CHECKS = {"center": ("--center", lambda a: None if a.loop else "applies to --loop (the joints its file does not "
                     "name)", [])}


def run(args):
    refuse(CHECKS, args)
    model = FloatingBaseModel.from_urdf(args.urdf or orbital_robot_urdf())
    loop = read_loop(model, args) if args.loop else None
    rng = np.random.default_rng(args.seed)
    shapes = itg.sample_shapes(model, args.samples, rng)
    scan = itg.curvature_scan(model, shapes, args.tol)
    s = opt.joint_vector(model, args.at, "--at") if args.at else shapes[0]
    names = model.joint_names
    report = {
        "model": model.source, "joints": names, "samples": args.samples, "seed": args.seed, "tol": args.tol,
        "flat": scan.flat,
        "verdict": ("flat: the centroidal frame is a function of the shape (Prop. 4.1)" if scan.flat
                    else "not flat: the centroidal frame depends on the path of the shape"),
        "max_rotational_curvature": scan.max_rotational,
        "max_translational_curvature": scan.max_translational,
        "worst_pair": [names[i] for i in scan.worst_pair], "worst_shape": scan.worst_shape,
        "per_pair_max_rotational": scan.per_pair,
        "centroidal_frame": {"s": s, "F_staircase": itg.centroidal_frame(model, s),
                             "path_dependence": itg.path_dependence(model, s)},
    }
    poses = None
    if loop is not None:
        H = itg.holonomy(model, loop)
        poses = reconstruct(model, loop)
        report["holonomy"] = {"loop": args.loop, "samples": len(loop), "K_T": H,
                              "rotation_angle_deg": np.degrees(np.linalg.norm(log(H)[:3])),
                              "rotation_vector_deg": np.degrees(log(H)[:3]),
                              "translation_m": H[:3, 3]}
    out = opt.output_dir(args)
    write_json(out / "integrability.json", report)
    plot(names, scan, poses, out / "integrability.png")
    print_summary(report, out)


def print_summary(r, out):
    print(f"{r['model']}: {r['verdict']}")
    print(f"  max |rotational curvature| over {r['samples']} shapes: "
          f"{r['max_rotational_curvature']:.3g} rad/rad^2 (joints {', '.join(r['worst_pair'])}; "
          f"threshold {r['tol']:g}); translational {r['max_translational_curvature']:.3g}")
    cf = r["centroidal_frame"]
    print(f"  F(s) by the staircase (eqs. 26-28) vs the straight line: |log(F1^-1 F2)| = "
          f"{cf['path_dependence']:.3g}")
    if "holonomy" in r:
        h = r["holonomy"]
        print(f"  holonomy of {h['loop']}: C turns by {h['rotation_angle_deg']:.4f} deg relative "
              f"to the base, rotation vector {np.round(h['rotation_vector_deg'], 4)} deg")
    print(f"wrote {out / 'integrability.json'} and {out / 'integrability.png'}")


def plot(names, scan, poses, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2 if poses is not None else 1,
                             figsize=(12 if poses is not None else 6.5, 5), squeeze=False)
    ax = axes[0, 0]
    shown = np.log10(np.maximum(scan.per_pair, 1e-18))
    np.fill_diagonal(shown, np.nan)                       # DA_l(e_i) e_i = 0 (Corollary 2)
    im = ax.imshow(shown, cmap="magma")
    fig.colorbar(im, ax=ax, label="log10 max |rotational curvature| (rad/rad$^2$)")
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_title(("flat" if scan.flat else "not flat") + f": max {scan.max_rotational:.3g} "
                 f"over the sampled shapes")
    if poses is not None:
        bx = axes[0, 1]
        rot = np.degrees([log(np.linalg.inv(g))[:3] for g in poses])
        for j, name in enumerate("xyz"):
            bx.plot(rot[:, j], label=f"rotation vector {name}")
        bx.set_xlabel("sample along the loop")
        bx.set_ylabel("orientation of C relative to the base (deg)")
        bx.set_title("centroidal frame along the loop (holonomy at the end)")
        bx.legend()
        bx.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
