"""Fig. 4.7 of [Feurstein2021]: the angular momentum after the first lift-off against the initial knee
angle (docs/explanation/hopper.md, "Fig. 4.7").

The thesis' tuning method: the CoM-foot line vertical (``alpha = 0``), the base at 0.3 m, the
initial knee angle ``q1`` swept; it finds the minimum of the lift-off angular momentum at
``q1 = 102 deg`` (1.7802 rad) and uses that in every experiment.  ``r_des`` is the initial
CoM-foot distance and ``E_des`` the initial energy.  Two controllers: radial spring only
(Exp I's, which acts the same in stance and flight, so no contact rule enters) and Exp IV's
(polar spring in stance, damper in flight: ``--rule`` decides the phases).  Each at two steps;
the minimum's location is found by a parabola through the lowest point and its neighbours.
JSON in out/studies/hopper_fig47.json.

    python studies/hopper_fig47.py [--steps 1e-4 2e-5] [--from 70 --to 130 --every 2] [--jobs 2]
"""
import argparse
import math
import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from floating_base_control.results import write_json
from floating_base_control.robots.hopper.contact import CONTACT_RULES
from floating_base_control.robots.hopper.controller import HopperController
from floating_base_control.robots.hopper.coordinates import polar_angle
from floating_base_control.experiments.hopper.scenario import experiment, run
from floating_base_control.robots.hopper.model import hopper_model

DURATION = 0.34    #: s: the drop, the first stance and 10 ms of the first flight for q1 in 90-126 deg
CONTROLLERS = {"radial": "I", "exp_iv": "IV"}


def drop(name, q1, rule):
    """Exp ``name`` of the revolute hopper from ``q1`` (rad) with the CoM-foot line vertical,
    the base at 0.3 m, ``r_des`` and ``E_des`` those of this initial state."""
    exp = experiment("revolute", name, contact_rule=rule)
    model = hopper_model("revolute", exp.gravity)
    geo = HopperController(model, exp.gains).geometry(np.array([q1]))
    d = geo.p_f - geo.c
    theta = -polar_angle(tuple(d))[0]          # alpha_i,cf = theta_ib + alpha at zero pitch
    com_z = 0.3 + math.sin(theta) * geo.c[0] + math.cos(theta) * geo.c[2]
    E0 = model.mass * exp.gravity * com_z
    gains = replace(exp.gains, r_des=float(np.linalg.norm(d)), E_des=E0)
    return replace(exp, gains=gains, initial=(0.0, 0.3, theta, q1, 0.0, 0.0, 0.0, 0.0), tilt=0.0)


def liftoff_momentum(case):
    """Angular momentum about the CoM (N m s, thesis sign) in the first 2-10 ms of the first
    flight, and the initial alpha_i,cf (deg; 0 by construction)."""
    controller, q1_deg, step, rule = case
    exp = drop(CONTROLLERS[controller], math.radians(q1_deg), rule)
    log, _, _ = run(exp, DURATION, timestep=step, log_every=1, loop_delay_s=0.0)
    a = log.arrays()
    t_lo = next((t for t, *_ in log.liftoffs), math.nan)
    window = (a["t"] > t_lo + 0.002) & (a["t"] < t_lo + 0.010)
    L = float(np.median(a["L"][window])) if window.any() else math.nan
    print(f"{controller} q1={q1_deg} step={step:g}: L={L:.3e}", file=sys.stderr, flush=True)
    return {"controller": controller, "q1_deg": q1_deg, "timestep_s": step, "contact_rule": rule,
            "L_liftoff": L, "alpha0_deg": math.degrees(a["alpha_cf"][0]), "liftoff_s": t_lo}


def minimum(q1, L):
    """``(q1, |L|)`` at the minimum of ``|L|``: a parabola through the lowest sample and its
    neighbours (the sample itself at the ends of the sweep)."""
    y = np.abs(L)
    i = int(np.nanargmin(y))
    if i in (0, len(y) - 1):
        return float(q1[i]), float(y[i])
    c = np.polyfit(q1[i - 1:i + 2], y[i - 1:i + 2], 2)
    x = -c[1] / (2 * c[0])
    return float(x), float(np.polyval(c, x))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=float, nargs="+", default=[1e-4, 2e-5])
    p.add_argument("--from", dest="lo", type=float, default=70.0)
    p.add_argument("--to", dest="hi", type=float, default=130.0)
    p.add_argument("--every", type=float, default=2.0)
    p.add_argument("--controllers", nargs="+", default=list(CONTROLLERS), choices=CONTROLLERS)
    p.add_argument("--rule", default="foot_height", choices=CONTACT_RULES)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="out/studies/hopper_fig47.json")
    args = p.parse_args()
    angles = np.arange(args.lo, args.hi + 1e-9, args.every)
    cases = [(c, float(q), s, args.rule) for c in args.controllers for s in args.steps for q in angles]
    with Pool(args.jobs) as pool:
        rows = pool.map(liftoff_momentum, cases, chunksize=1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, rows)
    print("| q1 [deg] | " + " | ".join(f"{c} {1e3 * s:g} ms: L [1e-3 N m s]" for c in args.controllers
                                       for s in args.steps) + " |")
    print("|" + "---|" * (1 + len(args.controllers) * len(args.steps)))
    for q in angles:
        cells = [next(r["L_liftoff"] for r in rows if (r["controller"], r["timestep_s"], r["q1_deg"]) == (c, s, q))
                 for c in args.controllers for s in args.steps]
        print(f"| {q:g} | " + " | ".join(f"{1e3 * x:+.3f}" for x in cells) + " |")
    for c in args.controllers:
        for s in args.steps:
            sel = [r for r in rows if (r["controller"], r["timestep_s"]) == (c, s)]
            x, y = minimum(np.array([r["q1_deg"] for r in sel]), np.array([r["L_liftoff"] for r in sel]))
            at_102 = np.interp(102.0, [r["q1_deg"] for r in sel], [abs(r["L_liftoff"]) for r in sel])
            print(f"{c}, {1e3 * s:g} ms: minimum |L| = {1e3 * y:.3f}e-3 N m s at q1 = {x:.1f} deg; "
                  f"at 102 deg {1e3 * at_102:.3f}e-3 ({100 * (at_102 / y - 1):+.1f} %)")


if __name__ == "__main__":
    main()
