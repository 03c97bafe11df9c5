"""Controller III against controller II on the thesis' experiments (seed 003; docs/HOPPER.md).

Controller III (polar spring on the orientation of the CoM frame aligned with the locked
velocity, eq. 4.26): the thesis gives results "for the first type of polar control only".
This runs every experiment that has a polar spring with both variants, same gains, same
initial state, and prints the table of docs/HOPPER.md; JSON in out/studies/hopper_variants.json.

    python studies/hopper_variants.py [--quick]
"""
import sys
import time
from pathlib import Path

from floating_base_control.results import write_json
from floating_base_control.hopper.report import summarize
from floating_base_control.hopper.experiments import experiment, run

CASES = [("prismatic", "II"), ("prismatic", "III"), ("revolute", "II"), ("revolute", "III"),
         ("revolute", "IV"), ("revolute", "V"), ("revolute", "VI")]


def compare(quick=False):
    rows = []
    for robot, name in CASES:
        for variant in ("II", "III"):
            exp = experiment(robot, name, variant=variant)
            duration = min(exp.duration, 3.0) if quick else exp.duration
            t0 = time.perf_counter()
            s = summarize(exp, *run(exp, duration, log_every=100))
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


if __name__ == "__main__":
    result = compare(quick="--quick" in sys.argv)
    out = Path("out/studies")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "hopper_variants.json", result)
    print(table(result))
