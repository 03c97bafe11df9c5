"""Is revolute Exp III's fall time chaotic?  ([Feurstein2021]; docs/explanation/hopper.md, "Step convergence")

Revolute Exp III (controller II, energy control, no flight damping) falls at the default step
and at a 4x smaller one, after a different number of hops.  This study runs it

* at a fixed step (``--at``, default the experiments' ``TIMESTEP``), from the thesis' initial
  state with the base angle moved by ``k * 1e-9`` rad (``--perturb``), and
* unperturbed at the steps ``--steps`` (halving),

and prints the fall time and the hop count of each run (JSON in out/studies/hopper_chaos.json).
If 1e-9 rad moves the fall by whole hops, the hop count before the fall is not a property of the
experiment, only the fall is.

    python studies/hopper_chaos.py [--experiment III] [--perturb -3 -2 -1 1 2 3]
        [--at 1e-4] [--steps 1e-4 5e-5 2.5e-5 1.25e-5] [--jobs 2]
"""
import argparse
import json
import sys
import time
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

from floating_base_control.results import write_json
from floating_base_control.experiments.hopper.scenario import TIMESTEP, experiment, run
from floating_base_control.experiments.hopper.report import summarize

#: size of one initial-angle perturbation, rad
PERTURBATION = 1e-9


def one(case):
    name, variant, k, step = case
    exp = experiment("revolute", name, variant=variant)
    exp = replace(exp, tilt=exp.tilt + k * PERTURBATION)
    t0 = time.perf_counter()
    s = summarize(exp, *run(exp, timestep=step, log_every=max(1, round(1e-3 / step)), loop_delay_s=0.0))
    row = {"experiment": name, "variant": exp.gains.variant, "tilt_rad": k * PERTURBATION, "timestep_s": step,
           "fell": s["fell"], "fell_at_s": s["fell_at_s"], "hops": s["hops"],
           "wall_s": round(time.perf_counter() - t0, 1)}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiment", default="III")
    p.add_argument("--variant", default=None)
    p.add_argument("--perturb", type=int, nargs="*", default=[-3, -2, -1, 1, 2, 3])
    p.add_argument("--steps", type=float, nargs="*", default=[TIMESTEP, TIMESTEP / 2, TIMESTEP / 4, TIMESTEP / 8])
    p.add_argument("--at", type=float, default=TIMESTEP, help="step of the perturbed runs, s")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="out/studies/hopper_chaos.json")
    args = p.parse_args()
    cases = ([(args.experiment, args.variant, 0, step) for step in args.steps]
             + [(args.experiment, args.variant, k, args.at) for k in args.perturb])
    with Pool(args.jobs) as pool:
        rows = pool.map(one, cases, chunksize=1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, rows)
    print("| tilt [rad] | step [ms] | falls at [s] | hops before |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['tilt_rad']:+.0e} | {1e3 * r['timestep_s']:g} | "
              f"{r['fell_at_s'] if r['fell'] else 'no'} | {r['hops']} |")


if __name__ == "__main__":
    main()
