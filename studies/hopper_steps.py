"""Step convergence of the hopping experiments ([Feurstein2021]; docs/explanation/hopper.md, "Step convergence").

Runs every experiment of the thesis (prismatic I-III, revolute I-VI) for its full duration at
two MuJoCo steps (default: each experiment's own step and a 4x smaller one) under each
contact rule, and prints the table of docs/explanation/hopper.md: the verdict (falls or not, when), the
hop count, and the Exp VI energy figures.  Two runs at a time (``--jobs``); JSON in
out/studies/hopper_steps.json.

    python studies/hopper_steps.py [--steps 1e-4 2.5e-5] [--rules foot_height foot_force]
        [--only revolute-VI ...] [--set touchdown_force=1e-6 ...] [--jobs 2]

``--set`` changes gains of every run (e.g. the foot_force rule as a plain "force > 0" flag:
``touchdown_force=1e-6 liftoff_force=5e-7 min_phase_time=0``).
"""
import argparse
import json
import sys
import time
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

from floating_base_control.results import write_json
from floating_base_control.robots.hopper.contact import CONTACT_RULES
from floating_base_control.experiments.hopper.scenario import EXPERIMENTS, experiment, run
from floating_base_control.experiments.hopper.report import summarize

KEYS = ("fell", "fell_at_s", "hops", "mean_forward_speed", "max_flight_rotation_deg",
        "first_flight_rotation_deg", "flight_rotations_deg", "joint_work_full_J", "external_work_J",
        "radial_damping_J", "energy_out_touchdown_J", "energy_out_floor_J", "liftoff_spring_energy_J",
        "touchdown_angle_deg", "contact_episodes", "energy_balance_residual_J", "gait_second_half")


def one(case):
    robot, name, rule, step, changes = case
    exp = experiment(robot, name, contact_rule=rule)
    step = step * exp.timestep if step < 0 else step        # -f: f times the experiment's step
    exp = replace(exp, gains=replace(exp.gains, **changes))
    t0 = time.perf_counter()
    s = summarize(exp, *run(exp, timestep=step, log_every=max(1, round(1e-3 / step)), loop_delay_s=0.0))
    row = {"robot": robot, "experiment": name, "contact_rule": rule, "timestep_s": step, "changes": changes,
           "wall_s": time.perf_counter() - t0, **{k: s[k] for k in KEYS}}
    print(f"{robot} {name} {rule} {step:g}: fell={s['fell']} hops={s['hops']} "
          f"({row['wall_s']:.0f} s)", file=sys.stderr, flush=True)
    return row


def table(rows):
    lines = ["| robot | Exp | rule | step [ms] | fell at [s] | hops | fwd speed [m/s] | max later rot. [deg] "
             "| joint (full) [J] | external [J] | radial damping [J] | spring at lift-off [mJ] "
             "| touchdown angle [deg] |", "|" + "---|" * 13]
    for r in rows:
        fell = f"{r['fell_at_s']:.2f}" if r["fell"] else "no"
        later = max((abs(x) for x in r["flight_rotations_deg"][1:]), default=float("nan"))
        spring = r["liftoff_spring_energy_J"]
        td = r["touchdown_angle_deg"]
        lines.append(f"| {r['robot']} | {r['experiment']} | {r['contact_rule']} | {1e3 * r['timestep_s']:g} "
                     f"| {fell} | {r['hops']} | {r['mean_forward_speed']:+.3f} | {later:.1f} "
                     f"| {r['joint_work_full_J']:.2f} | {r['external_work_J']:.2f} | {r['radial_damping_J']:.2f} "
                     f"| {1e3 * spring if spring is not None else float('nan'):.0f} "
                     f"| {td if td is not None else float('nan'):+.1f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=float, nargs="+", default=[-1.0, -0.25],
                   help="steps, s; a negative -f is f times each experiment's step (default: 1 and 1/4)")
    p.add_argument("--rules", nargs="+", default=list(CONTACT_RULES), choices=CONTACT_RULES)
    p.add_argument("--only", nargs="+", help="robot-Exp, e.g. revolute-VI, run in this order")
    p.add_argument("--set", nargs="+", default=[], metavar="GAIN=VALUE")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="out/studies/hopper_steps.json")
    args = p.parse_args()
    changes = {k: float(v) for k, v in (kv.split("=") for kv in args.set)}
    names = args.only or [f"{robot}-{name}" for robot, table_ in EXPERIMENTS.items() for name in table_]
    cases = [(*key.split("-"), rule, step, changes) for key in names for rule in args.rules for step in args.steps]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with Pool(args.jobs) as pool, open(out.with_suffix(".jsonl"), "a") as log:
        for row in pool.imap(one, cases, chunksize=1):      # in the order asked, each row kept at once
            rows.append(row)
            log.write(json.dumps(row) + "\n")
            log.flush()
    rows.sort(key=lambda r: (r["robot"], r["experiment"], r["contact_rule"], -r["timestep_s"]))
    write_json(out, rows)
    print(table(rows))


if __name__ == "__main__":
    main()
