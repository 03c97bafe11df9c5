"""``fbc demo <family> ...``: simulated demonstrations, one sub-subcommand per robot family.

``fbc demo orbital [--duration S] [--compensation tau1|tau2|none|truth] [--out DIR] [--ros]``
runs [Mishra2023]'s orbital-robot scenario (Sec. V-A), ``--arm-urdf PATH`` with a user's arm on the
spacecraft; ``fbc demo hopper --robot R --experiment E``
runs a hopping experiment of [Feurstein2021].  Each writes ``summary.json``, ``timeseries.csv`` and
PNG plots.  A family registers itself in ``FAMILIES``: a function that adds its parser to the
``demo`` subparsers.
"""
import json
from dataclasses import replace
from pathlib import Path

from floating_base_control.control.shape import COMPENSATIONS
from floating_base_control.control.setpoint import CONTROLLERS
from floating_base_control.robots.orbital.spacecraft import Spacecraft
from floating_base_control.results import write_csv, write_json
from floating_base_control.cli._options import (count, finite_float, joint_value, non_negative, number, positive,
                                                writable_dir)


def register(sub):
    p = sub.add_parser("demo", help="simulated demonstrations (MuJoCo plant, the package's controllers)")
    families = p.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for add in FAMILIES:
        add(families)


def _orbital_parser(families):
    from floating_base_control.sim.plant import JOINT_DYNAMICS
    p = families.add_parser("orbital", help="orbital robot with momentum: observer + compensating "
                                          "shape controller ([Mishra2023] Sec. V-A)")
    p.add_argument("--scenario", choices=("ideal", "realistic"), default="ideal",
                   help="ideal (default: the paper's conditions) or realistic (friction, model error, "
                        "quantized encoders, star tracker; experiments/orbital/dispersions.py; dispersions drawn "
                        "from --seed)")
    p.add_argument("--duration", type=positive, help="simulated seconds (default: 30 ideal, 60 realistic; 15 with "
                                                  "--task trajectory; with --task end-effector 1.5 s after the "
                                                  "target is reached, within the physically possible hold)")
    p.add_argument("--compensation", choices=COMPENSATIONS, default="tau2",
                   help="eq. 45 variant with the observer's mu (tau1, tau2), PD only (none), or "
                        "tau_hat_2 with the simulator's true mu (truth); default tau2")
    p.add_argument("--controller", choices=sorted(CONTROLLERS),
                   help="a campaign's controller name (compensation + integral action; overrides "
                        "--compensation and --integral-time)")
    p.add_argument("--integral-time", type=non_negative, default=0.0,
                   help="T_i of PD + I, s (K_i = K / T_i; default 0: PD)")
    p.add_argument("--pose-position", action="store_true",
                   help="realistic: the pose source gives position too (default: attitude only)")
    p.add_argument("--pose-rate", type=positive, default=10.0, help="base pose samples per second")
    p.add_argument("--pose-noise", type=non_negative, default=1.0,
                   help="pose noise as a multiple of 1 mrad / 1 mm (default 1)")
    p.add_argument("--latency", type=non_negative, default=0.02, help="pose latency in seconds")
    p.add_argument("--mass-error", type=number(float, -1, above=True), default=0.0,
                   help="relative error of the spacecraft's mass and inertia in the controller's model")
    p.add_argument("--task", choices=("setpoint", "trajectory", "end-effector", "reorient"), default="setpoint",
                   help="motion task: the scenario's set-point (eq. 52, default), a joint trajectory through "
                        "waypoints, an end-effector target 0.3 m away and rotated 30 deg "
                        "(experiments/orbital/tasks.py), or turning the spacecraft by --angle-deg about --axis "
                        "with joint loops (experiments/orbital/reorient.py)")
    p.add_argument("--tumble-scale", type=finite_float,
                   help="the initial locked velocity as a multiple of the paper's [10, 1.14, 0] deg/s (default 1; "
                        "0 with --task reorient, which starts at rest)")
    r = p.add_argument_group("--task reorient: the target rotation (base frame at the start), planned from the set-"
                             "point (the arm starts there)")
    r.add_argument("--axis", type=finite_float, nargs=3, default=(0.0, 0.0, 1.0), metavar=("X", "Y", "Z"),
                   help="rotation axis (default 0 0 1)")
    r.add_argument("--angle-deg", type=finite_float, default=30.0, help="rotation angle, degrees (default 30)")
    p.add_argument("--seed", type=count, default=0)
    p.add_argument("--out", default="out/orbital", type=writable_dir, help="report directory (default out/orbital)")
    p.add_argument("--ros", action="store_true",
                   help="run as two ROS 2 processes (mujoco_sim + floating_base_controller with "
                        "config/orbital_robot.yaml and the options above) over DDS, shared memory only, "
                        "in domain FBC_ROS_DOMAIN (default 61); not with --mass-error or --compensation truth")
    p.add_argument("--compare", action="store_true",
                   help="with --ros: also run the ROS-free loop of the same scenario and compare")
    loop = p.add_argument_group("the ROS-free loop (sim/loop.py)")
    loop.add_argument("--loop-delay", type=non_negative, metavar="SECONDS",
                      help="delay from the state a command is computed from to the command acting on the plant "
                           "(default: one control period, as ros2_control and the DDS loop); 0: the papers' loop, "
                           "the command acts in the instant its state was read")
    loop.add_argument("--loop-jitter", type=non_negative, default=0.0, metavar="SECONDS",
                      help="further delay of each command, uniform in [0, SECONDS] (default 0)")
    loop.add_argument("--loop-drop", type=non_negative, default=0.0, metavar="P",
                      help="probability that a command is lost, the plant keeping the last one (default 0)")
    loop.add_argument("--loop-measured", metavar="JSON",
                      help="jitter and lost commands from a ROS loop that `make bench` measured "
                           "(out/bench/ros_loop.json; sim/loop.py measured_loop); overrides the two above")
    arm = p.add_argument_group("another arm on the spacecraft (robots/orbital/spacecraft.py): start, set-point, "
                               "PD and observer gains are then scaled from the robot")
    arm.add_argument("--arm-urdf", help="URDF of an arm to mount on the spacecraft (its root link is "
                                        "bolted to the bus; mimic joints are locked)")
    arm.add_argument("--lock", action="append", default=[], metavar="JOINT=VALUE", type=joint_value,
                     help="hold a joint of the arm at VALUE (rad or m); repeatable")
    arm.add_argument("--joint-dynamics", choices=JOINT_DYNAMICS, default="urdf",
                     help="the URDF's joint damping and friction in the plant, a mismatch the controller's "
                          "model (ideal joints) does not know (urdf, default), or not (ideal)")
    defaults = Spacecraft()
    arm.add_argument("--spacecraft-mass", type=positive, default=defaults.mass, help="kg (default %(default)g)")
    arm.add_argument("--spacecraft-inertia", type=finite_float, nargs=6, default=defaults.inertia,
                     metavar=("IXX", "IYY", "IZZ", "IXY", "IXZ", "IYZ"), help="about the bus CoM, kg m^2")
    arm.add_argument("--spacecraft-com", type=finite_float, nargs=3, default=defaults.com, metavar=("X", "Y", "Z"))
    arm.add_argument("--mount-xyz", type=finite_float, nargs=3, default=defaults.mount_xyz, metavar=("X", "Y", "Z"),
                     help="arm mount position in the bus frame, m")
    arm.add_argument("--mount-rpy", type=finite_float, nargs=3, default=defaults.mount_rpy, metavar=("R", "P", "Y"),
                     help="arm mount orientation, rad")
    p.set_defaults(func=run_orbital)



def loop_description(scenario):
    """Which loop a ROS-free run of ``scenario`` runs, for the demo's header."""
    from floating_base_control.experiments.orbital.scenario import loop_delay
    delay = loop_delay(scenario)
    if delay == 0 and not scenario.loop_jitter_s and not scenario.loop_drop:
        return "zero loop delay (the papers' loop: each command acts in the instant its state was read)"
    period = " (one control period, as ros2_control)" if scenario.loop_delay_s is None else ""
    extra = "".join([f", jitter up to {1e3 * scenario.loop_jitter_s:g} ms" if scenario.loop_jitter_s else "",
                     f", {100 * scenario.loop_drop:g} % of the commands lost" if scenario.loop_drop else ""])
    return f"loop delay {1e3 * delay:g} ms{period}{extra}"


KEYS = ["final_joint_error_deg", "final_observer_pose_error", "final_observer_velocity_error",
        "momentum_drift_rel", "tau_hat_total_variation_ratio", "status", "converged", "scenario",
        "final_observer_attitude_error_rad", "max_position_limit_overrun_rad", "max_velocity_limit_overrun_rad_s"]


def run_orbital(args):
    from floating_base_control.experiments.orbital import report
    from floating_base_control.experiments.orbital import scenario as orbital
    from floating_base_control.experiments.orbital.campaign import INTEGRAL_TIME_S, campaign_scenario

    if args.duration is None and args.task != "setpoint":
        from floating_base_control.experiments.orbital.tasks import TaskSettings, default_duration
        args.duration = default_duration(args.task, TaskSettings())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = lambda t: print(f"  t = {t:5.1f} s", flush=True)  # noqa: E731
    compensation, integral_time = args.compensation, args.integral_time
    if args.controller:
        compensation, integral = CONTROLLERS[args.controller]
        integral_time = INTEGRAL_TIME_S if integral else 0.0
    if args.scenario == "realistic":          # the campaign's run of this seed, dispersions included
        if args.arm_urdf:
            raise ValueError("--scenario realistic is the package's orbital robot (the Panda's identified "
                             "friction): not with --arm-urdf")
        scenario = replace(campaign_scenario("realistic", args.seed, "pd", args.duration,
                                             True if args.pose_position else None),
                           compensation=compensation, integral_time_s=integral_time,
                           model_mass_error=args.mass_error)
    else:
        options = dict(
            duration_s=args.duration or 30.0, compensation=compensation, integral_time_s=integral_time,
            pose_rate_hz=args.pose_rate, pose_rotation_noise=1e-3 * args.pose_noise,
            pose_position_noise=1e-3 * args.pose_noise, pose_latency_s=args.latency,
            model_mass_error=args.mass_error, seed=args.seed, joint_dynamics=args.joint_dynamics)
        if args.arm_urdf:
            spacecraft = Spacecraft(args.spacecraft_mass, tuple(args.spacecraft_com), tuple(args.spacecraft_inertia),
                                    tuple(args.mount_xyz), tuple(args.mount_rpy))
            scenario = orbital.arm_scenario(args.arm_urdf, spacecraft, dict(args.lock), out / "robot.urdf", **options)
            print(f"{args.arm_urdf} mounted on a {spacecraft.mass:g} kg spacecraft: {out / 'robot.urdf'}")
        else:
            scenario = orbital.OrbitalScenario(**options)
    if args.ros and (args.loop_delay is not None or args.loop_jitter or args.loop_drop or args.loop_measured):
        raise ValueError("--loop-delay, --loop-jitter and --loop-drop model the ROS-free loop: over ROS 2 the "
                         "loop is DDS's own")
    if args.loop_measured:
        from floating_base_control.sim.loop import measured_loop
        args.loop_jitter, args.loop_drop = measured_loop(json.loads(Path(args.loop_measured).read_text()),
                                                         scenario.control_rate_hz)
    scenario = replace(scenario, loop_delay_s=args.loop_delay, loop_jitter_s=args.loop_jitter,
                       loop_drop=args.loop_drop)
    over = " over ROS 2 (mujoco_sim + floating_base_controller)" if args.ros else f", {loop_description(scenario)}"
    print(f"orbital scenario {scenario.name}{over}: "
          f"{scenario.duration_s:g} s, compensation {compensation}, integral time {integral_time:g} s -> {out}/")
    tumble = (0.0 if args.task == "reorient" else 1.0) if args.tumble_scale is None else args.tumble_scale
    if tumble != 1.0:
        scenario = replace(scenario, mu0_omega_deg_s=tuple(tumble * w for w in scenario.mu0_omega_deg_s))
    if args.task != "setpoint":
        if args.arm_urdf and args.task != "reorient":
            raise ValueError("--task trajectory|end-effector has waypoints and targets for the package's robot: "
                             "not with --arm-urdf")
        return _run_orbital_task(args, scenario, out, progress)
    if args.ros:
        from floating_base_control.ros import orbital_demo as demo
        log, summary = demo.run(scenario, progress=progress)
    else:
        log, summary = orbital.run(scenario, progress=progress)
    if args.ros and args.compare:
        print(f"the same scenario without ROS (one process, {loop_description(scenario)}):")
        summary["ros_free"] = {k: orbital.run(scenario)[1][k] for k in KEYS}
    write_json(out / "summary.json", summary)
    write_csv(out / "timeseries.csv", log)
    report.plot_orbital(out, log, summary)
    shown = {k: summary[k] for k in KEYS}
    if "ros_free" in summary:
        shown = {"ros": shown, "ros_free": summary["ros_free"]}
    print(json.dumps(shown, indent=2))


TASK_KEYS = ["task", "tracking_rms_joint_error_deg", "final_joint_error_deg", "max_joint_error_deg",
             "final_ee_position_error_m", "final_ee_orientation_error_deg", "min_ee_position_error_m",
             "min_ee_orientation_error_deg", "ee_time_within_1mm_0.1deg_s", "torque_saturated_fraction", "status"]
REORIENT_KEYS = ["task", "target_rotation_deg", "final_base_rotation_error_deg", "cycles", "duration_s",
                 "planning_time_s", "rotation_per_cycle_deg", "baseline_rotation_per_cycle_deg",
                 "max_joint_speed_ratio", "min_joint_limit_margin_rad", "arm_spacecraft_contacts", "task_status",
                 "status"]


def _run_orbital_task(args, scenario, out, progress):
    """``--task trajectory|end-effector``: the motion task in the ROS-free loop (experiments/orbital/tasks.py)."""
    from floating_base_control.experiments.orbital import tasks

    settings = tasks.TaskSettings()
    if args.task == "reorient":
        if args.ros:
            raise ValueError("--task reorient runs in the ROS-free loop (the node takes ~/base_attitude_target: "
                             "docs/results/reorientation.md)")
        if not any(args.axis):
            raise ValueError("--axis must not be zero")
        settings.reorient = replace(settings.reorient, axis=tuple(args.axis), angle_deg=args.angle_deg,
                                    duration_s=args.duration)
        scenario = replace(scenario, q0=scenario.q_d)
    duration = "from the plan" if args.duration is None else f"{args.duration:g} s"
    loop = "" if args.ros else f", {loop_description(scenario)}"
    print(f"orbital scenario, task {args.task}: {duration}, compensation {args.compensation}{loop} -> {out}/")
    if args.ros:        # the node's joint task uses the stiffness and damping parameters: the task's gains
        from floating_base_control.ros import orbital_demo as demo
        scenario = replace(tasks.task_scenario(scenario, args.task, settings), stiffness=settings.stiffness,
                           damping=settings.damping)
        log, summary = demo.run(scenario, progress=progress, task=args.task, settings=settings)
    else:
        log, summary = tasks.run_task(scenario, args.task, settings, progress=progress)
    write_json(out / "summary.json", summary)
    write_csv(out / "timeseries.csv", log)
    tasks.plot(out, log, summary)
    print(json.dumps({k: summary.get(k) for k in (REORIENT_KEYS if args.task == "reorient" else TASK_KEYS)},
                     indent=2))


def _hopper_parser(families):
    from floating_base_control.sim.hopper import FLOOR_D, FLOOR_K
    from floating_base_control.robots.hopper.contact import CONTACT_RULES
    from floating_base_control.experiments.hopper.scenario import EXPERIMENT_NAMES, TIMESTEP
    p = families.add_parser("hopper", help="the hopping experiments of [Feurstein2021] ch. 4",
                            description="Run one of the thesis' hopping experiments (Tables 4.7-4.8, "
                                        "4.12-4.13) and write summary.json, timeseries.csv and plots.")
    p.add_argument("--robot", choices=("prismatic", "revolute"), default="revolute")
    p.add_argument("--experiment", choices=EXPERIMENT_NAMES, default="VI",
                   help="thesis experiment (prismatic: I-III, revolute: I-VI; default VI)")
    p.add_argument("--variant", choices=("I", "II", "III"),
                   help="polar controller (default: the thesis'; III = locked-velocity CoM frame)")
    p.add_argument("--duration", type=positive, help="simulated time, s (default: per experiment)")
    p.add_argument("--contact-rule", choices=CONTACT_RULES,
                   help="stance/flight rule (default foot_height: the foot at or below the floor, "
                        "from odometry and encoders; foot_force: the force sensor with hysteresis)")
    p.add_argument("--floor", choices=("viscoelastic", "mujoco"), default="viscoelastic",
                   help="the thesis' floor (default) or MuJoCo's own contact")
    p.add_argument("--floor-K", type=positive, default=FLOOR_K,
                   help=f"viscoelastic floor stiffness, N/m (default {FLOOR_K:g}, Table 4.11)")
    p.add_argument("--floor-D", type=non_negative, default=FLOOR_D,
                   help=f"viscoelastic floor damping, N s/m (default {FLOOR_D:g}, Table 4.11)")
    p.add_argument("--base", choices=("planar", "free"), default="planar",
                   help="MuJoCo base joint: planar (default) or free (3D, plane kept by symmetry)")
    p.add_argument("--gravity", type=positive, help="g in m/s^2 (default: 9.8 prismatic, 9.81 revolute)")
    p.add_argument("--timestep", type=positive, default=None,
                   help=f"MuJoCo step, s (default: the experiment's, {TIMESTEP:g} but for revolute III: "
                        "step-converged, docs/explanation/hopper.md)")
    p.add_argument("--control-rate", type=positive,
                   help="controller steps per second (default: one per MuJoCo step; the ROS node runs at 1000)")
    p.add_argument("--loop-delay", type=non_negative, metavar="SECONDS",
                   help="delay from the state a command is computed from to the command acting on the plant "
                        "(default: one control period, as ros2_control); 0: the thesis' loop, the command acts in "
                        "the step its state was read")
    p.add_argument("--out", type=writable_dir,
                   help="output directory (default out/demo/hopper/<robot>-<exp>-<variant>)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    p.set_defaults(func=_run_hopper)


def _run_hopper(args):
    from floating_base_control.experiments.hopper.report import plot, summarize
    from floating_base_control.experiments.hopper.report import write_csv as write_log_csv
    from floating_base_control.experiments.hopper.scenario import experiment, run

    exp = experiment(args.robot, args.experiment, variant=args.variant, gravity=args.gravity,
                     contact_rule=args.contact_rule)
    out = Path(args.out or f"out/demo/hopper/{exp.robot}-{exp.name}-{exp.gains.variant}")
    out.mkdir(parents=True, exist_ok=True)
    timestep = args.timestep or exp.timestep
    control_every = 1 if args.control_rate is None else max(1, round(1.0 / (args.control_rate * timestep)))
    period = control_every * timestep
    delay = period if args.loop_delay is None else args.loop_delay
    loop = (f"control every {1e3 * period:g} ms, " + ("zero loop delay (the thesis' loop)" if delay == 0 else
            f"loop delay {1e3 * delay:g} ms" + (" (one control period)" if args.loop_delay is None else "")))
    print(f"{exp.robot} hopper, Exp {exp.name} ({exp.description}), controller {exp.gains.variant}, "
          f"{args.floor} floor, {args.base} base, contact rule {exp.gains.contact_rule}, step {timestep:g} s, {loop}")
    hold = period + delay if control_every > 1 else 0.0     # how long a sampled command acts after its state
    log, flows, meta = run(exp, args.duration, floor=args.floor, base=args.base, timestep=args.timestep,
                           floor_K=args.floor_K, floor_D=args.floor_D, control_every=control_every,
                           control_period=hold, loop_delay_s=args.loop_delay)
    summary = summarize(exp, log, flows, meta)
    write_json(out / "summary.json", summary)
    write_log_csv(out / "timeseries.csv", log)
    files = [] if args.no_plots else plot(out, exp, log, summary)
    fell = f"fell at {summary['fell_at_s']:.2f} s" if summary["fell"] else "did not fall"
    print(f"{summary['duration_s']:.2f} s simulated: {summary['hops']} hops, {fell}, mean forward "
          f"speed {summary['mean_forward_speed']:+.3f} m/s, max flight rotation "
          f"{summary['max_flight_rotation_deg']:.1f} deg")
    print(f"thesis' figures: full joint work {summary['joint_work_full_J']:.3f} J, external work "
          f"{summary['external_work_J']:.3f} J, radial damping {summary['radial_damping_J']:.3f} J")
    print(f"energy in: external {flows.external:.3f} J + joints {flows.joint:.3f} J; out: touchdown "
          f"{flows.touchdown:.3f} J, radial damping {flows.damping:.3f} J, floor {flows.floor:.3f} J; "
          f"stored {summary['energy_stored_J']:+.3f} J; residual {summary['energy_balance_residual_J']:.2e} J")
    print(f"wrote {out}/summary.json, timeseries.csv" + (f", {', '.join(files)}" if files else ""))


FAMILIES = [_orbital_parser, _hopper_parser]
