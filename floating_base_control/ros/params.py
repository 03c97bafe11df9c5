"""Parameters of the ROS 2 nodes, described once (ROS-free, so tests can check config and launch files).

Every gain and limit has a description and a range, which rqt_reconfigure
shows as a slider; structural parameters (URDF, joints, topics, frames, rates)
are read-only.  Per-joint parameters are named ``<group>.<joint>``.

One coherent module: the table of every node's parameters, one function per node sharing
the structural, real-time and monitoring groups; a node's whole interface reads in one place.
"""
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from floating_base_control.control import stability
from floating_base_control.control.end_effector import (DEFAULT_DAMPING_RATIO, DEFAULT_NULLSPACE_DAMPING,
                                                       DEFAULT_NULLSPACE_STIFFNESS, DEFAULT_STIFFNESS, CartesianGains,
                                                       FrameWorkspace, frame_id)
from floating_base_control.control.shape import COMPENSATIONS
from floating_base_control.control.watchdog import SAFE_MODES
from floating_base_control.estimation.health import HealthConfig
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.robots.orbital.spacecraft import Spacecraft
from floating_base_control.urdf_loader import MIMIC_MODES


@dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    description: str
    range: Optional[Tuple[float, float]] = None     #: closed interval (of integers for an int default)
    read_only: bool = False
    choices: Optional[Tuple[str, ...]] = None       #: allowed string values


def robot_params():
    """How the orbital nodes load their robot: the same options as ``FloatingBaseModel.from_urdf``
    and ``robots.orbital.spacecraft`` (see :func:`robot_options`)."""
    ro = dict(read_only=True)
    s = Spacecraft()
    return [
        ParamSpec("urdf", "", "URDF of the robot (root link = floating base); empty: the package's "
                  "orbital robot", **ro),
        ParamSpec("arm_urdf", "", "URDF of an arm to mount on the spacecraft.* bus instead of 'urdf' "
                  "(its root link is bolted to the bus at the mount pose)", **ro),
        ParamSpec("spacecraft.mass", s.mass, "mass of the bus with arm_urdf (kg)", (1e-6, 1e9), **ro),
        ParamSpec("spacecraft.com", list(s.com), "CoM of the bus in its frame (m)", **ro),
        ParamSpec("spacecraft.inertia", list(s.inertia), "inertia of the bus about its CoM: ixx iyy izz "
                  "ixy ixz iyz (kg m^2)", **ro),
        ParamSpec("spacecraft.mount_xyz", list(s.mount_xyz), "arm mount position in the bus frame (m)", **ro),
        ParamSpec("spacecraft.mount_rpy", list(s.mount_rpy), "arm mount orientation, roll pitch yaw (rad)", **ro),
        ParamSpec("locked_joints", [""], "joints held fixed (a gripper, a head); [''] = none", **ro),
        ParamSpec("locked_positions", [0.0], "their positions (rad or m), one per locked joint", **ro),
        ParamSpec("mimic", "lock", "mimic joints: lock (each group at its leader's locked position, "
                  "default 0 within the limits) or error", choices=MIMIC_MODES, **ro),
    ]


#: Names of :func:`robot_params`.
ROBOT_PARAMS = tuple(spec.name for spec in robot_params())


def robot_options(get):
    """Keyword arguments of ``robots.orbital.spacecraft.load_robot`` from the parameters (``get(name)``)."""
    names = [n for n in get("locked_joints") if n]
    positions = list(get("locked_positions"))
    if names and len(positions) != len(names):
        from floating_base_control.validation import InputError
        raise InputError(f"parameter locked_positions needs one value per locked joint ({len(names)}: "
                         f"{names}), got {len(positions)}")
    spacecraft = Spacecraft(get("spacecraft.mass"), tuple(get("spacecraft.com")), tuple(get("spacecraft.inertia")),
                            tuple(get("spacecraft.mount_xyz")), tuple(get("spacecraft.mount_rpy")))
    return dict(urdf=get("urdf"), arm_urdf=get("arm_urdf"), spacecraft=spacecraft,
                locked=dict(zip(names, map(float, positions))), mimic=get("mimic"))


def _structural(node_name):
    return robot_params() + [
        ParamSpec("joints", [""], "joint names in command order (ros2_control forward_command_controller "
                  "'joints'); [''] = all joints of the URDF in Pinocchio's order", read_only=True),
        ParamSpec("world_frame", "world", "inertial frame of the base pose (REP-105)", read_only=True),
        ParamSpec("base_frame", "base_link", "the floating base link", read_only=True),
        ParamSpec("joint_states_topic", "joint_states", "sensor_msgs/JointState input or output",
                  read_only=True),
        ParamSpec("base_pose_topic", "base_pose", "base pose, geometry_msgs/PoseStamped or "
                  "nav_msgs/Odometry (see base_pose_type)", read_only=True),
        ParamSpec("command_topic", "effort_controller/commands", "std_msgs/Float64MultiArray joint "
                  "efforts in 'joints' order", read_only=True),
    ]


def _realtime():
    """How a node process is scheduled (``runtime.spin``), as ros2_control's controller manager is."""
    return [ParamSpec("realtime_priority", 0, "SCHED_FIFO priority of the node's process (1-99; ros2_control "
                      "uses 50), if permitted (else a warning); 0: ordinary scheduling", (0, 99), read_only=True),
            ParamSpec("cpu_affinity", [-1], "CPUs the node's process runs on, as ros2_control's cpu_affinity "
                      "(else a warning); [-1] or []: any", read_only=True)]


def _monitoring():
    """What every controller node checks on its inputs and how it escalates (control/plausibility.py)."""
    return [
        ParamSpec("stamps.future_tolerance", 0.5, "a message stamped further in the future than this (s) "
                  "is refused: the clocks disagree", (0.0, 60.0)),
        ParamSpec("stamps.max_age", 1.0, "a message stamped longer ago than this (s) is refused", (0.001, 60.0)),
        ParamSpec("limits.velocity_factor", 3.0, "a joint velocity above this many times the URDF's limit is "
                  "implausible (a fault, not a motion): the joint state is refused", (1.0, 1000.0)),
        ParamSpec("diagnostics.error_after", 5.0, "a fault that lasts longer than this (s) is reported as "
                  "ERROR, not WARN", (0.0, 3600.0)),
    ]


#: Joint gains of a controller whose robot is not known yet (N m/rad, N m s/rad): the node itself declares its
#: robot's, :func:`default_joint_gains`.
UNKNOWN_ROBOT_GAINS = (10.0, 1.0)
STIFFNESS_RANGE, DAMPING_RANGE = (0.0, 2000.0), (0.001, 200.0)


def default_joint_gains(model, control_period=1e-3):
    """``(K, D)`` per joint: ``control/stability.py``'s ``robot_joint_gains`` (stable with margin at one period of
    loop delay and over DDS over the middle of the joint range and random shapes within it; the node warns where
    a shape lacks the margins), within the parameters' ranges."""
    K, D = stability.robot_joint_gains(model, control_period)
    return np.clip(K, *STIFFNESS_RANGE), np.clip(D, *DAMPING_RANGE)


def controller_params(joint_names, position_limits, effort_limits, joint_gains=None):
    """Parameters of ``floating_base_controller`` for a robot with these joints and limits, ``joint_gains``
    ``(K, D)`` the default stiffness and damping per joint (:func:`default_joint_gains`; ``None``:
    :data:`UNKNOWN_ROBOT_GAINS`)."""
    g, h = ObserverGains(), HealthConfig()
    specs = _structural("floating_base_controller") + [
        ParamSpec("base_pose_type", "pose", "message type on base_pose_topic", read_only=True,
                  choices=("pose", "odometry")),
        ParamSpec("control_rate_hz", 1000.0, "control ticks per second", (10.0, 2000.0), read_only=True),
        ParamSpec("estimate_rate_hz", 100.0, "rate of ~/base_estimate, ~/locked_velocity, ~/momentum "
                  "and ~/compensation", (1.0, 1000.0), read_only=True),
        ParamSpec("diagnostics_rate_hz", 2.0, "rate of /diagnostics", (0.1, 50.0), read_only=True),
        ParamSpec("autostart", True, "configure and activate at start (else wait for lifecycle "
                  "transitions)", read_only=True),
        ParamSpec("timing_log", "", "if set: write every tick's time, compute time and joint-state "
                  "age to this CSV file at shutdown (for benchmarks)", read_only=True),
        ParamSpec("tick_on_joint_state", False, "one control step per new joint state (the robot's clock "
                  "drives the loop, as in ros2_control); the timer then only acts as a watchdog (safe "
                  "command when joint states stop for two periods). false: one step per timer tick",
                  read_only=True),
        ParamSpec("gc_between_ticks", True, "keep Python's garbage collector out of the control step: "
                  "freeze what exists at activation, collect the young generations after a tick",
                  read_only=True),
        ParamSpec("hold_on_activate", True, "at activation, set every setpoint to the measured joint "
                  "position (no jump); false: use the setpoint parameters", read_only=True),
        ParamSpec("compensation", "tau2", "momentum compensation, [Mishra2023] eq. 45: tau1 (mu and "
                  "qdot), tau2 (mu only) or none (PD only)", choices=tuple(c for c, law in COMPENSATIONS.items()
                                                                           if not law.true_mu)),
        ParamSpec("observer.k", g.k, "observer injection gain K = k I, eq. 37 (1/s)", (0.01, 200.0)),
        ParamSpec("observer.l_rot", g.l_rot, "observer stiffness on the rotation error, eq. 51 "
                  "(N m/rad)", (0.01, 1e5)),
        ParamSpec("observer.l_trans", g.l_trans, "observer stiffness on the translation error, eq. 51 "
                  "(N/m)", (0.01, 1e5)),
        ParamSpec("watchdog.max_joint_state_age", 0.05, "joint states older than this (s) trigger the "
                  "safe command", (0.001, 10.0)),
        ParamSpec("watchdog.max_base_pose_age", 2.0, "base poses older than this (s) trigger the safe "
                  "command", (0.01, 60.0)),
        ParamSpec("watchdog.safe_mode", "damping", "safe command: zero torque or joint damping",
                  choices=SAFE_MODES),
        ParamSpec("watchdog.safe_damping", 1.0, "damping of the safe command (N m s/rad)", (0.0, 100.0)),
        ParamSpec("health.innovation_threshold", h.threshold, "innovation gate on base pose samples: a sample "
                  "further from the observer's prediction than this is rejected; the distance is "
                  "sqrt(angle^2 + (translation / health.length)^2) (rad)", (0.001, 100.0)),
        ParamSpec("health.length", h.length, "characteristic length of the robot (m): a translation of this "
                  "weighs as much as a rotation of one radian in the innovation", (0.001, 100.0)),
        ParamSpec("health.reinit_after", float(h.reinit_after), "this many consecutive rejected samples that "
                  "agree with each other re-initialize the pose estimate on them (a re-localisation)",
                  (1.0, 1000.0)),
        ParamSpec("health.max_angular_rate", h.max_angular_rate, "a locked angular velocity estimate above "
                  "this (rad/s) is implausible: the observer restarts", (0.01, 1000.0)),
        ParamSpec("health.max_speed", h.max_speed, "a locked linear velocity estimate above this (m/s) is "
                  "implausible: the observer restarts", (0.01, 1000.0)),
        *_monitoring(),
        *_realtime(),
    ]
    n = len(joint_names)
    K, D = joint_gains if joint_gains is not None else (np.full(n, UNKNOWN_ROBOT_GAINS[0]),
                                                        np.full(n, UNKNOWN_ROBOT_GAINS[1]))
    for j, (lo, hi), effort, k, d in zip(joint_names, position_limits, effort_limits, K, D):
        lo, hi, effort = float(max(lo, -1e3)), float(min(hi, 1e3)), float(min(effort, 1e4))
        specs += [
            ParamSpec(f"stiffness.{j}", float(k), f"task stiffness of {j}, eq. 52 (N m/rad)", STIFFNESS_RANGE),
            ParamSpec(f"damping.{j}", float(d), f"task damping of {j}, eq. 52 (N m s/rad)", DAMPING_RANGE),
            ParamSpec(f"integral.{j}", 0.0, f"integral gain K_i of {j} (PD + I with anti-windup, "
                      "control/setpoint.py; 0: PD only) (N m/(rad s))", (0.0, 1000.0)),
            ParamSpec(f"setpoint.{j}", min(max(0.0, lo), hi), f"set-point of {j} (rad or m)", (lo, hi)),
            ParamSpec(f"effort_limit.{j}", effort, f"torque limit of {j} (N m), at most the URDF's",
                      (0.0, effort)),
        ]
    return specs + motion_params()


#: Motion tasks of the controller node: eq. 52 on the set-point parameters, joint tracking of
#: ~/joint_trajectory and ~/reference, or the end-effector impedance to ~/target_pose.
MOTION_TASKS = ("setpoint", "joint", "end_effector", "reorient")
CARTESIAN_AXES = ("rx", "ry", "rz", "x", "y", "z")


def motion_params():
    """Parameters of the motion tasks (docs/how-to/command-motion.md): the task, its limits and the Cartesian
    impedance."""
    specs = [
        ParamSpec("task", "setpoint", "motion task: setpoint (eq. 52 on the setpoint parameters), joint "
                  "(track ~/joint_trajectory and ~/reference with the stiffness and damping parameters), "
                  "end_effector (Cartesian impedance to ~/target_pose) or reorient (turn the base to "
                  "~/base_attitude_target with joint loops, docs/results/reorientation.md); switched while active "
                  "by a blend",
                  choices=MOTION_TASKS),
        ParamSpec("task_blend_s", 0.5, "duration of the blend from one task to the next (s)", (0.01, 10.0)),
        ParamSpec("trajectory.max_acceleration", 5.0, "acceleration limit of what the joint task tracks "
                  "(rad/s^2, every joint; velocity limits: the URDF's)", (0.01, 1000.0)),
        ParamSpec("trajectory.start_tolerance", 0.01, "a trajectory's waypoint at its start (MoveIt's first point, "
                  "time_from_start 0) must be this close to the reference there, every joint (rad or m; MoveIt's "
                  "allowed_start_tolerance)", (0.0, 1.0)),
        ParamSpec("trajectory.allow_partial_joints_goal", False, "accept trajectories that name only some joints: "
                  "the others keep their position (joint_trajectory_controller's allow_partial_joints_goal)"),
        ParamSpec("trajectory.allow_nonzero_velocity_at_trajectory_end", False, "accept trajectories whose last "
                  "point moves (a streaming client such as MoveIt Servo); the reference then stops at its end "
                  "(joint_trajectory_controller's parameter of the same name)"),
        ParamSpec("reference.max_age", 1.0, "set-points (~/reference) and targets stamped earlier than this (s) "
                  "are refused as stale (a trajectory: only if it ends in the past, as in "
                  "joint_trajectory_controller)", (0.001, 3600.0)),
        ParamSpec("reorient.max_cycles", 100, "a base attitude target needing more loop cycles is refused",
                  (1, 1000), read_only=True),
        ParamSpec("reorient.margin", 0.05, "the loops keep this far inside the joint limits (rad)", (0.0, 1.0),
                  read_only=True),
        ParamSpec("reorient.settle_s", 2.0, "at rest before a plan and at the end, the attitude estimate is "
                  "averaged over the second half of this (s)", (0.0, 60.0)),
        ParamSpec("reorient.lead_s", 1.0, "the estimate goes to the planner this long before each cycle boundary: "
                  "the planner's time for the remaining cycles (s)", (0.01, 60.0)),
        ParamSpec("reorient.tolerance_deg", 0.05, "above this attitude error at rest a correction is planned "
                  "(deg)", (0.0, 180.0)),
        ParamSpec("reorient.max_corrections", 2, "corrections from rest per target", (0, 100)),
        ParamSpec("reorient.start_delay_s", 10.0, "with momentum a plan starts this long after its request "
                  "(the planner's time; it waits at its start for the drift) (s)", (0.0, 600.0)),
        ParamSpec("end_effector.frame", "", "frame driven by the end-effector task ('': the URDF's last frame)",
                  read_only=True),
        ParamSpec("end_effector.max_speed", 0.1, "speed of the reference toward a target (m/s)", (0.001, 2.0)),
        ParamSpec("end_effector.max_angular_speed", 0.3, "angular speed of the reference toward a target "
                  "(rad/s)", (0.001, 5.0)),
        ParamSpec("end_effector.nullspace_stiffness", DEFAULT_NULLSPACE_STIFFNESS, "posture stiffness in the null "
                  "space, every joint "
                  "(N m/rad)", (0.0, 1000.0)),
        ParamSpec("end_effector.feedforward", False, "task-space feedforward of the reference's and the drift's "
                  "acceleration (docs/how-to/command-motion.md); needs a loop that keeps its rate"),
        ParamSpec("end_effector.damping_ratio", DEFAULT_DAMPING_RATIO, "Cartesian damping from this damping "
                  "ratio and the task inertia (factorization design, docs/how-to/command-motion.md); 0: the "
                  "damping.<axis> parameters (no constant per-axis damping damps every direction: "
                  "docs/results/stability.md)", (0.0, 10.0)),
        ParamSpec("end_effector.nullspace_damping", DEFAULT_NULLSPACE_DAMPING, "posture damping in the null space, "
                  "every joint "
                  "(N m s/rad)", (0.0, 100.0)),
    ]
    for axis, stiff in zip(CARTESIAN_AXES, DEFAULT_STIFFNESS):
        unit = ("N m/rad", "N m s/rad") if axis.startswith("r") else ("N/m", "N s/m")
        damp = 0.5 if axis.startswith("r") else 150.0         # used only with damping_ratio 0
        specs += [ParamSpec(f"end_effector.stiffness.{axis}", stiff, f"Cartesian stiffness along world {axis} "
                            f"({unit[0]})", (0.0, 1e5)),
                  ParamSpec(f"end_effector.damping.{axis}", damp, f"Cartesian damping along world {axis} "
                            f"({unit[1]})", (0.001, 1e4))]
    return specs


def sim_params():
    """Parameters of ``mujoco_sim`` (all read-only: they define the simulated hardware)."""
    ro = dict(read_only=True)
    return _structural("mujoco_sim") + [
        ParamSpec("physics_rate_hz", 2000.0, "MuJoCo steps per second (RK4)", (100.0, 20000.0), **ro),
        ParamSpec("publish_rate_hz", 1000.0, "joint states per second", (10.0, 5000.0), **ro),
        ParamSpec("ground_truth_rate_hz", 100.0, "rate of ~/ground_truth and ~/momentum", (1.0, 1000.0), **ro),
        ParamSpec("pose_rate_hz", 10.0, "base pose samples per second", (0.1, 1000.0), **ro),
        ParamSpec("pose_rotation_noise", 1e-3, "pose noise per axis (rad)", (0.0, 1.0), **ro),
        ParamSpec("pose_position_noise", 1e-3, "pose noise per axis (m)", (0.0, 1.0), **ro),
        ParamSpec("pose_latency_s", 0.02, "delay of each pose sample (s)", (0.0, 5.0), **ro),
        ParamSpec("q_noise", 0.0, "joint position noise (rad)", (0.0, 1.0), **ro),
        ParamSpec("qdot_noise", 1e-3, "joint velocity noise (rad/s)", (0.0, 10.0), **ro),
        ParamSpec("q0", [0.0], "initial joint positions ([0.0]: the middle of each joint's range)", **ro),
        ParamSpec("mu0_omega_deg_s", [10.0, 1.14, 0.0], "initial locked angular velocity (deg/s)", **ro),
        ParamSpec("mu0_v", [0.0, 0.0, 0.0], "initial locked linear velocity (m/s)", **ro),
        ParamSpec("command_timeout", 0.05, "apply zero torque when the last command is older (s)",
                  (0.001, 10.0), **ro),
        ParamSpec("wait_for_command", True, "start paused; run the physics from the first command on", **ro),
        ParamSpec("lockstep", False, "after publishing a joint state, step on only once a command has come "
                  "(at most lockstep_timeout of wall time): one publish period of physics per command, "
                  "whatever the machine's load", **ro),
        ParamSpec("lockstep_timeout", 0.1, "longest wait for a command in lockstep (wall s)", (0.001, 10.0), **ro),
        ParamSpec("publish_clock", False, "publish the simulated time on /clock (what every message is "
                  "stamped with), for nodes with use_sim_time", **ro),
        ParamSpec("seed", 0, "noise seed", **ro),
        *_realtime(),
    ]


def _hopper_structural():
    ro = dict(read_only=True)
    return [
        ParamSpec("robot", "revolute", "which hopper of [Feurstein2021]: urdf/hopper_<robot>.urdf",
                  choices=("prismatic", "revolute"), **ro),
        ParamSpec("urdf", "", "URDF of the hopper; empty: the package's URDF of 'robot'", **ro),
        ParamSpec("gravity", 9.81, "g (m/s^2; a hopper needs some): the thesis' revolute tables imply 9.81, "
                  "the prismatic 9.8", (0.1, 30.0), **ro),
        ParamSpec("joints", [""], "joint names in command order; [''] = the URDF's", **ro),
        ParamSpec("world_frame", "world", "inertial frame of the base odometry", **ro),
        ParamSpec("base_frame", "base_link", "the floating base link", **ro),
        ParamSpec("joint_states_topic", "joint_states", "sensor_msgs/JointState", **ro),
        ParamSpec("base_odometry_topic", "base_odometry", "nav_msgs/Odometry: base pose and body twist", **ro),
        ParamSpec("foot_force_topic", "foot_force", "geometry_msgs/WrenchStamped: force.z is the normal "
                  "ground reaction at the foot (N)", **ro),
        ParamSpec("command_topic", "effort_controller/commands", "std_msgs/Float64MultiArray joint efforts",
                  **ro),
        ParamSpec("base_torque_topic", "base_torque_controller/commands", "std_msgs/Float64MultiArray "
                  "[base torque about the plane normal, N m] (the actuated base torque of the polar spring)",
                  **ro),
    ]


def hopper_controller_params():
    """Parameters of ``hopper_controller``: the fields of ``HopperGains`` (live) and structure."""
    from floating_base_control.robots.hopper.contact import CONTACT_RULES
    from floating_base_control.robots.hopper.controller import VARIANTS, HopperGains
    g = HopperGains()
    live = [
        ("K_r", (0.0, 1e5), "radial stiffness, eq. 4.16 (N/m)"),
        ("D_r_flight", (0.0, 1e3), "radial damping in flight (N s/m)"),
        ("D_r_stance", (0.0, 1e3), "radial damping in stance (N s/m)"),
        ("r_des", (0.0, 1.0), "radial rest length r_cf^des (m)"),
        ("K_p", (0.0, 1e3), "polar stiffness, stance only, eq. 4.17 (N m/rad)"),
        ("D_p", (0.0, 1e2), "polar damping, stance only (N m s/rad)"),
        ("alpha_des", (-1.5, 1.5), "polar set-point (rad)"),
        ("K_E", (0.0, 1e3), "energy pump gain, eq. 4.16 (N s/(J m))"),
        ("E_des", (0.0, 1e3), "desired mechanical energy (J)"),
        ("touchdown_force", (0.0, 1e3), "contact_rule foot_force: stance begins above this foot force (N)"),
        ("liftoff_force", (0.0, 1e3), "contact_rule foot_force: flight begins below this foot force (N)"),
        ("min_phase_time", (0.0, 0.1), "contact_rule foot_force: a contact phase lasts at least this long (s)"),
    ]
    ro = dict(read_only=True)
    return _hopper_structural() + [
        ParamSpec("foot_frame", "foot", "the point foot's frame in the URDF", **ro),
        ParamSpec("variant", "II", "polar controller: I radial only, II polar on alpha_i,cf, III polar on the "
                  "locked-velocity CoM frame ([Feurstein2021] 4.1.5)", choices=VARIANTS, **ro),
        ParamSpec("control_rate_hz", 1000.0, "control ticks per second: the rate of the inputs (a step per "
                  "complete set); the foot_height contact rule holds each command for one such period",
                  (10.0, 20000.0), **ro),
        ParamSpec("diagnostics_rate_hz", 2.0, "rate of /diagnostics", (0.1, 50.0), **ro),
        ParamSpec("autostart", True, "configure and activate at start", **ro),
        ParamSpec("timing_log", "", "if set: per-tick timing CSV written at shutdown", **ro),
        ParamSpec("energy_with_springs", g.energy_with_springs, "the energy E includes the virtual springs"),
        ParamSpec("contact_rule", g.contact_rule, "stance/flight: foot_height (the foot at or below the floor, "
                  "from odometry and forward kinematics; the thesis' floor flag) or foot_force (the foot "
                  "force sensor with touchdown_force/liftoff_force hysteresis and min_phase_time)",
                  choices=CONTACT_RULES),
        *[ParamSpec(name, float(getattr(g, name)), text, rng) for name, rng, text in live],
        ParamSpec("q_ref", g.q_ref, "variant III: shape where alpha_c = alpha_i,cf (rad or m); NaN: the "
                  "first measured shape"),
        ParamSpec("base_torque_limit", 20.0, "limit of the base torque (N m)", (0.0, 1e3)),
        ParamSpec("watchdog.max_joint_state_age", 0.01, "joint states older than this (s): zero command",
                  (0.0001, 10.0)),
        ParamSpec("watchdog.max_odometry_age", 0.01, "odometry older than this (s): zero command", (0.0001, 10.0)),
        ParamSpec("watchdog.max_foot_force_age", 0.01, "foot force older than this (s): zero command",
                  (0.0001, 10.0)),
        *_monitoring(),
        *_realtime(),
    ]


def hopper_sim_params():
    """Parameters of ``hopper_sim`` (read-only: they define the simulated hopper)."""
    ro = dict(read_only=True)
    return _hopper_structural() + [
        ParamSpec("physics_rate_hz", 10000.0, "MuJoCo steps per second (implicitfast)", (100.0, 50000.0), **ro),
        ParamSpec("publish_rate_hz", 1000.0, "joint states, odometry and foot force per second",
                  (10.0, 10000.0), **ro),
        ParamSpec("floor", "viscoelastic", "viscoelastic ([Feurstein2021] eqs. 4.13-4.14) or MuJoCo's contact",
                  choices=("viscoelastic", "mujoco"), **ro),
        ParamSpec("floor_K", 10000.0, "floor stiffness (N/m)", (1.0, 1e7), **ro),
        ParamSpec("floor_D", 1000.0, "floor damping (N s/m)", (0.0, 1e6), **ro),
        ParamSpec("base", "planar", "MuJoCo base joint: planar (exact plane) or free (3D)",
                  choices=("planar", "free"), **ro),
        ParamSpec("initial_state", [0.0, 0.3, -2.5174, 1.7802, 0.0, 0.0, 0.0, 0.0],
                  "thesis coordinates (o^x_b, o^y_b, theta_ib, q1, v^x_b, v^y_b, omega_ib, qdot1)", **ro),
        ParamSpec("command_timeout", 0.05, "zero torque when the last command is older (simulated s)",
                  (0.0001, 10.0), **ro),
        ParamSpec("real_time_factor", 1.0, "simulated seconds per wall second (at most; /clock carries the "
                  "simulated time)", (0.01, 10.0), **ro),
        ParamSpec("lockstep", True, "after publishing a state, wait for the joint efforts (and the base torque, "
                  "if published) before stepping on",
                  **ro),
        ParamSpec("lockstep_timeout", 1.0, "longest wait for a command in lockstep (wall s); then the physics "
                  "steps on the commands it has (zero once older than command_timeout)", (0.001, 10.0), **ro),
        ParamSpec("wait_for_command", True, "start paused: offer the initial state (t = 0) to the controller, "
                  "again every lockstep_timeout while unanswered, and run the physics from its first command on",
                  **ro),
        ParamSpec("diagnostics_rate_hz", 1.0, "rate of the simulator's status on /diagnostics (wall)", (0.1, 50.0),
                  **ro),
        *_realtime(),
    ]


#: The parameters of the joint gains (one per joint) and of the Cartesian impedance.
JOINT_GAIN_GROUPS = ("stiffness", "damping", "integral")
CARTESIAN_GAIN_PARAMS = ("end_effector.damping_ratio", "end_effector.nullspace_stiffness",
                         "end_effector.nullspace_damping",
                         *(f"end_effector.{kind}.{axis}" for kind in ("stiffness", "damping")
                           for axis in CARTESIAN_AXES))


def end_effector_frame(get, model):
    """The frame of the end-effector task: the ``end_effector.frame`` parameter, else the URDF's last frame."""
    return get("end_effector.frame") or model.pin_model.frames[model.pin_model.nframes - 1].name


def _loop_verdicts(get, changed, model, q):
    """``{what: (unstable, thin)}`` of :func:`gain_stability`'s loops with the values ``get`` gives."""
    h, names, verdicts = 1.0 / get("control_rate_hz"), model.joint_names, {}
    if any(name.split(".")[0] in JOINT_GAIN_GROUPS for name in changed):
        K, D, K_i = ([get(f"{group}.{j}") for j in names] for group in JOINT_GAIN_GROUPS)
        verdicts["joint gains (stiffness, damping, integral)"] = stability.loop_verdict(
            model.reduced_shape_inertia(q), K, D, h, K_i)
    if get("task") == "end_effector" and any(name in CARTESIAN_GAIN_PARAMS or name == "task" for name in changed):
        gains = CartesianGains([get(f"end_effector.stiffness.{a}") for a in CARTESIAN_AXES],
                               [get(f"end_effector.damping.{a}") for a in CARTESIAN_AXES],
                               np.full(model.n, get("end_effector.nullspace_stiffness")),
                               np.full(model.n, get("end_effector.nullspace_damping")),
                               get("end_effector.damping_ratio") or None)
        ws = FrameWorkspace(model)
        M, K, D = stability.cartesian_joint_gains(model, ws, frame_id(model, end_effector_frame(get, model)), q, gains)
        verdicts["Cartesian impedance (end_effector.*)"] = stability.loop_verdict(M, K, D, h)
    return verdicts


def gain_stability(get, changed, model, q, current=None):
    """``(refusal, warning)`` for new parameter values (``changed``: their names; ``get(name)``: every value, the
    new ones included; ``current(name)``: the values before the change): the joint gains (if changed) and,
    with the end-effector task, the Cartesian impedance (if it or the task changed), linearized at the shape
    ``q`` with one control period of loop delay (``control/stability.py``'s ``loop_verdict``).  Refused: a
    change that makes the loop unstable at ``q`` (one that was unstable there before too is warned about:
    the change does not leave the stable region); warned: margins below the required ones at ``q``.  Both
    depend on the shape (the inertia does): a refusal or a warning says where it holds."""
    verdicts = _loop_verdicts(get, changed, model, q)
    before = (_loop_verdicts(current, changed, model, q) if current is not None
              and any(unstable for unstable, _ in verdicts.values()) else {})
    where = f"at the shape {np.array2string(np.asarray(q), precision=3)}, control_rate_hz {get('control_rate_hz'):g}"
    refusals, warnings = [], []
    for what, (unstable, thin) in verdicts.items():
        if unstable and before.get(what, (None,))[0]:
            warnings.append(f"{what}: {unstable} {where}, as before this change")
        elif unstable:
            refusals.append(f"{what}: {unstable} {where}")
        elif thin:
            warnings.append(f"{what}: {thin} {where} (docs/results/stability.md)")
    return "; ".join(refusals) or None, "; ".join(warnings) or None
