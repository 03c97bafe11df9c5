"""``fbc demo <family> ...``: simulated demonstrations, one sub-subcommand per robot family.

A family registers itself with ``FAMILIES``: a function that adds its parser to the
``demo`` subparsers (``fbc demo orbital`` is one more entry).
"""
import json
from pathlib import Path


def register(sub):
    p = sub.add_parser("demo", help="simulated demonstrations (MuJoCo plant, the package's controllers)")
    families = p.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for add in FAMILIES:
        add(families)


def _hopper_parser(families):
    from ..sim.hopper_experiments import EXPERIMENT_NAMES
    p = families.add_parser("hopper", help="the hopping experiments of seed 003 (Feurstein 2021, ch. 4)",
                            description="Run one of the thesis' hopping experiments (Tables 4.7-4.8, "
                                        "4.12-4.13) and write summary.json, timeseries.csv and plots.")
    p.add_argument("--robot", choices=("prismatic", "revolute"), default="revolute")
    p.add_argument("--experiment", choices=EXPERIMENT_NAMES, default="VI",
                   help="thesis experiment (prismatic: I-III, revolute: I-VI; default VI)")
    p.add_argument("--variant", choices=("I", "II", "III"),
                   help="polar controller (default: the thesis'; III = locked-velocity CoM frame)")
    p.add_argument("--duration", type=float, help="simulated time, s (default: per experiment)")
    p.add_argument("--floor", choices=("viscoelastic", "mujoco"), default="viscoelastic",
                   help="the thesis' floor (default) or MuJoCo's own contact")
    p.add_argument("--base", choices=("planar", "free"), default="planar",
                   help="MuJoCo base joint: planar (default) or free (3D, plane kept by symmetry)")
    p.add_argument("--gravity", type=float, help="g in m/s^2 (default: 9.8 prismatic, 9.81 revolute)")
    p.add_argument("--timestep", type=float, default=1e-4, help="MuJoCo step, s (default 1e-4)")
    p.add_argument("--out", help="output directory (default out/demo/hopper/<robot>-<exp>-<variant>)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    p.set_defaults(func=_run_hopper)


def _run_hopper(args):
    from ..analysis.hopper_report import plot, summarize, write_csv
    from ..sim.hopper_experiments import experiment, run

    exp = experiment(args.robot, args.experiment, variant=args.variant, gravity=args.gravity)
    out = Path(args.out or f"out/demo/hopper/{exp.robot}-{exp.name}-{exp.gains.variant}")
    out.mkdir(parents=True, exist_ok=True)
    print(f"{exp.robot} hopper, Exp {exp.name} ({exp.description}), controller {exp.gains.variant}, "
          f"{args.floor} floor, {args.base} base")
    log, flows, meta = run(exp, args.duration, floor=args.floor, base=args.base, timestep=args.timestep)
    summary = summarize(exp, log, flows, meta)
    with open(out / "summary.json", "w") as f:
        json.dump(summary, f, indent=2)
    write_csv(out / "timeseries.csv", log)
    files = [] if args.no_plots else plot(out, exp, log, summary)
    fell = f"fell at {summary['fell_at_s']:.2f} s" if summary["fell"] else "did not fall"
    print(f"{summary['duration_s']:.2f} s simulated: {summary['hops']} hops, {fell}, mean forward "
          f"speed {summary['mean_forward_speed']:+.3f} m/s, max flight rotation "
          f"{summary['max_flight_rotation_deg']:.1f} deg")
    print(f"energy in: external {flows.external:.3f} J + joints {flows.joint:.3f} J; out: touchdown "
          f"{flows.touchdown:.3f} J, radial damping {flows.damping:.3f} J, floor {flows.floor:.3f} J; "
          f"stored {summary['energy_stored_J']:+.3f} J; residual {summary['energy_balance_residual_J']:.2e} J")
    print(f"wrote {out}/summary.json, timeseries.csv" + (f", {', '.join(files)}" if files else ""))


FAMILIES = [_hopper_parser]
