"""``fbc demo hopper``: a hopping experiment of [Feurstein2021] ch. 4 (Tables 4.7-4.8, 4.12-4.13), on the
thesis' robot or a user's (``--urdf``), from options or a ``--config`` YAML file.

As ``fbc demo orbital`` (``cli/demo_orbital.py``): one row of :data:`TABLE` per option, the command line over
the file over the defaults, an option that would change nothing refused with the reason, and the
configuration that ran written as ``scenario.yaml`` beside the results (``--config`` on it repeats the run).
"""
from dataclasses import asdict, fields, replace
from pathlib import Path

from floating_base_control.cli import _run
from floating_base_control.cli._options import finite_float, non_negative, positive, writable_dir
from floating_base_control.cli._table import Option, add_options, read_config, resolve, write_config
from floating_base_control.cli.demo_orbital import render, video_options
from floating_base_control.robots.hopper.contact import CONTACT_RULES
from floating_base_control.validation import InputError

ROBOTS = ("prismatic", "revolute")
EXPERIMENTS = ("I", "II", "III", "IV", "V", "VI")
VARIANTS = ("I", "II", "III")
FLOORS = ("viscoelastic", "mujoco")
#: HopperGains fields with an option of their own.
OWN_OPTION = {"variant": "variant", "contact_rule": "contact_rule"}


def _viscoelastic(c):
    return None if c["floor"] == "viscoelastic" else \
        "applies to the viscoelastic floor (MuJoCo's own contact has its own stiffness and damping)"


def _check_gains(value, where):
    from floating_base_control.robots.hopper.controller import HopperGains
    known = {f.name: f.default for f in fields(HopperGains)}
    out = {}
    for name, v in value.items():
        if name in OWN_OPTION:
            raise InputError(f"{where}: {name}: give it as the option {OWN_OPTION[name]}")
        if name not in known:
            raise InputError(f"{where}: unknown gain {name!r}; the gains are "
                             f"{', '.join(k for k in known if k not in OWN_OPTION)}")
        if v is None:
            continue
        if isinstance(known[name], bool):
            if isinstance(v, str) and v.lower() in ("true", "false"):
                v = v.lower() == "true"
            if not isinstance(v, bool):
                raise InputError(f"{where}: {name} must be true or false, got {v!r}")
            out[name] = v
        else:
            if isinstance(v, bool):
                raise InputError(f"{where}: {name} must be a number, got {v!r}")
            try:
                out[name] = finite_float(str(v))
            except Exception as exc:          # argparse's ArgumentTypeError
                raise InputError(f"{where}: {name}: {exc}") from None
    return out


TABLE = [
    Option("config", ("--config",), "YAML file of options: each key is an option's name without the dashes, - as _ "
           "(e.g. floor_K: 8000), gains a mapping of HopperGains fields; the command line overrides the file; "
           "scenario.yaml in --out is the one of the last run", metavar="YAML", in_file=False, path=True),
    Option("robot", ("--robot",), "the thesis' robot whose experiment runs (its initial state and gains)",
           choices=ROBOTS, default="revolute"),
    Option("urdf", ("--urdf",), "the robot's URDF instead of the thesis' (links base_link and foot, one joint)",
           path=True),
    Option("experiment", ("--experiment",), "thesis experiment (prismatic: I-III, revolute: I-VI)", choices=EXPERIMENTS,
           default="VI"),
    Option("variant", ("--variant",), "polar controller (default: the thesis'; III = locked-velocity CoM frame)",
           choices=VARIANTS),
    Option("contact_rule", ("--contact-rule",), "stance/flight rule (default foot_height: the foot at or below the "
           "floor, from odometry and encoders; foot_force: the force sensor with hysteresis)", choices=CONTACT_RULES),
    Option("gains", ("--gain",), "controller gains to change (HopperGains fields: K_r, D_r_flight, r_des, K_p, K_E, "
           "E_des, ...), e.g. --gain K_r=2500; repeatable", kind="mapping", check=_check_gains, repeat=True,
           metavar="NAME=VALUE"),
    Option("initial", ("--initial",), "initial state in the thesis' planar coordinates: base x, y, angle, joint, "
           "their rates (m, rad, m/s, rad/s; default: the experiment's)", type=finite_float, nargs=8,
           metavar=("X", "Y", "THETA", "Q", "VX", "VY", "OMEGA", "QDOT")),
    Option("duration", ("--duration",), "simulated time, s (default: the experiment's)", type=positive),
    Option("floor", ("--floor",), "the thesis' floor or MuJoCo's own contact", choices=FLOORS, default="viscoelastic"),
    Option("floor_K", ("--floor-K",), "viscoelastic floor stiffness, N/m (Table 4.11)", type=positive,
           default=lambda c: _floor_default("FLOOR_K"), applies=_viscoelastic),
    Option("floor_D", ("--floor-D",), "viscoelastic floor damping, N s/m (Table 4.11)", type=non_negative,
           default=lambda c: _floor_default("FLOOR_D"), applies=_viscoelastic),
    Option("base", ("--base",), "MuJoCo base joint: planar, or free (3D, plane kept by symmetry)",
           choices=("planar", "free"), default="planar"),
    Option("gravity", ("--gravity",), "g in m/s^2 (default: 9.8 prismatic, 9.81 revolute)", type=positive),
    Option("timestep", ("--timestep",), "MuJoCo step, s (default: the experiment's, 1e-4 but for revolute III: "
           "step-converged, docs/explanation/hopper.md)", type=positive),
    Option("control_rate", ("--control-rate",), "controller steps per second (default: one per MuJoCo step; the ROS "
           "node runs at 1000)", type=positive),
    Option("loop_delay", ("--loop-delay",), "delay from the state a command is computed from to the command acting "
           "on the plant, s (default: one control period, as ros2_control); 0: the thesis' loop", type=non_negative,
           metavar="SECONDS"),
    Option("out", ("--out",), "output directory (default out/demo/hopper/<robot>-<exp>-<variant>)", type=writable_dir,
           in_file=False),
    Option("no_plots", ("--no-plots",), "skip the PNG figures", kind="switch", default=False, in_file=False),
    *video_options(speed=0.25),
]


def _floor_default(name):
    from floating_base_control.sim import hopper
    return getattr(hopper, name)


def register(families):
    p = families.add_parser("hopper", help="the hopping experiments of [Feurstein2021] ch. 4",
                            description="Run one of the thesis' hopping experiments (Tables 4.7-4.8, 4.12-4.13), on "
                                        "its robot or --urdf's, and write summary.json, timeseries.csv, plots and "
                                        "scenario.yaml (the configuration that ran).")
    add_options(p, TABLE, {"video": p.add_argument_group("video (MuJoCo offscreen, MUJOCO_GL=egl without a display)")})
    p.set_defaults(func=run)


def configuration(args):
    """``(config, asked)`` of the command line and its ``--config`` file (``cli/_table.py``)."""
    file_values = read_config(args.config, TABLE) if args.config else {}
    return resolve(TABLE, args, file_values, args.config)


def build(config):
    """The :class:`~floating_base_control.experiments.hopper.scenario.Experiment` of ``config``; fills the
    experiment's defaults into ``config`` (variant, contact rule, gains, initial state, duration, gravity,
    step), so that the configuration written is the whole run."""
    from floating_base_control.experiments.hopper.scenario import experiment
    exp = experiment(config["robot"], config["experiment"], variant=config["variant"], gravity=config["gravity"],
                     contact_rule=config["contact_rule"])
    exp = replace(exp, gains=replace(exp.gains, **(config["gains"] or {})), urdf=config["urdf"])
    if config["initial"] is not None:
        exp = replace(exp, initial=tuple(config["initial"]))
    if config["timestep"] is not None:
        exp = replace(exp, timestep=config["timestep"])
    gains = {k: v for k, v in asdict(exp.gains).items() if k not in OWN_OPTION}
    config.update(variant=exp.gains.variant, contact_rule=exp.gains.contact_rule, gains=gains,
                  initial=list(exp.initial), duration=config["duration"] or exp.duration, gravity=exp.gravity,
                  timestep=exp.timestep)
    return exp


CONFIG_HEADER = ("The configuration of a run of `fbc demo hopper`, as it ran (every option that applied, with its "
                 "value).\n`fbc demo hopper --config {path}` repeats it; options on the command line override it.")


def run(args):
    from floating_base_control.experiments.hopper.report import plot, summarize
    from floating_base_control.experiments.hopper.report import write_csv as write_log_csv
    from floating_base_control.experiments.hopper.scenario import hopper_urdf_of
    from floating_base_control.experiments.hopper.scenario import run as simulate
    from floating_base_control.results import write_json

    config, _ = configuration(args)
    exp = build(config)
    out = Path(config["out"] or f"out/demo/hopper/{exp.robot}-{exp.name}-{exp.gains.variant}")
    out.mkdir(parents=True, exist_ok=True)
    timestep = exp.timestep
    control_every = 1 if config["control_rate"] is None else max(1, round(1.0 / (config["control_rate"] * timestep)))
    period = control_every * timestep
    delay = period if config["loop_delay"] is None else config["loop_delay"]
    loop = (f"control every {1e3 * period:g} ms, " + ("zero loop delay (the thesis' loop)" if delay == 0 else
            f"loop delay {1e3 * delay:g} ms" + (" (one control period)" if config["loop_delay"] is None else "")))
    with _run.warnings_to(out / "warnings.log"):
        write_config(out / "scenario.yaml", TABLE, config, CONFIG_HEADER.format(path=out / "scenario.yaml"))
        robot = config["urdf"] or f"the thesis' {exp.robot} hopper"
        floor = f"{config['floor']} floor" + (f" (K {config['floor_K']:g} N/m, D {config['floor_D']:g} N s/m)"
                                              if config["floor"] == "viscoelastic" else "")
        print(f"{robot}, Exp {exp.name} ({exp.description}), controller {exp.gains.variant}, {floor}, "
              f"{config['base']} base, g {exp.gravity:g} m/s^2, contact rule {exp.gains.contact_rule}, "
              f"step {timestep:g} s, {loop}: {config['duration']:g} s -> {out}/", flush=True)
        hold = period + delay if control_every > 1 else 0.0     # how long a sampled command acts after its state
        progress = _run.Progress(config["duration"])
        try:
            log, flows, meta = simulate(exp, config["duration"], floor=config["floor"], base=config["base"],
                                        floor_K=config["floor_K"], floor_D=config["floor_D"],
                                        control_every=control_every, control_period=hold,
                                        loop_delay_s=config["loop_delay"], progress=progress)
        finally:
            progress.close()
        summary = summarize(exp, log, flows, meta)
        summary["configuration_file"] = "scenario.yaml"
        write_json(out / "summary.json", summary)
        write_log_csv(out / "timeseries.csv", log)
        files = [] if config["no_plots"] else plot(out, exp, log, summary)
        if config["video"]:
            seconds = render(out / "video.mp4", hopper_urdf_of(exp), log.arrays(), config, floor=True,
                             gravity=(0.0, 0.0, -exp.gravity))
            files.append(f"video.mp4 ({seconds:.1f} s, {1 / config['video_speed']:g} s per simulated second)")
    fell = f"fell at {summary['fell_at_s']:.2f} s" if summary["fell"] else "did not fall"
    print(f"{summary['duration_s']:.2f} s simulated: {summary['hops']} hops, {fell}, mean forward "
          f"speed {summary['mean_forward_speed']:+.3f} m/s, max flight rotation "
          f"{summary['max_flight_rotation_deg']:.1f} deg")
    print(f"thesis' figures: full joint work {summary['joint_work_full_J']:.3f} J, external work "
          f"{summary['external_work_J']:.3f} J, radial damping {summary['radial_damping_J']:.3f} J")
    print(f"energy in: external {flows.external:.3f} J + joints {flows.joint:.3f} J; out: touchdown "
          f"{flows.touchdown:.3f} J, radial damping {flows.damping:.3f} J, floor {flows.floor:.3f} J; "
          f"stored {summary['energy_stored_J']:+.3f} J; residual {summary['energy_balance_residual_J']:.2e} J")
    print(f"wrote {out}/summary.json, timeseries.csv, scenario.yaml" + (f", {', '.join(files)}" if files else ""))
