"""Controller III against controller II on the thesis' experiments ([Feurstein2021]; docs/explanation/hopper.md).

Controller III (polar spring on the orientation of the CoM frame aligned with the locked
velocity, eq. 4.26): the thesis gives results "for the first type of polar control only".
This runs every experiment that has a polar spring with both variants, same gains, same
initial state, and prints the table of docs/explanation/hopper.md; JSON in out/studies/hopper_variants.json.

    python studies/hopper_variants.py [--quick]
    python studies/hopper_variants.py --first-stance    # why controller III falls (Exp IV)
"""
import sys
import time
from pathlib import Path

from floating_base_control.results import write_json
from floating_base_control.experiments.hopper.report import summarize
import numpy as np

from floating_base_control.experiments.hopper.scenario import TIMESTEP, experiment, run

CASES = [("prismatic", "II"), ("prismatic", "III"), ("revolute", "II"), ("revolute", "III"),
         ("revolute", "IV"), ("revolute", "V"), ("revolute", "VI")]


def compare(quick=False):
    rows = []
    for robot, name in CASES:
        for variant in ("II", "III"):
            exp = experiment(robot, name, variant=variant)
            duration = min(exp.duration, 3.0) if quick else exp.duration
            t0 = time.perf_counter()
            s = summarize(exp, *run(exp, duration, log_every=100, loop_delay_s=0.0))
            s["wall_s"] = time.perf_counter() - t0
            rows.append(s)
            print(f"{robot} {name} {variant}: {s['duration_s']:.1f} s, fell={s['fell']}", file=sys.stderr)
    return rows


def table(rows):
    head = ("| robot | Exp | ctrl | fell at [s] | hops | 1st flight rot. [deg] | max later rot. [deg] "
            "| fwd speed [m/s] | ext. work [J] | joint work [J] | residual [J] |")
    lines = [head, "|" + "---|" * 11]
    for s in rows:
        rot = s["flight_rotations_deg"]
        later = max((abs(r) for r in rot[1:]), default=float("nan"))
        first = rot[0] if rot else float("nan")
        fell = f"{s['fell_at_s']:.2f}" if s["fell"] else f"no ({s['duration_s']:.0f} s)"
        lines.append(f"| {s['robot']} | {s['experiment']} | {s['variant']} | {fell} | {s['hops']} | "
                     f"{first:.1f} | {later:.1f} | {s['mean_forward_speed']:+.3f} | "
                     f"{s['energy_in_external_J']:.2f} | {s['energy_in_joint_J']:.2f} | "
                     f"{s['energy_balance_residual_J']:.1e} |")
    return "\n".join(lines)


def first_stance(name="IV", timestep=TIMESTEP):
    """Controller III against II through the first stance of the revolute Exp ``name``: the
    polar angle each controls, the leg's tilt ``alpha_i,cf``, the angular momentum about the
    CoM and the base torque, at touchdown, 1 ms after it, every 20 ms, at lift-off and 50 ms later."""
    for variant in ("II", "III"):
        exp = experiment("revolute", name, variant=variant)
        log, _, _ = run(exp, 0.6, timestep=timestep, log_every=1, loop_delay_s=0.0)
        a = log.arrays()
        t_td = log.touchdowns[0][0]
        t_lo = next((t for t, *_ in log.liftoffs if t > t_td), a["t"][-1])
        print(f"controller {variant}, Exp {name}, step {timestep * 1e3:g} ms: touchdown {t_td:.4f} s, "
              f"lift-off {t_lo:.4f} s, fell at {log.fell_at:.3f} s")
        print("| t - t_td [ms] | controlled angle [deg] | alpha_i,cf [deg] | L [1e-3 N m s] | base torque [N m] |")
        print("|---|---|---|---|---|")
        for t in [t_td, t_td + 0.001, *np.arange(t_td + 0.02, t_lo, 0.02), t_lo, min(t_lo + 0.05, a["t"][-1])]:
            i = int(np.searchsorted(a["t"], t))
            i = min(i, len(a["t"]) - 1)
            print(f"| {1e3 * (a['t'][i] - t_td):.1f} | {np.degrees(a['alpha'][i]):+.2f} | "
                  f"{np.degrees(a['alpha_cf'][i]):+.2f} | {1e3 * a['L'][i]:+.2f} | {a['base_torque'][i]:+.3f} |")


if __name__ == "__main__":
    if "--first-stance" in sys.argv:
        for step in (TIMESTEP, TIMESTEP / 4):
            first_stance(timestep=step)
        sys.exit()
    result = compare(quick="--quick" in sys.argv)
    out = Path("out/studies")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "hopper_variants.json", result)
    print(table(result))
