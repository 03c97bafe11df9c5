"""Plots of an orbital run (``summary.json`` and ``timeseries.csv`` are written by ``results.py``).

The orbital plots follow [Mishra2023] Fig. 6: (A) the Lyapunov candidate ``W``
(eq. 53) and the shape kinetic energy ``W3``; (B) ``|tau_hat_1|`` against
``|tau_hat_2|``; plus the joint error, the observer errors and the momentum of
the simulated robot (MuJoCo's, not the controller's model).
"""
from pathlib import Path

import numpy as np

from floating_base_control.results import pyplot


def printed_figures(summary, keys):
    """The figures a demo prints: ``keys`` of ``summary``; where the base translation is unobservable (an
    attitude-only pose source), the observer's figures that mix it in (``final_observer_pose_error``,
    ``..._velocity_error``) are replaced by their observable parts, and the rest is named unobservable."""
    unobservable = summary.get("unobservable") or []
    replaced = {"final_observer_pose_error": "final_observer_attitude_error_rad",
                "final_observer_velocity_error": "final_observer_angular_velocity_error_rad_s"}
    shown = {}
    for key in keys:
        if unobservable and key in replaced:
            shown[replaced[key]] = summary[replaced[key]]
            if key == "final_observer_velocity_error":
                shown["unobservable"] = (f"{' and '.join(unobservable)}: the pose source gives the attitude only, "
                                         "so the observer cannot estimate them and the verdict does not judge them")
        elif key not in shown:
            shown[key] = summary[key]
    return shown


def verdict_text(summary):
    """One phrase: converged, or why not."""
    if summary["status"] != "completed":
        return summary["status"]
    judged = [k for k, v in summary["verdicts"].items() if v is not None]
    failed = [k for k in judged if not summary["verdicts"][k]]
    text = "converged" if summary["converged"] else f"not converged ({', '.join(failed) or 'cut short'})"
    return text + (f"; {' and '.join(summary['unobservable'])} unobservable" if summary.get("unobservable") else "")


def plot_orbital(out_dir, log, summary):
    """``fig6_convergence.png`` (W, W3; |tau_hat_i|) and ``errors.png`` (joint, observer, momentum).  With an
    attitude-only pose source, ``W`` is shown without the base translation's terms and the translation's
    observer errors in a panel of their own, labelled unobservable (they are not estimated)."""
    plt = pyplot()
    out_dir = Path(out_dir)
    t = log["t"]
    unobservable = bool(summary.get("unobservable"))
    title = (f"{summary['scenario']}: compensation {summary['compensation']}, pose {summary['pose_rate_hz']:g} Hz"
             f"{' (attitude only)' if unobservable else ''}")
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    if unobservable:
        a.semilogy(t, log["W_rotation"], label="W (eq. 53) without the base translation's terms, which an "
                                               "attitude-only sensor leaves unobservable")
    else:
        a.semilogy(t, log["W"], label="W (Lyapunov candidate, eq. 53)")
    a.semilogy(t, log["W3"], label="W3 (shape kinetic energy)")
    a.set_ylabel("energy [J]")
    a.set_title(f"A: convergence (Lemma 11) - {title}\n{verdict_text(summary)}", fontsize=10)
    a.legend(fontsize=8)
    b.plot(t, log["tau_hat_1_norm"], label=r"$|\hat\tau_1|$ (depends on $\mu$ and $\dot q$)", lw=0.8)
    b.plot(t, log["tau_hat_2_norm"], label=r"$|\hat\tau_2|$ (depends on $\mu$ only)", lw=1.5)
    b.set_ylabel("compensation torque norm [N m]")
    b.set_xlabel("time [s]")
    b.set_title(f"B: eq. 45 variants (total-variation ratio {summary['tau_hat_total_variation_ratio']:.1f})")
    b.legend()
    _save(fig, out_dir / "fig6_convergence.png")

    panels = 4 if unobservable else 3
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3 * panels), sharex=True)
    a, b, c = axes[0], axes[1], axes[-1]
    a.semilogy(t, np.maximum(log["dq_norm_deg"], 1e-6))
    a.axhline(0.1, color="gray", ls=":", label="0.1 deg")
    a.set_ylabel(r"joint error $|q - q_d|$ [deg]")
    a.set_title(f"{title}\n{verdict_text(summary)}", fontsize=10)
    a.legend()
    if unobservable:
        limits = summary["convergence_thresholds"]
        b.semilogy(t, log["eps_rot_norm"], label="attitude error [rad]")
        b.semilogy(t, log["mu_e_omega_norm"], label="angular velocity error [rad/s]")
        b.axhline(limits["observer_attitude_error_rad"], color="C0", ls=":", lw=0.8, label="convergence thresholds")
        b.axhline(limits["observer_angular_velocity_error_rad_s"], color="C1", ls=":", lw=0.8)
        b.set_ylabel("observer error")
        b.set_title("observable: the base attitude and angular velocity")
        b.legend(fontsize=8)
        u = axes[2]
        u.plot(t, log["eps_pos_norm"], color="gray", label="position error [m]")
        u.plot(t, log["mu_e_v_norm"], color="gray", ls="--", label="linear velocity error [m/s]")
        u.set_ylabel("error of what is not estimated")
        u.set_title("unobservable with an attitude-only sensor: the base position and linear velocity\n(not "
                    "estimated, so not converging; not judged; tau_hat_2 does not need them)", fontsize=9)
        u.legend(fontsize=8)
    else:
        b.semilogy(t, log["eps_norm"], label=r"pose error $|\epsilon|$ [rad, m]")
        b.semilogy(t, log["mu_e_norm"], label=r"velocity error $|\mu_e|$ [rad/s, m/s]")
        b.set_ylabel("observer error")
        b.legend()
    J0 = np.asarray(summary["initial_momentum"])
    drift = np.abs(log["momentum"] - J0).max(axis=1) / np.abs(J0).max()
    c.semilogy(t, np.maximum(drift, 1e-17))
    c.set_ylabel("momentum drift (relative)")
    c.set_xlabel("time [s]")
    c.set_title("total momentum of the simulated robot (MuJoCo)")
    _save(fig, out_dir / "errors.png")


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
