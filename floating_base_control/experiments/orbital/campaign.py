"""Monte Carlo campaigns of the orbital scenario: dispersed runs, one row each, percentiles per controller.

The engine is Dask distributed (``cli/campaign.py``); this module holds what
does not depend on it: the seed of each run, one run as a row, the table of
finished rows on disk (so that an interrupted campaign resumes), the
percentiles of ``campaign.json`` and the CDF plots.

Run ``i`` of a campaign with seed ``S`` has its own seed :func:`run_seed` ``(S, i)``,
from which every dispersion is drawn (``experiments/orbital/realistic.py``); every
controller meets the same dispersed runs.  A row is a deterministic function of
``(scenario, run seed, controller, duration, pose_position)``: re-running it
alone (:func:`campaign_row`, or ``fbc demo orbital --scenario realistic --seed
<run seed> --controller C``) reproduces it exactly.
"""
import json
import time
from pathlib import Path

import numpy as np

from floating_base_control.control.setpoint import controller_options
from floating_base_control.results import plain, pyplot
from floating_base_control.validation import InputError

SCENARIOS = ("ideal", "realistic")
#: Integral time of the controllers with integral action (``K_i = K / T_i``).
INTEGRAL_TIME_S = 2.0
PERCENTILES = (50, 90, 99)


def run_seed(seed, index):
    """The seed of run ``index`` of a campaign of seed ``seed`` (independent streams per run)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def campaign_scenario(scenario, seed, controller, duration_s=None, pose_position=None):
    """The :class:`~.scenario.OrbitalScenario` of one run (``pose_position=None``: the scenario's default,
    attitude only for the realistic one)."""
    from floating_base_control.experiments.orbital.realistic import realistic_scenario
    from floating_base_control.experiments.orbital.scenario import OrbitalScenario

    compensation, integral = controller_options(controller)
    options = dict(compensation=compensation, integral_time_s=INTEGRAL_TIME_S if integral else 0.0)
    if duration_s is not None:
        options["duration_s"] = duration_s
    if pose_position is not None:
        options["pose_position"] = pose_position
    if scenario == "realistic":
        return realistic_scenario(seed, **options)
    if scenario == "ideal":
        return OrbitalScenario(seed=seed, **options)
    raise InputError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")


def campaign_row(scenario, index, seed, controller, duration_s=None, pose_position=None):
    """Run ``index`` (seed ``seed``) with ``controller``; returns ``(row, {"wall_s", "cpu_s"})``."""
    import warnings
    from floating_base_control.experiments.orbital.scenario import run

    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, s = run(campaign_scenario(scenario, seed, controller, duration_s, pose_position))
    row = {"run": index, "seed": seed, "controller": controller, "status": s["status"],
           "converged": s["converged"], "final_joint_error_deg": s["final_joint_error_deg"],
           "observer_attitude_error_rad": s["final_observer_attitude_error_rad"],
           "observer_angular_velocity_error_rad_s": s["final_observer_angular_velocity_error_rad_s"],
           "position_limit_overrun_rad": s["max_position_limit_overrun_rad"],
           "velocity_limit_overrun_rad_s": s["max_velocity_limit_overrun_rad_s"],
           "max_velocity_limit_ratio": max(s["max_velocity_limit_ratio"]),
           "min_position_limit_margin_rad": min(s["min_position_limit_margin_rad"]),
           "torque_saturated_fraction": s["torque_saturated_fraction"],
           "mu0_omega_deg_s": list(s["scenario_parameters"]["mu0_omega_deg_s"])}
    return plain(row), {"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}


class RowStore:
    """``runs.jsonl`` (one row per line, appended as runs finish) and ``timing.jsonl`` in ``out``, with
    ``config.json``: an existing directory resumes the same campaign and refuses a different one."""

    def __init__(self, out, config):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "config.json"
        if path.exists():
            old = json.loads(path.read_text())
            if old != config:
                raise InputError(f"{self.out} holds another campaign ({old}); use another --out")
        else:
            path.write_text(json.dumps(config, indent=2))
        self.runs, self.timing = self.out / "runs.jsonl", self.out / "timing.jsonl"

    def rows(self):
        if not self.runs.exists():
            return []
        return [json.loads(line) for line in self.runs.read_text().splitlines() if line.strip()]

    def done(self):
        return {(r["run"], r["controller"]) for r in self.rows()}

    def append(self, row, timing):
        with open(self.runs, "a") as f:
            f.write(json.dumps(plain(row), allow_nan=False) + "\n")
        with open(self.timing, "a") as f:
            f.write(json.dumps({"run": row["run"], "controller": row["controller"], **timing}) + "\n")

    def mean_timing(self):
        """Mean ``wall_s`` and ``cpu_s`` per run over ``timing.jsonl`` (None before the first run)."""
        if not self.timing.exists():
            return None
        lines = [json.loads(line) for line in self.timing.read_text().splitlines() if line.strip()]
        return {k: float(np.mean([t[k] for t in lines if k in t])) for k in ("wall_s", "cpu_s")
                if any(k in t for t in lines)} or None


def percentiles(values):
    values = np.asarray(values, dtype=float)
    out = {f"p{p}": float(np.percentile(values, p)) for p in PERCENTILES}
    out["max"] = float(values.max())
    return out


def summarize_campaign(rows, runs, scenario, seed, controllers):
    """``campaign.json``: per controller, the count of runs, the converged fraction, percentiles of the final
    joint error and of the observer's attitude error, and the worst limit overruns."""
    table = {}
    for c in controllers:
        mine = [r for r in rows if r["controller"] == c]
        if not mine:
            continue
        table[c] = {
            "runs": len(mine),
            "converged_fraction": float(np.mean([r["converged"] for r in mine])),
            "final_joint_error_deg": percentiles([r["final_joint_error_deg"] for r in mine]),
            "observer_attitude_error_rad": percentiles([r["observer_attitude_error_rad"] for r in mine]),
            "limit_overrun": {"position_rad_max": max(r["position_limit_overrun_rad"] for r in mine),
                              "velocity_rad_s_max": max(r["velocity_limit_overrun_rad_s"] for r in mine)},
            "worst_limit_overrun": percentiles([max(r["position_limit_overrun_rad"],
                                                    r["velocity_limit_overrun_rad_s"]) for r in mine]),
            "max_velocity_limit_ratio": max(r["max_velocity_limit_ratio"] for r in mine),
        }
    return {"runs": runs, "scenario": scenario, "seed": seed, "controllers": table}


def markdown_table(campaign):
    """The campaign's percentiles as a Markdown table (for docs)."""
    lines = ["| controller | runs | converged | final joint error p50 / p90 / p99 / max [deg] | "
             "observer attitude error p50 / max [rad] | position / velocity limit overrun max |",
             "|---|---|---|---|---|---|"]
    for c, s in campaign["controllers"].items():
        e, a, o = s["final_joint_error_deg"], s["observer_attitude_error_rad"], s["limit_overrun"]
        lines.append(f"| {c} | {s['runs']} | {100 * s['converged_fraction']:.0f} % | {e['p50']:.3g} / {e['p90']:.3g} / "
                     f"{e['p99']:.3g} / {e['max']:.3g} | {a['p50']:.2g} / {a['max']:.2g} | "
                     f"{o['position_rad_max']:.3g} rad / {o['velocity_rad_s_max']:.3g} rad/s |")
    return "\n".join(lines) + "\n"


def plot_cdfs(out, rows, controllers, threshold_deg=0.1):
    """``cdf_final_joint_error.png`` (all controllers) and ``cdf_<controller>.png`` (one each)."""
    plt = pyplot()
    out = Path(out)
    files = []
    series = {c: np.sort([r["final_joint_error_deg"] for r in rows if r["controller"] == c]) for c in controllers}
    series = {c: v for c, v in series.items() if v.size}
    for name, chosen in [("final_joint_error", list(series))] + [(c, [c]) for c in series]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for c in chosen:
            v = series[c]
            ax.step(np.maximum(v, 1e-6), np.arange(1, v.size + 1) / v.size, where="post", label=f"{c} ({v.size} runs)")
        ax.axvline(threshold_deg, color="gray", ls=":", label=f"{threshold_deg:g} deg")
        ax.set_xscale("log")
        ax.set_xlabel("final joint error [deg] (mean over the last second)")
        ax.set_ylabel("fraction of runs")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = out / f"cdf_{name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path.name)
    return files
