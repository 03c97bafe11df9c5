"""``fbc gait``: net base displacement of a closed gait, exact (eq. 9) and from curvature (eq. 11)."""
import numpy as np
from scipy.spatial.transform import Rotation

from floating_base_control.analysis.locomotion import (SEC_VB_PAPER, ccf_map, displacement_error, reconstruct,
                                                       stokes_estimate)
from floating_base_control.lie import log
from floating_base_control.results import pyplot, write_json
from floating_base_control.cli import _options as opt
from floating_base_control.cli._table import refuse

DESCRIPTION = """\
Net displacement of the floating base over a closed gait on a plane of shape space
([Mishra2023] Sec. V-B): exact, by integrating eq. 9 on SE(3) along the gait, and
estimated from the curvature of Theorem 2 integrated over the gait area in the
frame --frame (eq. 11, Algorithm 1 and Prop. 6).  Without --urdf, --x and --y this
is the paper's example: the LWR 4+ on a 3.5 kg base, joints 2-4, the circular gait
r_dot = pi/2 [sin(pi t), cos(pi t)]; the paper's numbers are printed next to ours.
Orientations are intrinsic XYZ Euler angles (R = Rx Ry Rz) in degrees."""


def register(sub):
    p = sub.add_parser("gait", help="net base displacement of a closed gait: exact and by "
                       "curvature ([Mishra2023] Sec. V-B)", description=DESCRIPTION)
    opt.add_model(p, "default: the LWR 4+ of [Mishra2023] Sec. V-B")
    opt.add_plane(p)
    opt.add_gait(p)
    p.add_argument("--mu", nargs=6, type=opt.finite_float, metavar="X",
                   help="also integrate eq. 9 with this constant locked velocity [omega; v] "
                        "(base frame, rad/s and m/s) over --period: geometric plus dynamic "
                        "phase.  The comparison with the estimate stays at mu = 0")
    opt.add_output(p, "gait")
    p.set_defaults(func=run)


def xyz_deg(g):
    """Intrinsic XYZ Euler angles (deg) of the rotation of a pose."""
    return Rotation.from_matrix(g[:3, :3]).as_euler("XYZ", degrees=True)


def pose_report(g):
    return {"pose": g, "xyz_deg": xyz_deg(g), "rotation_vector_deg": np.degrees(log(g)[:3]),
            "translation_m": g[:3, 3]}


CHECKS = opt.gait_checks(lambda a: None if a.mu is not None else
                         "applies with --mu (the gait's timing matters only to the dynamic phase)")


def run(args):
    refuse(CHECKS, args)
    model = opt.load_model(args)
    gait = opt.gait(model, args)
    mu = None if args.mu is None else np.array(args.mu)
    poses = reconstruct(model, gait.qs)
    poses_mu = None if mu is None else reconstruct(model, gait.qs, mu, gait.t)
    est = stokes_estimate(model, gait, args.frame)
    dg = poses[-1]
    angle = np.degrees(np.linalg.norm(log(np.linalg.solve(dg, est.dg))[:3]))
    report = {
        "model": model.source, "joints": model.joint_names, "frame": args.frame,
        "gait": {"Psi": gait.Psi, "q_c": gait.q_c, "samples": len(gait.r) - 1,
                 "signed_area_rad2": gait.signed_area, "start_r": gait.r[0],
                 "mu": mu, "period_s": None if gait.t is None else gait.t[-1]},
        "exact": pose_report(dg),                       # mu = 0: the geometric phase
        "estimate": dict(pose_report(est.dg), zeta_in_frame=est.zeta, g_1c=est.g_1c),
        "error_metric": displacement_error(dg, est.dg),
        "orientation_error_deg": angle,
    }
    if poses_mu is not None:
        report["exact_with_mu"] = pose_report(poses_mu[-1])
    if opt.is_sec_vb(args):
        report["paper_sec_vb"] = SEC_VB_PAPER
    out = opt.output_dir(args)
    write_json(out / "gait.json", report)
    plot(model, gait, poses, poses_mu, est, args.frame, out / "gait.png")
    print_summary(report, out)


def print_summary(r, out):
    fmt = lambda v: "(" + ", ".join(f"{x:8.4f}" for x in v) + ")"   # noqa: E731
    print(f"gait of {len(r['gait']['Psi'])} joints, area {r['gait']['signed_area_rad2']:.4f} rad^2 "
          f"(negative: clockwise), curvature frame: {r['frame']}")
    print(f"  exact     final base orientation XYZ {fmt(r['exact']['xyz_deg'])} deg, "
          f"translation {fmt(r['exact']['translation_m'])} m")
    print(f"  estimated final base orientation XYZ {fmt(r['estimate']['xyz_deg'])} deg, "
          f"translation {fmt(r['estimate']['translation_m'])} m")
    print(f"  |log(dg^-1 dg_hat)| = {r['error_metric']:.4f}, orientation error "
          f"{r['orientation_error_deg']:.4f} deg")
    if "exact_with_mu" in r:
        print(f"  with mu = {np.round(r['gait']['mu'], 6).tolist()}: final base orientation XYZ "
              f"{fmt(r['exact_with_mu']['xyz_deg'])} deg, translation "
              f"{fmt(r['exact_with_mu']['translation_m'])} m (geometric + dynamic phase)")
    if "paper_sec_vb" in r:
        p = r["paper_sec_vb"]
        print(f"  paper (DLR's LWR 4+ model): exact {fmt(p['exact_xyz_deg'])}, estimated "
              f"{fmt(p['estimate_xyz_deg'])} deg, error {p['error_metric']}, orientation error "
              f"{p['orientation_error_deg']} deg")
    print(f"wrote {out / 'gait.json'} and {out / 'gait.png'}")


def plot(model, gait, poses, poses_mu, est, frame, path, grid=31):
    plt = pyplot()
    lo, hi = gait.r.min(axis=0), gait.r.max(axis=0)
    pad = 0.1 * (hi - lo).max()
    r1, r2 = np.linspace(lo[0] - pad, hi[0] + pad, grid), np.linspace(lo[1] - pad, hi[1] + pad, grid)
    k = int(np.argmax(np.abs(est.zeta[:3])))
    ccf = ccf_map(model, gait.Psi, r1, r2, gait.q_c, frame)[k]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 5))
    lim = np.abs(ccf).max()
    cs = ax.contourf(r1, r2, ccf, 21, cmap="RdBu_r", vmin=-lim, vmax=lim)
    fig.colorbar(cs, ax=ax, label=f"CCF, rotation about axis {'xyz'[k]} of {{{frame}}} (rad/rad$^2$)")
    ax.plot(gait.r[:, 0], gait.r[:, 1], "b-", lw=2, label="gait")
    ax.plot(*gait.r[0], "go", ms=8, label="start")
    i = len(gait.r) // 8
    ax.annotate("", gait.r[i + 1], gait.r[i], arrowprops={"arrowstyle": "->", "color": "b", "lw": 2})
    ax.set_xlabel("$r_1$ (rad)")
    ax.set_ylabel("$r_2$ (rad)")
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title("gait over the constraint curvature function (Algorithm 1)")
    t = gait.t if gait.t is not None else np.linspace(0.0, 1.0, len(poses))
    angles = np.array([xyz_deg(g) for g in poses])
    final = xyz_deg(est.dg)
    angles_mu = None if poses_mu is None else np.array([xyz_deg(g) for g in poses_mu])
    for j, (name, color) in enumerate(zip("XYZ", ("C0", "C1", "C2"))):
        bx.plot(t, angles[:, j], color=color, label=f"{name} (eq. 9, exact, mu = 0)")
        if angles_mu is not None:
            bx.plot(t, angles_mu[:, j], ":", color=color, label=f"{name} (eq. 9 with --mu)")
        bx.axhline(final[j], color=color, ls="--", lw=1, label=f"{name} final, Stokes estimate (eq. 11)")
    bx.set_xlabel("time (s)" if gait.t is not None else "fraction of the gait")
    bx.set_ylabel("base orientation, intrinsic XYZ Euler angles (deg)")
    bx.legend(fontsize=8)
    bx.grid(alpha=0.3)
    bx.set_title("base orientation along the gait")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
