"""Plots of an orbital run (``summary.json`` and ``timeseries.csv`` are written by ``results.py``).

The orbital plots follow [Mishra2023] Fig. 6: (A) the Lyapunov candidate ``W``
(eq. 53) and the shape kinetic energy ``W3``; (B) ``|tau_hat_1|`` against
``|tau_hat_2|``; plus the joint error, the observer errors and the momentum of
the simulated robot (MuJoCo's, not the controller's model).
"""
from pathlib import Path

import numpy as np

from floating_base_control.results import pyplot


def plot_orbital(out_dir, log, summary):
    """``fig6_convergence.png`` (W, W3; |tau_hat_i|) and ``errors.png`` (joint, observer, momentum)."""
    plt = pyplot()
    out_dir = Path(out_dir)
    t = log["t"]
    title = f"{summary['scenario']}: compensation {summary['compensation']}, pose {summary['pose_rate_hz']:g} Hz"
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    a.semilogy(t, log["W"], label="W (Lyapunov candidate, eq. 53)")
    a.semilogy(t, log["W3"], label="W3 (shape kinetic energy)")
    a.set_ylabel("energy [J]")
    a.set_title(f"A: convergence (Lemma 11) - {title}")
    a.legend()
    b.plot(t, log["tau_hat_1_norm"], label=r"$|\hat\tau_1|$ (depends on $\mu$ and $\dot q$)", lw=0.8)
    b.plot(t, log["tau_hat_2_norm"], label=r"$|\hat\tau_2|$ (depends on $\mu$ only)", lw=1.5)
    b.set_ylabel("compensation torque norm [N m]")
    b.set_xlabel("time [s]")
    b.set_title(f"B: eq. 45 variants (total-variation ratio {summary['tau_hat_total_variation_ratio']:.1f})")
    b.legend()
    _save(fig, out_dir / "fig6_convergence.png")

    fig, (a, b, c) = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    a.semilogy(t, np.maximum(log["dq_norm_deg"], 1e-6))
    a.axhline(0.1, color="gray", ls=":", label="0.1 deg")
    a.set_ylabel(r"joint error $|q - q_d|$ [deg]")
    a.set_title(title)
    a.legend()
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
