"""``fbc demo orbital``: [Mishra2023]'s orbital-robot scenario (Sec. V-A), or another robot's, from options
or a ``--config`` YAML file.

Every option is a row of :data:`TABLE` (``cli/_table.py``): its flag, its key in the file, its default and
what it applies to.  :func:`run` resolves them (command line over file over defaults; an option that would
change nothing is refused with the reason), builds the scenario in :func:`build`, writes the configuration
that ran (``scenario.yaml``: ``--config`` on it repeats the run bit for bit), runs it and writes the
report.  The robot is the package's orbital robot (the paper's start, set-point and gains), a whole
free-floating robot (``--urdf``) or an arm on a spacecraft (``--arm-urdf``); for the last two, the start,
set-point, gains and trajectory default to values scaled from the robot (``robots/orbital/spacecraft.py``,
``experiments/orbital/tasks.py``).

One coherent module: the options table of ``fbc demo orbital`` and the code that applies each option to the
scenario, so that an option and what it does read in one place.
"""
import json
from dataclasses import replace
from pathlib import Path

from floating_base_control.cli import _run
from floating_base_control.cli._options import (count, finite_float, non_negative, number, positive, probability,
                                                writable_dir)
from floating_base_control.cli._table import Option, add_options, read_config, resolve, write_config
from floating_base_control.control.setpoint import CONTROLLERS
from floating_base_control.control.shape import COMPENSATIONS
from floating_base_control.robots.orbital.spacecraft import Spacecraft
from floating_base_control.validation import InputError, ModelError

SCENARIOS = ("ideal", "realistic")
TASKS = ("setpoint", "trajectory", "end-effector", "reorient")
JOINT_DYNAMICS = ("urdf", "ideal")       # sim/plant.py's (not imported here: it loads MuJoCo)
BUS = Spacecraft()


# -- what each option applies to: None, or the reason it would change nothing ------------------------------

def _ideal_sensor(c):
    if c["scenario"] == "ideal":
        return None
    from floating_base_control.experiments.orbital.dispersions import REALISTIC as r
    return ("applies to the ideal scenario's pose sensor; the realistic scenario's star tracker "
            f"({r.pose_rate_hz:g} Hz +-{100 * r.pose_rate_jitter:g} %, {1e3 * r.pose_latency_s:g} ms latency + up to "
            f"{1e3 * r.pose_latency_jitter_s:g} ms, {r.pose_rotation_noise:g} rad noise and bias, "
            f"{100 * r.pose_dropout:g} % of the samples lost) is set by its dispersions: experiments/orbital/"
            "dispersions.py RealisticConditions, in a --config file the key dispersions (e.g. dispersions: "
            "{pose_rate_hz: 50})")


def _realistic(c):
    return None if c["scenario"] == "realistic" else \
        "applies to the realistic scenario (the ideal one's pose source gives the position, without dispersions)"


def _any_robot_but_realistic(c):
    return ("the realistic scenario is the package's orbital robot (the Panda's identified friction and its "
            "dispersed model): not with another robot") if c["scenario"] == "realistic" else None


def _urdf(c):
    return _any_robot_but_realistic(c)


def _arm_urdf(c):
    if c["urdf"]:
        return "give --urdf (a whole robot) or --arm-urdf (an arm on a spacecraft), not both"
    return _any_robot_but_realistic(c)


def _lock(c):
    return None if c["urdf"] or c["arm_urdf"] else \
        ("applies to --urdf or --arm-urdf: the package's orbital robot has the paper's start, set-point and gains "
         "for its 7 joints (lock one of its joints with --urdf and its file)")


def _spacecraft(c):
    return None if c["arm_urdf"] else \
        ("applies to --arm-urdf (the bus the arm is mounted on): the package's orbital robot and a --urdf robot "
         "carry their own base")


def _setpoint(c):
    return "the end-effector task drives the end effector (the joints hold --q0 until its target is sent)" \
        if c["task"] == "end-effector" else None


def _via(c):
    return None if c["task"] == "trajectory" else "applies to --task trajectory (its waypoints)"


def _task(c):
    if c["task"] == "reorient" and c["ros"]:
        return ("--task reorient runs in the ROS-free loop (the node takes ~/base_attitude_target: "
                "docs/results/reorientation.md)")
    if c["task"] == "end-effector" and (c["urdf"] or c["arm_urdf"]):
        return ("the end-effector task's target and gains are the package's robot's (panda_link8, 0.3 m away): "
                "not with --urdf or --arm-urdf")
    return None


def _reorient(c):
    return None if c["task"] == "reorient" else "applies to --task reorient"


def _by_controller(c):
    return "--controller sets it (a campaign's controller: compensation and integral action)" \
        if c["controller"] else None


def _integral_time(c):
    if c["controller"]:
        return _by_controller(c)
    return None if c["task"] == "setpoint" else \
        "the motion tasks' joint task has no integral action (it applies to the set-point task, eq. 52 with PD + I)"


def _compensation(c):
    if c["compensation"] == "truth" and c["ros"]:
        return "truth feeds the simulator's mu to the controller: a ROS-free option (not with --ros)"
    return _by_controller(c)


def _mass_error(c):
    return "over ROS 2 the controller's model is the plant's URDF: a ROS-free option (not with --ros)" \
        if c["ros"] else None


def _tumble(c):
    return ("the realistic scenario draws the tumble from --seed (dispersions: tumble_deg_s); --tumble-scale "
            "scales it") if c["scenario"] == "realistic" else None


def _loop(c):
    return "models the ROS-free loop: over ROS 2 the loop is DDS's own (not with --ros)" if c["ros"] else None


def _loop_measured_sets(c):
    return "--loop-measured sets it (the jitter and lost commands a ROS loop measured)" \
        if c["loop_measured"] else _loop(c)


def _ros(c):
    if c["scenario"] == "realistic":
        return ("over ROS 2 only the ideal scenario runs (mujoco_sim has no friction, encoder or star-tracker "
                "models): run the realistic one without --ros")
    return None


def _compare(c):
    return None if c["ros"] else "applies to --ros (it adds the ROS-free run of the same scenario)"


def _video(c):
    return None if c["video"] else "applies to --video"


def _default_duration(c):
    if c["task"] == "setpoint":
        if c["scenario"] == "realistic":
            from floating_base_control.experiments.orbital.dispersions import REALISTIC
            return REALISTIC.duration_s
        return 30.0
    from floating_base_control.experiments.orbital.tasks import TaskSettings, default_duration
    return default_duration(c["task"], TaskSettings())


def _check_dispersions(value, where):
    from dataclasses import fields
    from floating_base_control.experiments.orbital.dispersions import REALISTIC
    if not isinstance(value, dict):
        raise InputError(f"{where}: must be a mapping of RealisticConditions fields, got {value!r}")
    own = {"duration_s": "duration", "pose_position": "pose_position"}
    known = {f.name for f in fields(REALISTIC)} - set(own)
    out = {}
    for key, v in value.items():
        if key in own:
            raise InputError(f"{where}.{key}: give it as the option {own[key]}")
        if key not in known:
            raise InputError(f"{where}: unknown key {key!r}; the realistic conditions are {', '.join(sorted(known))}")
        default = getattr(REALISTIC, key)
        expected = tuple if isinstance(default, tuple) else float
        if expected is tuple:
            if not (isinstance(v, (list, tuple)) and len(v) == len(default)):
                raise InputError(f"{where}.{key}: must be {len(default)} numbers, got {v!r}")
            out[key] = [_number(x, f"{where}.{key}") for x in v]
        else:
            out[key] = _number(v, f"{where}.{key}")
            if out[key] < 0:
                raise InputError(f"{where}.{key}: must be >= 0, got {v!r}")
    return out


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: must be a number, got {value!r}")
    return finite_float(str(value))


def _check_via(value, where):
    if not isinstance(value, list) or not value or not all(isinstance(p, (dict, list)) for p in value):
        raise InputError(f"{where}: must be a list of shapes (each a mapping of joint to value, or a list of "
                         f"values), got {value!r}")
    return [{str(k): _number(v, f"{where}[{i}].{k}") for k, v in p.items()} if isinstance(p, dict)
            else [_number(v, f"{where}[{i}]") for v in p] for i, p in enumerate(value)]


def _video_size(text):
    width, sep, height = text.partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        size = None
    if not sep or size is None or min(size) < 16 or max(size) > 4096:
        import argparse
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT in pixels (16 to 4096)")
    return text


def video_options(speed):
    """The ``--video`` options of a demo's table (``speed``: the default simulated seconds per second of video)."""
    return [
        Option("video", ("--video",), "also render the run to video.mp4 in --out, a camera following the robot",
               kind="switch", default=False, in_file=False, group="video"),
        Option("video_speed", ("--video-speed",), "simulated seconds per second of video", type=positive,
               default=speed, applies=_video, in_file=False, group="video"),
        Option("video_size", ("--video-size",), "frame size in pixels", type=_video_size, default="640x480",
               metavar="WIDTHxHEIGHT", applies=_video, in_file=False, group="video"),
    ]


SPACECRAFT = "another robot (robots/orbital/spacecraft.py): its start, set-point, gains and trajectory are scaled " \
             "from it unless given"
SHAPE = "start, set-point and gains (joints not named keep the robot's default)"
LOOP = "the ROS-free loop (sim/loop.py)"
VIDEO = "video (MuJoCo offscreen, MUJOCO_GL=egl without a display)"

#: Every option of ``fbc demo orbital`` (module doc).
TABLE = [
    Option("config", ("--config",), "YAML file of options: each key is an option's name without the dashes, - as _ "
           "(e.g. pose_rate: 50), file-only keys via and dispersions; the command line overrides the file; "
           "scenario.yaml in --out is the one of the last run", metavar="YAML", in_file=False, path=True),
    Option("scenario", ("--scenario",), "ideal (the paper's conditions) or realistic (friction, model error, quantized "
           "encoders, star tracker; experiments/orbital/dispersions.py; dispersions drawn from --seed)",
           choices=SCENARIOS, default="ideal"),
    Option("seed", ("--seed",), "seed of the sensor noise and of the realistic dispersions", type=count, default=0),
    Option("duration", ("--duration",), "simulated seconds (default: 30 ideal, 60 realistic; 15 with --task "
           "trajectory; with --task end-effector 1.5 s after the target is reached)", type=positive,
           default=_default_duration),
    Option("task", ("--task",), "motion task: the set-point (eq. 52, default), a joint trajectory through waypoints "
           "(via), an end-effector target 0.3 m away and rotated 30 deg (experiments/orbital/tasks.py), or turning "
           "the spacecraft by --angle-deg about --axis with joint loops from the set-point (experiments/orbital/"
           "reorient.py)", choices=TASKS, default="setpoint", applies=_task),
    Option("axis", ("--axis",), "--task reorient: rotation axis, base frame at the start", type=finite_float, nargs=3,
           metavar=("X", "Y", "Z"), default=[0.0, 0.0, 1.0], applies=_reorient),
    Option("angle_deg", ("--angle-deg",), "--task reorient: rotation angle, degrees", type=finite_float, default=30.0,
           applies=_reorient),
    Option("compensation", ("--compensation",), "eq. 45 variant with the observer's mu (tau1, tau2), PD only "
           "(none), or tau_hat_2 with the simulator's true mu (truth)", choices=COMPENSATIONS, default="tau2",
           applies=_compensation),
    Option("controller", ("--controller",), "a campaign's controller name (sets the compensation and the integral "
           "action)", choices=tuple(sorted(CONTROLLERS))),
    Option("integral_time", ("--integral-time",), "T_i of PD + I, s (K_i = K / T_i; 0: PD)", type=non_negative,
           default=0.0, applies=_integral_time),
    Option("mass_error", ("--mass-error",), "relative error of the spacecraft's mass and inertia in the controller's "
           "model", type=number(float, -1, above=True), default=0.0, applies=_mass_error),
    Option("pose_rate", ("--pose-rate",), "ideal scenario: base pose samples per second", type=positive, default=10.0,
           applies=_ideal_sensor, group="sensor"),
    Option("pose_noise", ("--pose-noise",), "ideal scenario: pose noise as a multiple of 1 mrad / 1 mm",
           type=non_negative, default=1.0, applies=_ideal_sensor, group="sensor"),
    Option("latency", ("--latency",), "ideal scenario: pose latency, s", type=non_negative, default=0.02,
           applies=_ideal_sensor, group="sensor"),
    Option("pose_position", ("--pose-position",), "realistic scenario: the pose source gives position too "
           "(default: attitude only)", kind="switch", default=False, applies=_realistic, group="sensor"),
    Option("dispersions", (), "realistic scenario: RealisticConditions fields to change (file only)", kind="value",
           check=_check_dispersions, applies=_realistic),
    Option("urdf", ("--urdf",), "a whole free-floating robot: URDF whose root link is the base (its joints "
           "regulated)", applies=_urdf, group="robot", path=True),
    Option("arm_urdf", ("--arm-urdf",), "URDF of an arm to mount on the spacecraft (its root link bolted to the bus; "
           "mimic joints locked)", applies=_arm_urdf, group="robot", path=True),
    Option("lock", ("--lock",), "hold a joint of --urdf or --arm-urdf at VALUE (rad or m), inside its range; "
           "repeatable", kind="joints", metavar="JOINT=VALUE", applies=_lock, group="robot", repeat=True),
    Option("joint_dynamics", ("--joint-dynamics",), "the URDF's joint damping and friction in the plant, a "
           "mismatch the controller's model (ideal joints) does not know (urdf), or not (ideal)",
           choices=JOINT_DYNAMICS, default="urdf", group="robot"),
    Option("spacecraft_mass", ("--spacecraft-mass",), "--arm-urdf's bus, kg", type=positive, default=BUS.mass,
           applies=_spacecraft, group="robot"),
    Option("spacecraft_inertia", ("--spacecraft-inertia",), "--arm-urdf's bus inertia about its CoM, kg m^2",
           type=finite_float, nargs=6, metavar=("IXX", "IYY", "IZZ", "IXY", "IXZ", "IYZ"),
           default=list(BUS.inertia), applies=_spacecraft, group="robot"),
    Option("spacecraft_com", ("--spacecraft-com",), "--arm-urdf's bus CoM in the bus frame, m", type=finite_float,
           nargs=3, metavar=("X", "Y", "Z"), default=list(BUS.com), applies=_spacecraft, group="robot"),
    Option("mount_xyz", ("--mount-xyz",), "--arm-urdf's mount position in the bus frame, m", type=finite_float,
           nargs=3, metavar=("X", "Y", "Z"), default=list(BUS.mount_xyz), applies=_spacecraft, group="robot"),
    Option("mount_rpy", ("--mount-rpy",), "--arm-urdf's mount orientation, rad", type=finite_float, nargs=3,
           metavar=("R", "P", "Y"), default=list(BUS.mount_rpy), applies=_spacecraft, group="robot"),
    Option("q0", ("--q0",), "initial shape, rad or m", kind="joints", metavar="JOINT=VALUE", group="shape"),
    Option("setpoint", ("--setpoint",), "set-point q_d (the trajectory's end), rad or m", kind="joints",
           metavar="JOINT=VALUE", applies=_setpoint, group="shape"),
    Option("via", (), "--task trajectory's waypoints between q0 and the set-point (file only: a list of shapes)",
           check=_check_via, applies=_via),
    Option("stiffness", ("--stiffness",), "joint stiffness K of the task, N m/rad or N/m", kind="joints",
           metavar="JOINT=VALUE", group="shape"),
    Option("damping", ("--damping",), "joint damping D of the task, N m s/rad or N s/m", kind="joints",
           metavar="JOINT=VALUE", group="shape"),
    Option("observer_gains", ("--observer-gains",), "observer gains k (1/s), l_rot (N m/rad), l_trans (N/m) of "
           "eq. 51 (default: the robot's, scaled by its locked inertia)", type=positive, nargs=3,
           metavar=("K", "L_ROT", "L_TRANS"), group="shape"),
    Option("tumble", ("--tumble",), "initial locked angular velocity mu_omega(0), deg/s in the base frame (default "
           "the paper's 10 1.14 0)", type=finite_float, nargs=3, metavar=("WX", "WY", "WZ"),
           default=lambda c: None if c["scenario"] == "realistic" else [10.0, 1.14, 0.0], applies=_tumble,
           group="shape"),
    Option("tumble_scale", ("--tumble-scale",), "the initial locked velocity as a multiple of --tumble (or of the "
           "realistic scenario's draw; default 1, 0 with --task reorient, which starts at rest)", type=finite_float,
           default=lambda c: 0.0 if c["task"] == "reorient" else 1.0, group="shape"),
    Option("loop_delay", ("--loop-delay",), "delay from the state a command is computed from to the command acting "
           "on the plant, s (default: one control period, as ros2_control and the DDS loop); 0: the papers' loop",
           type=non_negative, metavar="SECONDS", applies=_loop, group="loop"),
    Option("loop_jitter", ("--loop-jitter",), "further delay of each command, uniform in [0, SECONDS]",
           type=non_negative, default=0.0, metavar="SECONDS", applies=_loop_measured_sets, group="loop"),
    Option("loop_drop", ("--loop-drop",), "probability that a command is lost, the plant keeping the last one",
           type=probability, default=0.0, metavar="P", applies=_loop_measured_sets, group="loop"),
    Option("loop_measured", ("--loop-measured",), "jitter and lost commands from a ROS loop that `make bench` "
           "measured (out/bench/ros_loop.json; sim/loop.py measured_loop)", metavar="JSON", applies=_loop,
           group="loop", path=True),
    Option("ros", ("--ros",), "run as two ROS 2 processes (mujoco_sim + floating_base_controller with "
           "config/orbital_robot.yaml and these options) over DDS, shared memory only, in domain FBC_ROS_DOMAIN "
           "(default 61)", kind="switch", default=False, applies=_ros, in_file=False),
    Option("compare", ("--compare",), "with --ros: also run the ROS-free loop of the same scenario and compare",
           kind="switch", default=False, applies=_compare, in_file=False),
    Option("out", ("--out",), "report directory", type=writable_dir, default="out/orbital", in_file=False),
    *video_options(speed=0.5),
]


def register(families):
    p = families.add_parser("orbital", help="orbital robot with momentum: observer + compensating shape controller "
                                            "([Mishra2023] Sec. V-A), or another robot (--urdf, --arm-urdf)",
                            description=__doc__.split("\n\n")[0].replace("``", ""))
    groups = {"sensor": p.add_argument_group("the base's pose sensor"),
              "robot": p.add_argument_group(SPACECRAFT), "shape": p.add_argument_group(SHAPE),
              "loop": p.add_argument_group(LOOP), "video": p.add_argument_group(VIDEO)}
    add_options(p, TABLE, groups)
    p.set_defaults(func=run)


def configuration(args):
    """``(config, asked)`` of the command line and its ``--config`` file (``cli/_table.py``), with
    ``--controller`` and ``--loop-measured`` resolved into what they set."""
    file_values = read_config(args.config, TABLE) if args.config else {}
    config, asked = resolve(TABLE, args, file_values, args.config)
    if config["controller"]:
        from floating_base_control.experiments.orbital.campaign import INTEGRAL_TIME_S
        compensation, integral = CONTROLLERS[config["controller"]]
        config.update(compensation=compensation, integral_time=INTEGRAL_TIME_S if integral else 0.0, controller=None)
    if config["loop_measured"]:
        from floating_base_control.sim.loop import measured_loop
        try:
            measured = json.loads(Path(config["loop_measured"]).read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"--loop-measured: cannot read {config['loop_measured']}: {exc}") from None
        config["loop_jitter"], config["loop_drop"] = measured_loop(measured)
        config["loop_measured"] = None
    return config, asked


# -- the run ---------------------------------------------------------------------------------------------

def load_robot(config, out):
    """``(model, urdf_path, label)`` of the configured robot; a mounted arm or a robot with locked joints is
    written to ``out/robot.urdf`` (what the plant and the controller load)."""
    try:
        return _load_robot(config, out)
    except ModelError as exc:         # a lock the loader refuses (outside the range, no such joint) is --lock's
        raise ModelError(f"--lock: {exc}" if "cannot lock" in str(exc) else str(exc)) from None


def _load_robot(config, out):
    from floating_base_control.model import FloatingBaseModel
    from floating_base_control.resources import orbital_robot_urdf
    from floating_base_control.robots.orbital.spacecraft import mount_arm
    from floating_base_control.urdf_loader import describe_urdf, read_urdf, with_absolute_meshes

    locks = config["lock"] or {}
    if config["arm_urdf"]:
        arm = config["arm_urdf"]
        bus = Spacecraft(config["spacecraft_mass"], tuple(config["spacecraft_com"]),
                         tuple(config["spacecraft_inertia"]), tuple(config["mount_xyz"]), tuple(config["mount_rpy"]))
        xml, label = mount_arm(read_urdf(arm), bus, str(arm), locks), f"{arm} on a {bus.mass:g} kg spacecraft"
    elif config["urdf"] and locks:
        xml, label = describe_urdf(read_urdf(config["urdf"]), config["urdf"], locks).urdf, config["urdf"]
    else:
        path = config["urdf"] or orbital_robot_urdf()
        label = path if config["urdf"] else "the package's orbital robot (urdf/orbital_robot.urdf)"
        return FloatingBaseModel.from_urdf(path), path, label
    source = Path(config["arm_urdf"] or config["urdf"])
    path = out / "robot.urdf"
    path.write_text(with_absolute_meshes(xml, source.parent), encoding="utf-8")
    if locks:
        label += ", " + ", ".join(f"{name} locked at {value:g}" for name, value in locks.items())
    return FloatingBaseModel.from_urdf(path), str(path), label


def joint_map(model, values, default, name):
    """``default`` with the joints named in ``values`` (a dict, or a list of every joint's value) replaced;
    an unknown joint is an :class:`InputError` naming ``name``."""
    import numpy as np
    q = np.array(default, dtype=float)
    if isinstance(values, list):
        if len(values) != model.n:
            raise InputError(f"{name}: {len(values)} values for {model.n} joints ({', '.join(model.joint_names)})")
        values = dict(zip(model.joint_names, values))
    for joint, value in (values or {}).items():
        if joint not in model.joint_names:
            raise InputError(f"{name}: unknown joint {joint!r}; the joints are {', '.join(model.joint_names)}")
        q[model.joint_names.index(joint)] = value
    return q


def check_in_range(model, q, name):
    """Refuse a shape outside the joints' position limits (an unlimited joint takes any value)."""
    for joint, value, (lo, hi) in zip(model.joint_names, q, model.position_limits):
        if not lo <= value <= hi:
            raise InputError(f"{name}: {joint} = {value:g} is outside the joint's range [{lo:.4g}, {hi:.4g}]")


def _gains(model, values, default, name, allow_zero):
    gains = joint_map(model, values, default, name)
    for joint, g in zip(model.joint_names, gains):
        if g < 0 or (g == 0 and not allow_zero):
            raise InputError(f"{name}: {joint} = {g:g} must be {'>= 0' if allow_zero else '> 0'}")
    return gains


def _shape_gains(model, q0, q_d):
    from floating_base_control.robots.orbital.spacecraft import default_shape_gains
    gains = default_shape_gains(model, q0, q_d)
    return gains.stiffness, gains.damping


def build(config, out, asked=()):
    """``(scenario, settings, urdf_path, robot label)`` of ``config``; fills its robot-dependent defaults
    (``q0``, ``setpoint``, ``via``, ``stiffness``, ``damping``, ``observer_gains``) with the values the run
    uses, so that the configuration written is the whole run.  ``asked``: the options the user gave
    (:func:`configuration`), for the one whose applicability depends on the robot (``--joint-dynamics``)."""
    import numpy as np
    from floating_base_control.estimation.observer import ObserverGains
    from floating_base_control.experiments.orbital import tasks
    from floating_base_control.experiments.orbital.scenario import OrbitalScenario
    from floating_base_control.robots.orbital.spacecraft import default_observer_gains, default_shape_setpoints

    model, urdf_path, label = load_robot(config, out)
    if config["joint_dynamics"] == "ideal" and not (model.description.damping or model.description.friction):
        raise InputError(f"{dict(asked).get('joint_dynamics', '--joint-dynamics')}: {label} has no joint damping or "
                         "friction in its URDF: the plant's joints are ideal either way")
    own = not (config["urdf"] or config["arm_urdf"])          # the package's robot: the paper's values
    paper, task_defaults = OrbitalScenario(), tasks.TaskSettings()
    q0, q_d = (np.array(paper.q0), np.array(paper.q_d)) if own else default_shape_setpoints(model)
    q0 = joint_map(model, config["q0"], q0, "--q0")
    q_d = joint_map(model, config["setpoint"], q_d, "--setpoint")
    if config["task"] == "reorient" and config["q0"] is None:      # the arm starts at the set-point, at rest
        q0 = q_d
    check_in_range(model, q0, "--q0")
    check_in_range(model, q_d, "--setpoint")
    task = config["task"]
    via = task_defaults.via if own else tasks.default_via(model, q0, q_d)
    if config["via"] is not None:
        via = [joint_map(model, p, q0, f"via[{i}]") for i, p in enumerate(config["via"])]
        for i, p in enumerate(via):
            check_in_range(model, p, f"via[{i}]")
    settings = replace(task_defaults, via=tuple(tuple(map(float, p)) for p in via))
    if task == "reorient":
        if not any(config["axis"]):
            raise InputError("--axis must not be zero")
        settings.reorient = replace(settings.reorient, axis=tuple(config["axis"]), angle_deg=config["angle_deg"],
                                    duration_s=config["duration"])
    if task == "setpoint":
        K, D = (paper.stiffness, paper.damping) if own else _shape_gains(model, q0, q_d)
    elif own:
        K, D = task_defaults.stiffness, task_defaults.damping
    else:
        K, D = tasks.default_trajectory_gains(settings, model, q0, q_d)
    K = _gains(model, config["stiffness"], K, "--stiffness", False)
    D = _gains(model, config["damping"], D, "--damping", True)
    if config["observer_gains"] is not None:
        observer = ObserverGains(*config["observer_gains"])
    elif task == "end-effector":
        observer = ObserverGains(*task_defaults.ee_observer)
    else:
        observer = ObserverGains() if own else default_observer_gains(model, q0)
    plain = lambda v: tuple(float(x) for x in v)         # noqa: E731  (to YAML, and to ROS parameters)
    names = model.joint_names
    config.update(q0=dict(zip(names, plain(q0))), setpoint=dict(zip(names, plain(q_d))),
                  stiffness=dict(zip(names, plain(K))), damping=dict(zip(names, plain(D))),
                  observer_gains=[observer.k, observer.l_rot, observer.l_trans],
                  via=[dict(zip(names, p)) for p in settings.via])
    if task == "setpoint":
        gains = dict(stiffness=plain(K), damping=plain(D))
    else:                  # the task's joint gains; the scenario's (eq. 52's) stay the robot's
        settings = replace(settings, stiffness=plain(K), damping=plain(D), ee_observer=plain(config["observer_gains"]))
        gains = dict(stiffness=paper.stiffness, damping=paper.damping) if own else \
            dict(zip(("stiffness", "damping"), map(plain, _shape_gains(model, q0, q_d))))
    common = dict(duration_s=config["duration"] or 30.0, compensation=config["compensation"],
                  integral_time_s=config["integral_time"], model_mass_error=config["mass_error"], seed=config["seed"],
                  joint_dynamics=config["joint_dynamics"], q0=plain(q0), q_d=plain(q_d), observer=observer,
                  loop_delay_s=config["loop_delay"], loop_jitter_s=config["loop_jitter"], loop_drop=config["loop_drop"],
                  **gains)
    if config["scenario"] == "realistic":
        from floating_base_control.experiments.orbital.dispersions import REALISTIC
        from floating_base_control.experiments.orbital.realistic import realistic_scenario
        dispersions = {k: tuple(v) if isinstance(v, list) else v for k, v in (config["dispersions"] or {}).items()}
        conditions = replace(REALISTIC, pose_position=config["pose_position"], **dispersions)
        scenario = realistic_scenario(common.pop("seed"), conditions, **common)
    else:
        noise = 1e-3 * config["pose_noise"]
        scenario = OrbitalScenario(urdf=None if own else urdf_path, pose_rate_hz=config["pose_rate"],
                                   pose_rotation_noise=noise, pose_position_noise=noise,
                                   pose_latency_s=config["latency"], mu0_omega_deg_s=plain(config["tumble"]), **common)
    if config["tumble_scale"] != 1.0:
        scenario = replace(scenario,
                           mu0_omega_deg_s=tuple(config["tumble_scale"] * w for w in scenario.mu0_omega_deg_s))
    return scenario, settings, urdf_path, label


def describe(config, scenario, urdf_path, label):
    """The header: what the run uses, as resolved (not as asked)."""
    from floating_base_control.experiments.orbital.scenario import loop_delay
    lines = [f"robot: {label}"]
    s = scenario
    tumble = "[" + ", ".join(f"{w:.3g}" for w in s.mu0_omega_deg_s) + "] deg/s"
    if s.name == "realistic":
        sensor = (f"star tracker {s.pose_rate_hz:g} Hz +-{100 * s.pose_rate_jitter:g} %, "
                  f"{1e3 * s.pose_latency_s:g} ms latency + up to {1e3 * s.pose_latency_jitter_s:g} ms, attitude noise "
                  f"{s.pose_rotation_noise:g} rad + bias {s.pose_attitude_bias:g} rad, "
                  f"{100 * s.pose_dropout:g} % lost, " + ("with position" if s.pose_position else
                                                          "attitude only (the base position is unobservable)"))
        scaled = f", x {config['tumble_scale']:g}" if config["tumble_scale"] != 1 else ""
        lines.append(f"scenario realistic, seed {s.seed} (dispersions drawn from it): {sensor}; tumble {tumble} "
                     f"(drawn{scaled})")
    else:
        lines.append(f"scenario ideal: pose {s.pose_rate_hz:g} Hz, noise {1e3 * s.pose_rotation_noise:g} mrad / "
                     f"{1e3 * s.pose_position_noise:g} mm, latency {1e3 * s.pose_latency_s:g} ms; tumble {tumble}")
    if config["ros"]:
        loop = "over ROS 2 (mujoco_sim + floating_base_controller)"
    else:
        delay = loop_delay(s)
        loop = ("zero loop delay (the papers' loop)" if delay == 0 and not s.loop_jitter_s and not s.loop_drop else
                f"loop delay {1e3 * delay:g} ms" + (" (one control period, as ros2_control)" if s.loop_delay_s is None
                                                     else "")
                + (f", jitter up to {1e3 * s.loop_jitter_s:g} ms" if s.loop_jitter_s else "")
                + (f", {100 * s.loop_drop:g} % of the commands lost" if s.loop_drop else ""))
    integral = f", integral time {s.integral_time_s:g} s" if config["task"] == "setpoint" else ""
    duration = "from the plan" if config["duration"] is None else f"{s.duration_s:g} s"
    lines.append(f"task {config['task']}: {duration}, compensation {s.compensation}{integral}, {loop}")
    return lines


KEYS = ["final_joint_error_deg", "final_observer_pose_error", "final_observer_velocity_error",
        "momentum_drift_rel", "tau_hat_total_variation_ratio", "status", "converged", "scenario",
        "final_observer_attitude_error_rad", "max_position_limit_overrun_rad", "max_velocity_limit_overrun_rad_s"]
TASK_KEYS = ["task", "tracking_rms_joint_error_deg", "final_joint_error_deg", "max_joint_error_deg",
             "final_ee_position_error_m", "final_ee_orientation_error_deg", "min_ee_position_error_m",
             "min_ee_orientation_error_deg", "ee_time_within_1mm_0.1deg_s", "torque_saturated_fraction", "status"]
REORIENT_KEYS = ["task", "target_rotation_deg", "final_base_rotation_error_deg", "cycles", "duration_s",
                 "planning_time_s", "rotation_per_cycle_deg", "baseline_rotation_per_cycle_deg",
                 "max_joint_speed_ratio", "min_joint_limit_margin_rad", "arm_spacecraft_contacts", "task_status",
                 "status"]
CONFIG_HEADER = ("The configuration of a run of `fbc demo orbital`, as it ran (every option that applied, with its "
                 "value).\n`fbc demo orbital --config {path}` repeats it; options on the command line override it.")


def run(args):
    from floating_base_control.experiments.orbital import report

    config, asked = configuration(args)
    out = Path(config["out"])
    out.mkdir(parents=True, exist_ok=True)
    with _run.warnings_to(out / "warnings.log"):
        scenario, settings, urdf_path, label = build(config, out, asked)
        write_config(out / "scenario.yaml", TABLE, config, CONFIG_HEADER.format(path=out / "scenario.yaml"))
        for line in describe(config, scenario, urdf_path, label):
            print(line)
        print(f"writing {out}/ (scenario.yaml: this run's configuration)", flush=True)
        progress = _run.Progress(scenario.duration_s)
        try:
            log, summary = _simulate(config, scenario, settings, progress)
        finally:
            progress.close()
        summary["configuration_file"] = "scenario.yaml"
        write_results(out, log, summary)
        if config["task"] == "setpoint":
            report.plot_orbital(out, log, summary)
            shown = report.printed_figures(summary, KEYS)
            if "ros_free" in summary:
                shown = {"ros": shown, "ros_free": summary["ros_free"]}
        else:
            from floating_base_control.experiments.orbital import tasks
            tasks.plot(out, log, summary)
            shown = {k: summary.get(k) for k in (REORIENT_KEYS if config["task"] == "reorient" else TASK_KEYS)}
        if config["video"]:
            write_video(out / "video.mp4", urdf_path, log, config)
    print(json.dumps(shown, indent=2))


def _simulate(config, scenario, settings, progress):
    from floating_base_control.experiments.orbital import scenario as orbital
    from floating_base_control.experiments.orbital import tasks
    task = config["task"]
    if config["ros"]:
        from floating_base_control.ros import orbital_demo as demo
        if task != "setpoint":    # the node's joint task uses the stiffness and damping parameters: the task's
            scenario = replace(tasks.task_scenario(scenario, task, settings), stiffness=settings.stiffness,
                               damping=settings.damping)
            return demo.run(scenario, progress=progress, task=task, settings=settings)
        log, summary = demo.run(scenario, progress=progress)
        if config["compare"]:
            from floating_base_control.experiments.orbital.report import printed_figures
            print("the same scenario without ROS (one process, one control period of loop delay):", flush=True)
            summary["ros_free"] = printed_figures(orbital.run(scenario)[1], KEYS)
        return log, summary
    if task == "setpoint":
        return orbital.run(scenario, progress=progress)
    return tasks.run_task(scenario, task, settings, progress=progress)


def write_results(out, log, summary):
    from floating_base_control.results import write_csv, write_json
    write_json(out / "summary.json", summary)
    write_csv(out / "timeseries.csv", log)


def write_video(path, urdf_path, log, config):
    """The run rendered by MuJoCo (``sim/video.py``), a camera following the robot."""
    seconds = render(path, urdf_path, log, config)
    print(f"wrote {path} ({seconds:.1f} s of video, {1 / config['video_speed']:g} s per simulated second)")


def render(path, urdf_path, log, config, **scene):
    """``sim/video.py``'s video of ``log`` (arrays of ``t``, ``base_position``, ``base_quaternion``, ``q``) with
    the ``--video-*`` options of ``config``, with progress; returns its length, s."""
    from floating_base_control.sim.video import render_run
    width, height = map(int, config["video_size"].split("x"))
    progress = _run.Progress((log["t"][-1] - log["t"][0]) / config["video_speed"], unit="s of video rendered")
    try:
        return render_run(path, urdf_path, log["t"], log["base_position"], log["base_quaternion"], log["q"],
                          speed=config["video_speed"], size=(width, height), progress=progress, **scene)
    finally:
        progress.close()
