"""Parameters of the ROS 2 nodes, described once (ROS-free, so tests can check config and launch files).

Every gain and limit has a description and a range, which rqt_reconfigure
shows as a slider; structural parameters (URDF, joints, topics, frames, rates)
are read-only.  Per-joint parameters are named ``<group>.<joint>``.
"""
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from ..control.shape import COMPENSATIONS
from ..control.watchdog import SAFE_MODES
from ..estimation.observer import ObserverGains


@dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    description: str
    range: Optional[Tuple[float, float]] = None     #: closed interval, doubles only
    read_only: bool = False
    choices: Optional[Tuple[str, ...]] = None       #: allowed string values


def _structural(node_name):
    return [
        ParamSpec("urdf", "", "URDF of the robot (root link = floating base); empty: the package's "
                  "orbital robot", read_only=True),
        ParamSpec("joints", [""], "joint names in command order (ros2_control forward_command_controller "
                  "'joints'); [''] = all joints of the URDF in Pinocchio's order", read_only=True),
        ParamSpec("world_frame", "world", "inertial frame of the base pose (REP-105)", read_only=True),
        ParamSpec("base_frame", "base_link", "the floating base link", read_only=True),
        ParamSpec("joint_states_topic", "/joint_states", "sensor_msgs/JointState input or output",
                  read_only=True),
        ParamSpec("base_pose_topic", "/base_pose", "base pose, geometry_msgs/PoseStamped or "
                  "nav_msgs/Odometry (see base_pose_type)", read_only=True),
        ParamSpec("command_topic", "/effort_controller/commands", "std_msgs/Float64MultiArray joint "
                  "efforts in 'joints' order", read_only=True),
    ]


def controller_params(joint_names, position_limits, effort_limits):
    """Parameters of ``floating_base_controller`` for a robot with these joints and limits."""
    g = ObserverGains()
    specs = _structural("floating_base_controller") + [
        ParamSpec("base_pose_type", "pose", "message type on base_pose_topic", read_only=True,
                  choices=("pose", "odometry")),
        ParamSpec("control_rate_hz", 1000.0, "control ticks per second", (10.0, 2000.0), read_only=True),
        ParamSpec("estimate_rate_hz", 100.0, "rate of ~/base_estimate, ~/locked_velocity, ~/momentum "
                  "and ~/compensation", (1.0, 1000.0), read_only=True),
        ParamSpec("diagnostics_rate_hz", 2.0, "rate of /diagnostics", (0.1, 50.0), read_only=True),
        ParamSpec("autostart", True, "configure and activate at start (else wait for lifecycle "
                  "transitions)", read_only=True),
        ParamSpec("timing_log", "", "if set: write every tick's time, period, compute time and joint-state "
                  "age to this CSV file at shutdown (for benchmarks)", read_only=True),
        ParamSpec("hold_on_activate", True, "at activation, set every setpoint to the measured joint "
                  "position (no jump); false: use the setpoint parameters", read_only=True),
        ParamSpec("compensation", "tau2", "momentum compensation, seed 002 eq. 45: tau1 (mu and "
                  "qdot), tau2 (mu only) or none (PD only)", choices=tuple(c for c in COMPENSATIONS
                                                                           if c != "truth")),
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
    ]
    for j, (lo, hi), effort in zip(joint_names, position_limits, effort_limits):
        lo, hi, effort = float(max(lo, -1e3)), float(min(hi, 1e3)), float(min(effort, 1e4))
        specs += [
            ParamSpec(f"stiffness.{j}", 10.0, f"task stiffness of {j}, eq. 52 (N m/rad)", (0.0, 2000.0)),
            ParamSpec(f"damping.{j}", 1.0, f"task damping of {j}, eq. 52 (N m s/rad)", (0.001, 200.0)),
            ParamSpec(f"setpoint.{j}", min(max(0.0, lo), hi), f"set-point of {j} (rad or m)", (lo, hi)),
            ParamSpec(f"effort_limit.{j}", effort, f"torque limit of {j} (N m), at most the URDF's",
                      (0.0, effort)),
        ]
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
        ParamSpec("q0", [0.0], "initial joint positions (another length: the middle of each joint's range)", **ro),
        ParamSpec("mu0_omega_deg_s", [10.0, 1.14, 0.0], "initial locked angular velocity (deg/s)", **ro),
        ParamSpec("mu0_v", [0.0, 0.0, 0.0], "initial locked linear velocity (m/s)", **ro),
        ParamSpec("command_timeout", 0.05, "apply zero torque when the last command is older (s)",
                  (0.001, 10.0), **ro),
        ParamSpec("seed", 0, "noise seed", **ro),
    ]
