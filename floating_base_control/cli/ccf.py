"""``fbc ccf``: Algorithm 1 of [Mishra2023], the CCF surface map of a gait plane (Fig. 8)."""
import numpy as np

from floating_base_control.analysis.locomotion import ccf_map, ccf_volume, stokes_estimate
from floating_base_control.validation import InputError
from floating_base_control.results import pyplot, write_json
from floating_base_control.cli import _options as opt
from floating_base_control.cli._table import refuse

DESCRIPTION = """\
Constraint curvature function (CCF) surface maps, [Mishra2023] Algorithm 1: the local
curvature DA_l(q, e1) e2 of Theorem 2 over a grid of a 2-D plane of shape space,
q = q_c + Psi r, expressed in the frame --frame (Prop. 6).  A gait overlaid on the
map gives zeta of eq. 11 as the volume under the map (Appendix C2).  Without --urdf,
--x and --y this is Fig. 8: the LWR 4+ of Sec. V-B, joints 2-4, 30 x 30 grid."""

COMPONENTS = ("rotation x", "rotation y", "rotation z", "translation x", "translation y",
              "translation z")


def register(sub):
    p = sub.add_parser("ccf", help="CCF surface maps of a gait plane ([Mishra2023] Algorithm 1)",
                       description=DESCRIPTION)
    opt.add_model(p, "default: the LWR 4+ of [Mishra2023] Sec. V-B")
    opt.add_plane(p)
    opt.add_gait(p)
    p.add_argument("--grid", type=opt.number(int, 2), default=30, help="grid points per axis (default 30)")
    p.add_argument("--range", nargs=4, type=opt.finite_float,
                   metavar=("R1MIN", "R1MAX", "R2MIN", "R2MAX"),
                   help="grid extent in gait coordinates, rad (default: the gait's bounding box "
                        "plus 10%%, or [-1, 1] x [-1, 1] without a gait)")
    opt.add_output(p, "ccf")
    p.set_defaults(func=run)


def grid_axes(args, gait):
    if args.range is not None:
        a, b, c, d = args.range
        if not (a < b and c < d):
            raise InputError(f"--range must be increasing: R1MIN < R1MAX and R2MIN < R2MAX, "
                             f"got {args.range}")
    elif gait is not None:
        lo, hi = gait.r.min(axis=0), gait.r.max(axis=0)
        pad = 0.1 * (hi - lo).max()
        a, b, c, d = lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad
    else:
        a, b, c, d = -1.0, 1.0, -1.0, 1.0
    return np.linspace(a, b, args.grid), np.linspace(c, d, args.grid)


CHECKS = opt.gait_checks(lambda a: "the CCF map has no time: the gait's period changes nothing")


def run(args):
    refuse(CHECKS, args)
    model = opt.load_model(args)
    Psi, q_c = opt.plane(model, args)
    gait = opt.gait(model, args, required=False)
    r1, r2 = grid_axes(args, gait)
    ccf = ccf_map(model, Psi, r1, r2, q_c, args.frame)
    report = {"model": model.source, "joints": model.joint_names, "frame": args.frame,
              "Psi": Psi, "q_c": q_c, "r1": r1, "r2": r2, "components": COMPONENTS,
              "units": "rad/rad^2 (rotations), m/rad^2 (translations), for revolute joints",
              "ccf": ccf, "max_abs": np.abs(ccf).max(axis=(1, 2))}
    if gait is not None:
        report["gait_r"] = gait.r
        report["zeta_from_map"] = ccf_volume(r1, r2, ccf, gait.r)
        report["zeta_from_curvature"] = stokes_estimate(model, gait, args.frame).zeta
    out = opt.output_dir(args)
    write_json(out / "ccf.json", report)
    plot(r1, r2, ccf, gait, args.frame, out / "ccf.png")
    print(f"CCF of {model.source} on a {args.grid} x {args.grid} grid, frame {args.frame}; "
          f"max |CCF| per component: {np.array2string(report['max_abs'], precision=4)}")
    if gait is not None:
        print(f"  zeta (eq. 11) from the map: {np.array2string(report['zeta_from_map'], precision=5)}"
              f"\n  zeta from the curvature:    "
              f"{np.array2string(report['zeta_from_curvature'], precision=5)}")
    print(f"wrote {out / 'ccf.json'} and {out / 'ccf.png'}")


def plot(r1, r2, ccf, gait, frame, path):
    from scipy.interpolate import RegularGridInterpolator
    plt = pyplot()
    shown = range(3) if frame == "chassis" else range(6)
    fig = plt.figure(figsize=(5 * min(len(shown), 3), 4.5 * (len(shown) // 3)))
    R1, R2 = np.meshgrid(r1, r2)
    for panel, k in enumerate(shown):
        ax = fig.add_subplot(len(shown) // 3, 3, panel + 1, projection="3d")
        ax.plot_surface(R1, R2, ccf[k], cmap="viridis", alpha=0.8, linewidth=0)
        if gait is not None:
            z = RegularGridInterpolator((r2, r1), ccf[k])(gait.r[:, ::-1])
            ax.plot(gait.r[:, 0], gait.r[:, 1], z, "b-", lw=2)
        ax.set_xlabel("$r_1$ (rad)")
        ax.set_ylabel("$r_2$ (rad)")
        unit = "rad/rad$^2$" if k < 3 else "m/rad$^2$"
        ax.set_zlabel(f"CCF ({unit})", labelpad=14)
        ax.tick_params(axis="z", pad=6, labelsize=8)
        ax.set_title(f"k = {k + 1}: {COMPONENTS[k]} of {{{frame}}}")
    fig.suptitle("Constraint curvature function ([Mishra2023] Algorithm 1)" +
                 (", gait in blue" if gait is not None else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
