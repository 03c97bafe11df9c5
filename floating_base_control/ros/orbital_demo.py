"""The orbital demo over real DDS: ``mujoco_sim`` and ``floating_base_controller`` as two processes.

Started the way a launch file would start them (same executables, the same
``config/orbital_robot.yaml``, the scenario's values as ``-p`` overrides), with
ROS 2 traffic kept on this machine: shared-memory transport only and a domain
of our own (``FBC_ROS_DOMAIN``, default 61; never the shell's ``ROS_DOMAIN_ID``,
which may be a robot's).  A recorder node in this process listens to the
simulator's ground truth and to what the controller publishes, and the report
is the same as the ROS-free runner's (``experiments/orbital/scenario.py``), computed by the same
functions.

With a motion task (:func:`run` with ``task``, docs/how-to/command-motion.md) the demo is also the client: it
publishes the joint trajectory on ``~/joint_trajectory``, or switches the controller's ``task``
parameter to ``end_effector`` and publishes the target on ``~/target_pose``, at the times of the
ROS-free demo (``experiments/orbital/tasks.py``), and judges the result on the simulator's ground truth.

One coherent module: the demo's processes, its recorder and its task client share one run's timing and
scheduling, and read together as what ``fbc demo orbital --ros`` does.
"""
import os
import signal
import subprocess
import tempfile
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from floating_base_control.control.shape import compensation_law
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf, share_file
from floating_base_control.experiments.orbital.scenario import (Log, OrbitalScenario, evaluation_row, integral_gains,
                                                                summarize)
from floating_base_control.ros.messages import (fill_pose_msg, g_from_pose_msg, seconds_to_stamp, stamp_to_seconds,
                                                twist_from_msg)
from floating_base_control.ros.params import CARTESIAN_AXES
from floating_base_control.processes import die_with_parent
from floating_base_control.ros.realtime import fifo_scheduling, ordinary_scheduling
from floating_base_control.ros.runtime import events_executor, local_env, node_command

DEFAULT_DOMAIN = 61
#: SCHED_FIFO priority of this process (the recorder and the task's client) while the nodes run, if permitted:
#: below the nodes' (the config's 50), above ordinary processes, so that on a loaded machine the recorder keeps up
#: with the ground truth (under two CPU burners, with ordinary scheduling, it got one sample in eight and sent the
#: end-effector target 0.3-0.7 s late: not the in-process experiment)
RECORDER_PRIORITY = 10


class Recorder(Node):
    """Samples of ground truth (from the simulator) and of what the controller publishes.

    A sample is the simulator's four ground-truth messages of one instant, matched by their common stamp
    (they arrive on four topics, in any order: pairing the latest of each mixed instants 10 ms apart with this
    process keeping up, 0.1 s and more when it fell behind, and the demo's 10 deg/s tumble turns the base
    1.7 mrad in 10 ms), with the controller's latest messages when the sample is complete.  Recording only
    stores messages; the report rows are computed after the run (:meth:`log`), so that the recorder takes
    little CPU away from the two nodes it watches.
    """

    TRUTH = ("joints", "truth", "mu", "momentum")

    def __init__(self, record=True):
        super().__init__("orbital_demo_recorder")
        self.latest, self.samples, self.record = {}, [], record
        self.pending = {}                   # stamp (ns) -> the ground-truth messages of that instant so far
        self.first = self.last = None
        truth = [(JointState, "/mujoco_sim/joints", "joints")] + ([] if not record else [
                (Odometry, "/mujoco_sim/ground_truth", "truth"), (TwistStamped, "/mujoco_sim/locked_velocity", "mu"),
                (WrenchStamped, "/mujoco_sim/momentum", "momentum")])
        for msg_type, topic, key in truth:
            self.create_subscription(msg_type, topic, lambda msg, key=key: self._on_truth(key, msg), 100)
        for msg_type, topic, key in [] if not record else [
                (Odometry, "/floating_base_controller/base_estimate", "estimate"),
                (TwistStamped, "/floating_base_controller/locked_velocity", "mu_hat"),
                (Float64MultiArray, "/floating_base_controller/compensation", "compensation")]:
            self.create_subscription(msg_type, topic, lambda msg, key=key: self.latest.__setitem__(key, msg), 10)
        self.controller_up = False          # the controller publishes diagnostics once configured
        self.create_subscription(DiagnosticArray, "/diagnostics",
                                 lambda msg: setattr(self, "controller_up", True), 10)

    def _on_truth(self, key, msg):
        """Store ``msg``; the clock (:attr:`elapsed`) advances with each complete sample (each joint state
        without ``record``)."""
        if self.record:
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            instant = self.pending.setdefault(stamp, {})
            instant[key] = msg
            if len(instant) < len(self.TRUTH):
                return
            del self.pending[stamp]
            msg = instant.pop("joints")
            self.samples.append((msg, {**self.latest, **instant}))
            for old in [s for s in self.pending if s < stamp - 10**9]:   # a message of theirs was lost
                del self.pending[old]
        self.last = stamp_to_seconds(msg.header.stamp)
        self.first = self.last if self.first is None else self.first

    @property
    def elapsed(self):
        return 0.0 if self.first is None else self.last - self.first

    def log(self, model, scenario, evaluate=None):
        """The report's rows (``experiments.orbital.scenario.evaluation_row``) of every sample, and
        ``evaluate(t, g1, q)``'s columns (times from the first sample)."""
        L = ObserverGains(scenario.observer.k, scenario.observer.l_rot, scenario.observer.l_trans).L
        q_d, stiffness, n = np.array(scenario.q_d), np.array(scenario.stiffness), model.n
        log, t0 = Log(), stamp_to_seconds(self.samples[0][0].header.stamp)
        for joints, lat in self.samples:
            w = lat["momentum"].wrench
            momentum = np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])
            g_hat = g_from_pose_msg(lat["estimate"].pose.pose) if "estimate" in lat else None
            mu_hat = twist_from_msg(lat["mu_hat"].twist) if "mu_hat" in lat else np.zeros(6)
            comp = np.array(lat["compensation"].data) if "compensation" in lat else np.zeros(2 * n)
            t, g1, q = (stamp_to_seconds(joints.header.stamp) - t0, g_from_pose_msg(lat["truth"].pose.pose),
                        np.array(joints.position))
            row = evaluation_row(model, L, q_d, stiffness, t, g1, q, np.array(joints.velocity),
                                 twist_from_msg(lat["mu"].twist), g_hat, mu_hat, np.array(joints.effort), comp[:n],
                                 comp[n:], momentum, False)
            if evaluate is not None:
                row.update(evaluate(t, g1, q))
            log.append(row)
        return log.arrays()

    def truth(self):
        """``(t, g1, q)``: the latest ground truth (``t`` from the first sample, as in :meth:`log`)."""
        joints, latest = self.samples[-1]
        return (stamp_to_seconds(joints.header.stamp) - stamp_to_seconds(self.samples[0][0].header.stamp),
                g_from_pose_msg(latest["truth"].pose.pose), np.array(joints.position))


class TaskClient:
    """The client of a motion task's demo: sends the ROS-free demo's commands (``experiments/orbital/tasks.py``) to the
    controller at the same times of the run, and evaluates the ground truth against them."""

    def __init__(self, recorder, task, settings, model, scenario):
        from floating_base_control.control.end_effector import FrameWorkspace, frame_id
        from floating_base_control.control.trajectory import TrajectoryReference
        self.recorder, self.task, self.settings, self.model = recorder, task, settings, model
        self.q0, self.q_d = np.array(scenario.q0, dtype=float), np.array(scenario.q_d, dtype=float)
        node = "/floating_base_controller"
        self.trajectory_pub = recorder.create_publisher(JointTrajectory, f"{node}/joint_trajectory", 10)
        self.target_pub = recorder.create_publisher(PoseStamped, f"{node}/target_pose", 10)
        self.parameters = AsyncParameterClient(recorder, node)
        self.reference = TrajectoryReference(self.q0, model.position_limits, model.velocity_limits,
                                             np.full(model.n, settings.acceleration_limit))
        self.ws, self.fid = FrameWorkspace(model), frame_id(model, settings.ee_frame)
        self.target = self.switched = None
        self.done = False

    def step(self):
        """Send what is due at the recorder's current time."""
        if self.done or not self.recorder.samples:
            return
        t, g1, q = self.recorder.truth()
        s = self.settings
        if self.task == "trajectory" and t >= s.trajectory_start_s:
            self._send_trajectory()
        elif self.task == "end-effector" and self.switched is None and t >= s.ee_start_s:
            self.switched = self.parameters.set_parameters([Parameter("task", value="end_effector")])
        elif self.switched is not None and self.switched.done():
            self._send_target(g1, q)

    def _now(self):
        """This process' clock (the nodes' and the simulator's stamps' clock) in seconds of the log (from its
        first sample): the recorder's latest sample is older, by however late this process takes it."""
        return self.recorder.get_clock().now().nanoseconds * 1e-9 - self._t0()

    def _t0(self):
        return stamp_to_seconds(self.recorder.samples[0][0].header.stamp)

    def _send_trajectory(self):
        from floating_base_control.experiments.orbital.tasks import waypoints
        points = waypoints(self.settings, self.q0, self.q_d)
        msg = JointTrajectory(joint_names=list(self.model.joint_names))
        lead = 0.1                          # stamped a little ahead: the start is then the stamp, known here
        start = self._now() + lead
        msg.header.stamp = seconds_to_stamp(start + self._t0())
        for w in points:
            point = JointTrajectoryPoint(positions=w.positions.tolist(), velocities=w.velocities.tolist(),
                                         accelerations=w.accelerations.tolist())
            point.time_from_start.sec = int(w.time_from_start)
            point.time_from_start.nanosec = int(round((w.time_from_start % 1) * 1e9))
            msg.points.append(point)
        self.trajectory_pub.publish(msg)
        self.reference.command(start, points)
        self.done = True

    def _send_target(self, g1, q):
        from floating_base_control.control.end_effector import displaced
        from floating_base_control.experiments.orbital.tasks import ee_displacement, ee_pose
        self.target = displaced(ee_pose(self.ws, self.fid, g1, q), ee_displacement(self.settings))
        msg = PoseStamped()
        msg.header.frame_id = "world"
        fill_pose_msg(msg.pose, self.target)
        self.target_pub.publish(msg)
        self.sent_at = self._now()           # unstamped: the controller starts its reference when it takes it
        self.done = True

    def end_s(self, duration_s):
        """When the run ends (s of the log): ``duration_s``, or for the end effector ``ee_hold_s`` after its
        reference arrives, as in the ROS-free demo (the target goes out 5-20 ms later here: the task switch is a
        parameter change, answered over DDS, and the node checks the target's reach before taking it)."""
        from floating_base_control.experiments.orbital.tasks import ee_reach_s
        if self.task != "end-effector" or self.target is None:
            return duration_s
        return max(duration_s, self.sent_at + ee_reach_s(self.settings) + self.settings.ee_hold_s)

    def evaluate(self, t, g1, q):
        """The ROS-free demo's task columns (``experiments.orbital.tasks.build``) from the ground truth."""
        from floating_base_control.experiments.orbital.tasks import ee_errors
        if self.task == "trajectory":
            return {"dq_norm_deg": np.rad2deg(np.linalg.norm(q - self.reference.sample(t).q))}
        return ee_errors(self.ws, self.fid, g1, q, self.target if self.target is not None and t >= self.sent_at
                         else None)


def scenario_overrides(scenario, joint_names):
    """The scenario as ``(controller, simulator)`` parameter overrides.

    Only what a ROS run can honour: the controller model is the URDF's (no
    ``model_mass_error``) and the controller never sees the simulator's ``mu``
    (no ``truth`` compensation).
    """
    if scenario.name != "ideal":
        raise ValueError("over ROS 2 only the ideal scenario runs (mujoco_sim has no friction, encoder or "
                         "star-tracker models): run the realistic one without --ros")
    if scenario.model_mass_error or compensation_law(scenario.compensation).true_mu:
        raise ValueError("over ROS 2 the controller uses the plant's URDF and no ground truth: "
                         f"--mass-error and --compensation {scenario.compensation} are ROS-free options")
    integral = integral_gains(scenario)
    per_joint = [(f"{kind}.{j}", float(v)) for kind, values in
                 (("setpoint", scenario.q_d), ("stiffness", scenario.stiffness), ("damping", scenario.damping),
                  ("integral", np.zeros(len(joint_names)) if integral is None else integral))
                 for j, v in zip(joint_names, values)]
    obs = scenario.observer
    controller = [("compensation", scenario.compensation), ("control_rate_hz", scenario.control_rate_hz),
                  ("observer.k", obs.k), ("observer.l_rot", obs.l_rot), ("observer.l_trans", obs.l_trans),
                  *per_joint]
    sim = [("physics_rate_hz", scenario.control_rate_hz * scenario.sim_substeps),
           ("pose_rate_hz", scenario.pose_rate_hz), ("pose_rotation_noise", scenario.pose_rotation_noise),
           ("pose_position_noise", scenario.pose_position_noise), ("pose_latency_s", scenario.pose_latency_s),
           ("q_noise", scenario.q_noise), ("qdot_noise", scenario.qdot_noise), ("seed", scenario.seed),
           ("q0", list(scenario.q0)), ("mu0_omega_deg_s", list(scenario.mu0_omega_deg_s)),
           ("mu0_v", list(scenario.mu0_v))]
    robot = [("urdf", scenario.urdf)] if scenario.urdf else []
    return robot + controller, robot + sim


#: What the report is computed from; the physics must not start before the recorder has found them.
TRUTH_TOPICS = ("/mujoco_sim/joints", "/mujoco_sim/ground_truth", "/mujoco_sim/locked_velocity", "/mujoco_sim/momentum")


def _wait_for(executor, ready, procs, what, timeout=60.0):
    """Spin until ``ready()``; ``RuntimeError`` if a node exits or ``what`` is not up within ``timeout`` s."""
    end = time.monotonic() + timeout
    while not ready():
        executor.spin_once(timeout_sec=0.1)
        if time.monotonic() > end or any(p.poll() is not None for p in procs):
            raise RuntimeError(f"{what} did not come up within {timeout:g} s")


def task_overrides(task, settings, joint_names):
    """The controller's parameters for a motion task's demo (``experiments/orbital/tasks.py``'s gains; the
    node's null-space gains are one value for every joint: the smallest of the demo's).  It starts with ``task: joint``
    holding its shape, as the ROS-free demo does before its commands."""
    if task == "setpoint":
        return []
    out = [("task", "joint"), ("hold_on_activate", True), ("trajectory.max_acceleration", settings.acceleration_limit)]
    if task == "end-effector":
        out += [("end_effector.frame", settings.ee_frame), ("end_effector.max_speed", settings.ee_speed),
                ("end_effector.max_angular_speed", settings.ee_angular_speed),
                ("end_effector.nullspace_stiffness", min(settings.nullspace_stiffness)),
                ("end_effector.nullspace_damping", min(settings.nullspace_damping)),
                ("end_effector.damping_ratio", settings.ee_damping_ratio or 0.0),
                ("end_effector.feedforward", settings.ee_feedforward)]
        for axis, k, d in zip(CARTESIAN_AXES, settings.ee_stiffness, settings.ee_damping):
            out += [(f"end_effector.stiffness.{axis}", k), (f"end_effector.damping.{axis}", d)]
    return out


def run(scenario=None, domain_id=None, params_file=None, controller_overrides=(), timeout_factor=3.0,
        progress=None, record=True, task="setpoint", settings=None):
    """Run ``scenario`` (default: :class:`OrbitalScenario()`) over ROS 2; returns ``(log, summary)`` like
    ``experiments.orbital.scenario.run`` (``(None, None)`` with ``record=False``: then this process only watches the
    clock, for benchmarks).  ``controller_overrides`` come last (e.g. a timing log).

    The processes get ``FASTDDS_BUILTIN_TRANSPORTS=SHM`` and ``ROS_DOMAIN_ID = domain_id`` (default:
    ``FBC_ROS_DOMAIN``, else 61); this process uses the same.  ``task`` (``trajectory`` or ``end-effector``,
    with ``experiments.orbital.tasks.TaskSettings``): this process is also the client sending the task's commands.
    """
    scenario = scenario or OrbitalScenario()
    duration_s = scenario.duration_s
    timing_log = dict(controller_overrides).get("timing_log")
    with tempfile.TemporaryDirectory() as tmp:
        if record and timing_log is None:       # the loop's statistics of the summary (ros_loop)
            timing_log = os.path.join(tmp, "timing.csv")
            controller_overrides = [*controller_overrides, ("timing_log", timing_log)]
        return _run(scenario, duration_s, domain_id, params_file, controller_overrides, timeout_factor, progress,
                    record, task, settings, timing_log)


def _run(scenario, duration_s, domain_id, params_file, controller_overrides, timeout_factor, progress, record, task,
         settings, timing_log):
    domain_id = int(domain_id if domain_id is not None else os.environ.get("FBC_ROS_DOMAIN", DEFAULT_DOMAIN))
    os.environ.update(local_env(domain_id))
    params_file = params_file or share_file("config/orbital_robot.yaml")
    model = FloatingBaseModel.from_urdf(scenario.urdf or orbital_robot_urdf())
    controller_params, sim_params = scenario_overrides(scenario, model.joint_names)
    controller_params += task_overrides(task, settings, model.joint_names)
    env = local_env(domain_id)
    rclpy.init()
    try:
        recorder = Recorder(record)
        executor = events_executor()     # the wait-set executor took a third of a core at the recorder's rates
        executor.add_node(recorder)
        client = None if task == "setpoint" else TaskClient(recorder, task, settings, model, scenario)
    except BaseException:
        rclpy.try_shutdown()             # a caller's next run (a test, a notebook cell) initializes it again
        raise
    # the robot first, paused until the first command, so that the recorder has found its ground truth
    # before the physics starts (else the report may begin late); then the controller
    procs = [subprocess.Popen(node_command("orbital_sim", params_file, sim_params), env=env,
                              preexec_fn=die_with_parent())]
    status = "completed"
    deadline = time.monotonic() + timeout_factor * duration_s + 30.0
    reported = 0
    try:
        _wait_for(executor, lambda: all(recorder.count_publishers(topic) for topic in TRUTH_TOPICS), procs,
                  "mujoco_sim's ground truth")
        procs.append(subprocess.Popen(node_command("orbital_controller", params_file,
                                                   [*controller_params, *controller_overrides]), env=env,
                                      preexec_fn=die_with_parent()))
        _wait_for(executor, lambda: recorder.controller_up, procs, "floating_base_controller")
        if record:                               # after the nodes started: they must not inherit it
            fifo_scheduling(RECORDER_PRIORITY)
        while recorder.elapsed < (duration_s if client is None else client.end_s(duration_s)):
            executor.spin_once(timeout_sec=0.1)
            if client is not None:
                client.step()
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                status = "stopped early: " + ("timeout" if time.monotonic() > deadline else
                                              f"a node exited ({[p.poll() for p in procs]})")
                break
            if progress and recorder.elapsed >= reported + 5.0:
                reported += 5.0
                progress(recorder.elapsed)
    finally:
        ordinary_scheduling()
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        executor.shutdown()
        recorder.destroy_node()
        rclpy.try_shutdown()
    if not record:
        return None, None
    if not recorder.samples:
        raise RuntimeError(f"the demo recorded nothing ({status}): are the nodes starting?")
    log = recorder.log(model, scenario, None if client is None else client.evaluate)
    summary = summarize(scenario, log, log["momentum"][0], status)
    if client is not None:
        from floating_base_control.experiments.orbital.tasks import ee_reach_s, hold_summary, task_summary
        summary.update(task_summary(task, log), task_settings=settings.to_dict())
        if task == "trajectory":
            summary["ros_tracking_rms_joint_error_deg"] = summary["tracking_rms_joint_error_deg"]
        else:
            arrival = None if client.target is None else client.sent_at + ee_reach_s(settings)
            summary.update(hold_summary(scenario, arrival, client.target, log, settings))
    summary["transport"] = f"ROS 2 topics, Fast DDS shared memory, domain {domain_id}"
    # the key is the delay a run was given (sim/loop.py); a DDS loop has none: what it measured is ros_loop
    summary["loop_delay_s"] = None
    if timing_log is not None and os.path.exists(timing_log):
        summary["ros_loop"] = loop_statistics(timing_log, skip_s=2.0)
    return log, summary


def loop_statistics(path, skip_s=0.0):
    """The controller's loop as its per-tick timing log (``timing_log``) recorded it, after the first ``skip_s``
    (start-up; all of a run hardly longer, a test's): ticks per second, tick period and compute time (to the
    command), the joint state's age at the tick (from the simulator's stamp), ms.  The loop delay of a DDS loop is
    the age plus the compute time plus the command's way to the simulator, which applies it at its next physics
    step."""
    t, compute, age, _, _ = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2).T
    keep = t >= t[0] + skip_s
    if keep.sum() < 2:           # a run hardly longer than its start-up (a test's): all of it
        keep[:] = True
    t, compute, age = t[keep], 1e3 * compute[keep], 1e3 * age[keep]
    periods = 1e3 * np.diff(t)
    return {"ticks": int(t.size), "control_rate_hz": float((t.size - 1) / (t[-1] - t[0])),
            "period_p50_ms": float(np.percentile(periods, 50)), "period_p99_ms": float(np.percentile(periods, 99)),
            "period_max_ms": float(periods.max()), "compute_p50_ms": float(np.percentile(compute, 50)),
            "compute_p99_ms": float(np.percentile(compute, 99)), "joint_state_age_mean_ms": float(np.nanmean(age)),
            "joint_state_age_p99_ms": float(np.nanpercentile(age, 99)),
            "joint_state_age_max_ms": float(np.nanmax(age))}
