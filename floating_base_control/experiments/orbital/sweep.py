"""Robustness sweep of the orbital scenario: pose rate, pose noise, latency, model error.

Every run is the default 30 s scenario with one thing changed; runs go in
parallel (one process per core).  A diverging run is stopped by the runner
and shows up as such in the table, never silently.
"""
import os
from dataclasses import replace
from multiprocessing import Pool

from floating_base_control.experiments.orbital.scenario import OrbitalScenario, run

NOISE_MRAD_MM = 1e-3


def cases(duration_s=30.0):
    """``[(label, scenario)]``: the default, each compensation, and one parameter at a time."""
    base = OrbitalScenario(duration_s=duration_s)
    out = [(f"compensation {c}", replace(base, compensation=c)) for c in ("tau2", "tau1", "none", "truth")]
    out += [(f"pose rate {r:g} Hz", replace(base, pose_rate_hz=r)) for r in (1, 2, 5, 20, 50, 100)]
    out += [(f"pose noise x{k:g}", replace(base, pose_rotation_noise=k * NOISE_MRAD_MM,
                                           pose_position_noise=k * NOISE_MRAD_MM)) for k in (0, 3, 10)]
    out += [(f"latency {lat * 1e3:g} ms", replace(base, pose_latency_s=lat)) for lat in (0.0, 0.1)]
    out += [(f"spacecraft mass/inertia {e:+.0%}", replace(base, model_mass_error=e)) for e in (-0.05, 0.05)]
    return out


def _run(case):
    label, scenario = case
    return label, run(scenario)[1]


def sweep(duration_s=30.0, processes=None, progress=None):
    """Run all :func:`cases`; returns ``[(label, summary)]`` in order.  ``progress(runs done)`` after each."""
    results = []
    with Pool(processes or os.cpu_count()) as pool:
        for result in pool.imap(_run, cases(duration_s)):
            results.append(result)
            if progress is not None:
                progress(len(results))
    return results


def markdown_table(results):
    s0, limits = results[0][1]["scenario_parameters"], results[0][1]["convergence_thresholds"]
    lines = [
        f"Default: {s0['duration_s']:g} s, compensation tau2, pose {s0['pose_rate_hz']:g} Hz with "
        f"{s0['pose_rotation_noise'] * 1e3:g} mrad / {s0['pose_position_noise'] * 1e3:g} mm noise and "
        f"{s0['pose_latency_s'] * 1e3:g} ms latency, joint-rate noise {s0['qdot_noise']:g} rad/s, "
        f"mu_omega(0) = {list(s0['mu0_omega_deg_s'])} deg/s. Final values are means over the last second. "
        f"Converged: joint error < {limits['joint_error_deg']} deg, observer attitude error < "
        f"{limits['observer_attitude_error_rad']:.3g} rad and position error < "
        f"{limits['observer_position_error_m']:.3g} m (and velocity errors; thresholds scale with each "
        f"row's noise: `experiments/orbital/verdicts.py`).",
        "",
        "| case | final joint error [deg] | observer pose error | observer velocity error | "
        "momentum drift | status | converged |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, s in results:
        lines.append(f"| {label} | {s['final_joint_error_deg']:.4f} | {s['final_observer_pose_error']:.2e} | "
                     f"{s['final_observer_velocity_error']:.2e} | {s['momentum_drift_rel']:.1e} | "
                     f"{s['status']} | {'yes' if s['converged'] else 'no'} |")
    return "\n".join(lines) + "\n"
