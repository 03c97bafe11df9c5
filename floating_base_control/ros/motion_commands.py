"""The controller node's motion commands (docs/how-to/command-motion.md): topics, the ``task`` parameter, tracking
error.

Subscribes  ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory, taken as ros2_control's
            joint_trajectory_controller takes it, ``control/trajectory.py``: joints by name in any
            order, every joint unless ``trajectory.allow_partial_joints_goal``; ``time_from_start``;
            positions with optional velocities and accelerations; the header stamp is the start
            time, zero: now; a first point at the start within ``trajectory.start_tolerance`` of
            the measured positions, as MoveIt sends), ``~/reference`` (sensor_msgs/JointState: a set-point,
            every joint by name), ``~/target_pose`` (geometry_msgs/PoseStamped in the world
            frame) and ``~/base_attitude_target`` (geometry_msgs/QuaternionStamped in the world frame)
            while ``task`` is ``joint`` (the first two), ``end_effector`` or ``reorient``.
Publishes   ``~/tracking_error`` (std_msgs/Float64MultiArray: ``q - q_r`` in the model's joint order
            for ``joint`` and ``reorient``, ``[rotation vector; position error]`` in world axes for
            ``end_effector``) and ``~/reorientation`` (diagnostic_msgs/DiagnosticStatus: the reorientation's
            state, progress and result, WARN while a target is refused).

The reorientation (``planning/execution.py``'s :class:`ReorientTask`, docs/results/reorientation.md) plans in a worker
process (``planning/worker.py``, started with the task): the tick only queues requests and takes results; a
target the planner cannot reach within the limits is refused with its reason, as the commands below are.

A refused command (unknown, repeated or missing joints, wrong lengths, non-finite values, a path
beyond the position, velocity or acceleration limits, a trajectory that ends in the past, a
set-point or target stamped longer ago than ``reference.max_age``, a target the end effector cannot
reach within the joint limits (``control/end_effector.py``, ``check_reachable``: checked from the
measured shape and the observer's pose and momentum, before any motion), the wrong frame or task)
is logged and shown on ``/diagnostics`` (WARN with the reason, ``controller_base.REFUSAL_HOLD``);
the last valid reference is kept.  A trajectory's path and a target's reach are checked off the control tick, in
a background worker process (``floating_base_control/background.py``: 2-35 ms of Python, which in
the node's process would delay the ticks, in another thread too, by holding the interpreter lock), one command
at a time in the order received; the tick takes each result when it is there (a zero-stamped trajectory then
starts, if the reference has not moved since it was received).  Until the worker is up (it imports the package:
seconds, a minute on a loaded machine), they run at once in the node.  A new ``task`` takes effect at the next
tick, blended from the current one over ``task_blend_s`` (:class:`~floating_base_control.control.handover.Handover`).
"""
import math
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped, QuaternionStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from floating_base_control.background import Worker, WorkerError
from floating_base_control.control.end_effector import CartesianGains, EndEffectorTask
from floating_base_control.control.handover import Handover
from floating_base_control.control.trajectory import TrajectoryReference, Waypoint
from floating_base_control.control.tracking import JointTask
from floating_base_control.planning.execution import ReorientTask
from floating_base_control.planning.rotations import rotation_from_quaternion
from floating_base_control.validation import FloatingBaseError, InputError
from floating_base_control.ros import messages as m
from floating_base_control.ros.params import CARTESIAN_AXES, end_effector_frame, robot_options

PLAN = "floating_base_control.control.trajectory:TrajectoryReference.plan"
CHECK_REACHABLE = "floating_base_control.control.end_effector:check_reachable"


def by_name(what, names, values, joints):
    """``values`` (one per name) in the order of ``joints``; ``InputError`` naming missing or unknown joints
    or a wrong length."""
    if len(values) != len(names):
        raise InputError(f"{what}: {len(values)} values for {len(names)} joint names")
    given = joint_indices(what, names, joints, partial=False)
    out = np.empty(len(joints))
    out[given] = values
    return out


def joint_indices(what, names, joints, partial):
    """Index in ``joints`` of each of ``names``; ``InputError`` naming unknown or repeated joints, and missing
    ones unless ``partial``."""
    repeated = sorted({n for n in names if list(names).count(n) > 1})
    missing, unknown = [j for j in joints if j not in names], [n for n in names if n not in joints]
    if unknown or repeated or (missing and not partial):
        raise InputError(f"{what}: " + ", ".join(
            f"{kind} joints {found}" for kind, found in (("unknown", unknown), ("repeated", repeated),
                                                         ("missing", [] if partial else missing)) if found)
            + (" (trajectory.allow_partial_joints_goal is false)" if missing and not partial else ""))
    return [list(joints).index(n) for n in names]


def waypoints_from_msg(msg, joints, partial=False):
    """``(waypoints, indices)`` of a ``trajectory_msgs/JointTrajectory``: :class:`Waypoint` s in the message's
    joint order and the index in ``joints`` of each of its joints (``partial``: not every joint needed)."""
    if not msg.points:
        raise InputError("joint trajectory has no points")
    given = joint_indices("joint trajectory", list(msg.joint_names), joints, partial)
    out = []
    for i, p in enumerate(msg.points):
        fields = []
        for what, x in (("positions", p.positions), ("velocities", p.velocities),
                        ("accelerations", p.accelerations)):
            if len(x) not in (len(given), 0) or (what == "positions" and len(x) == 0):
                raise InputError(f"point {i} {what}: {len(x)} values for {len(given)} joint names")
            fields.append(np.array(x, dtype=float) if len(x) else None)
        out.append(Waypoint(p.time_from_start.sec + p.time_from_start.nanosec * 1e-9, *fields))
    return out, given


class MotionCommands:
    """What the controller node adds for motion tasks (see the module doc); the node calls
    :meth:`apply_parameters`, :meth:`motion` every tick, :meth:`publish`, :meth:`diagnostic_values` and
    :meth:`close`."""

    def __init__(self, node, model, controller):
        self.node, self.model, self.controller = node, model, controller
        self.joints = list(model.joint_names)
        self.frame = end_effector_frame(node._p, model)
        self.task, self.requested = "setpoint", "setpoint"
        self.joint_task = self.ee_task = self.reorient_task = self.planner = None
        self.refusals_shown = 0
        self.refused, self.accepted = "none", 0
        self.switch_step = "none"        # largest per-tick torque step of the last blend, fraction of the limits
        # the checks' worker, started with the first task that takes commands: it imports the package and builds
        # the model (seconds, a minute on a loaded machine); until then the checks run here, on the tick
        # one below the loop's real-time priority: a command waits for its check, the loop never does
        self.worker = Worker("floating_base_control.robots.orbital.spacecraft:robot_model", robot_options(node._p),
                             here=model, realtime_priority=max(0, node._p("realtime_priority") - 1))
        self.queued, self.checking = deque(), None
        self.error_pub = node.create_lifecycle_publisher(Float64MultiArray, "~/tracking_error", 10)
        self.reorient_pub = node.create_lifecycle_publisher(DiagnosticStatus, "~/reorientation", 10)
        node.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        node.create_subscription(JointState, "~/reference", self._on_reference, 10)
        node.create_subscription(PoseStamped, "~/target_pose", self._on_target, 10)
        node.create_subscription(QuaternionStamped, "~/base_attitude_target", self._on_attitude_target, 10)

    # -- parameters -------------------------------------------------------------------

    def apply_parameters(self):
        p = self.node._p
        self.requested = p("task")
        if self.requested != "setpoint":
            self.worker.start()
        self.shape_gains = self.controller.shape_gains
        self.cartesian_gains = CartesianGains([p(f"end_effector.stiffness.{a}") for a in CARTESIAN_AXES],
                                              [p(f"end_effector.damping.{a}") for a in CARTESIAN_AXES],
                                              np.full(self.model.n, p("end_effector.nullspace_stiffness")),
                                              np.full(self.model.n, p("end_effector.nullspace_damping")),
                                              p("end_effector.damping_ratio") or None)
        if self.joint_task is not None:
            self.joint_task.gains = self.shape_gains
            self.joint_task.reference.acceleration_limits = self._acceleration_limits()
            self._trajectory_options(self.joint_task.reference)
        if self.reorient_task is not None:
            self._reorient_options()
        if self.ee_task is not None:
            self.ee_task.gains = self.cartesian_gains
            self.ee_task.v_max, self.ee_task.w_max = p("end_effector.max_speed"), p("end_effector.max_angular_speed")
            self.ee_task.feedforward = p("end_effector.feedforward")

    def _trajectory_options(self, reference):
        reference.start_tolerance = self.node._p("trajectory.start_tolerance")
        reference.allow_moving_end = self.node._p("trajectory.allow_nonzero_velocity_at_trajectory_end")

    def _acceleration_limits(self):
        return np.full(self.model.n, self.node._p("trajectory.max_acceleration"))

    # -- the task of each tick --------------------------------------------------------------

    def motion(self, now, q):
        """The controller's motion task for the tick at ``now`` (``None``: eq. 52 on the set-point)."""
        self._take_checked(now)
        c = self.controller
        if self.requested != self.task:
            previous = c.motion or self._setpoint_task()
            c.motion = Handover(previous, self._new_task(self.requested, now, q), now, self.node._p("task_blend_s"))
            self.task = self.requested
        elif isinstance(c.motion, Handover) and now >= c.motion.t_switch + c.motion.blend_s:
            if c.motion.max_step is not None:
                self.switch_step = float(np.max(c.motion.max_step / c.torque_limits))
            c.motion = None if self.task == "setpoint" else c.motion.second
        return c.motion

    def _setpoint_task(self):
        """Eq. 52 on the set-point parameters, as a task (a constant reference) to blend from or to."""
        reference = TrajectoryReference(np.clip(self.controller.q_d, *self.model.position_limits.T),
                                        self.model.position_limits, self.model.velocity_limits,
                                        self._acceleration_limits())
        return JointTask(self.model, reference, self.shape_gains)

    def _new_task(self, name, now, q):
        self.joint_task = self.ee_task = self.reorient_task = None
        if name == "setpoint":
            return self._setpoint_task()
        if name == "reorient":
            return self._reorient_task(q)
        if name == "joint":
            reference = TrajectoryReference(np.clip(q, *self.model.position_limits.T), self.model.position_limits,
                                            self.model.velocity_limits, self._acceleration_limits(), t0=now,
                                            names=self.joints)
            self._trajectory_options(reference)
            self.joint_task = JointTask(self.model, reference, self.shape_gains)
            return self.joint_task
        p = self.node._p
        self.ee_task = EndEffectorTask(self.model, self.frame, self.cartesian_gains, q, p("end_effector.max_speed"),
                                       p("end_effector.max_angular_speed"), p("end_effector.feedforward"))
        return self.ee_task

    def _reorient_task(self, q):
        """The reorientation from the measured shape, planning in the worker process (started once)."""
        p, period = self.node._p, 1.0 / self.node._p("control_rate_hz")
        if self.planner is None:
            from floating_base_control.planning.worker import BackgroundPlanner
            self.planner = BackgroundPlanner(self.model, {"max_cycles": int(p("reorient.max_cycles")),
                                                          "margin": p("reorient.margin")}, period)
        self.refusals_shown = 0
        self.reorient_task = ReorientTask(self.model, self.planner, np.clip(q, *self.model.position_limits.T),
                                          control_period=period, start_delay_s=p("reorient.start_delay_s"))
        self._reorient_options()
        return self.reorient_task

    def _reorient_options(self):
        task, p = self.reorient_task, self.node._p
        task.lead_s, task.settle_s = p("reorient.lead_s"), p("reorient.settle_s")
        task.tolerance, task.max_corrections = math.radians(p("reorient.tolerance_deg")), p("reorient.max_corrections")
        task.start_delay_s = p("reorient.start_delay_s")

    def close(self):
        """End the checks' worker and the planner's worker process, if any (commands still being checked or
        planned are dropped)."""
        self.worker.close()
        if self.planner is not None:
            self.planner.close()

    # -- commands -----------------------------------------------------------------------

    def _start_time(self, stamp):
        """When a command stamped ``stamp`` starts (zero stamp: now); ``InputError`` if it is stale."""
        now, t = self.node.now(), m.stamp_to_seconds(stamp)
        if t and t < now - self.node._p("reference.max_age"):
            raise InputError(f"stale: stamped {now - t:.3f} s ago (reference.max_age "
                             f"{self.node._p('reference.max_age'):g} s)")
        return max(t, now)

    def _refuse(self, what, reason):
        self.refused = f"{what}: {reason}"
        self.node.refused_command(what, reason)

    def _needs(self, task, what):
        if self.task != task or self.requested != task:
            raise InputError(f"{what} needs task '{task}' (task is '{self.requested}')")

    def _check(self, what, task, function, args, take, context=False):
        """Check a command in the worker (``function(*args)``), after those before it; ``take(result)`` at the
        tick that finds it done, if ``task`` is still the task."""
        self.queued.append((what, task, function, args, take, context))
        self._submit_next()

    def _submit_next(self):
        if self.checking is None and self.queued:
            what, task, function, args, take, context = self.queued.popleft()
            self.checking = (self.worker.submit(function, *args, context=context), what, task, take)

    def _take_checked(self, now):
        """Take the result of the command being checked if it is there (a non-blocking read)."""
        if self.checking is None or not self.checking[0].done():
            return
        job, what, task, take = self.checking
        self.checking = None
        try:
            result = job.result()
            if task is not self.joint_task and task is not self.ee_task:
                raise InputError("the task changed while the command was checked")
            take(result, now)
            self.accepted += 1
        except (FloatingBaseError, WorkerError) as exc:
            self._refuse(what, str(exc))
        self._submit_next()

    def _on_trajectory(self, msg):
        """As joint_trajectory_controller: a zero stamp is now, a trajectory ending in the past is refused
        (``TrajectoryReference.plan``), not one stamped before ``reference.max_age``; its path is checked in
        the worker, on the reference as it is when the check starts."""
        try:
            self._needs("joint", "joint trajectory")
            now, partial = self.node.now(), self.node._p("trajectory.allow_partial_joints_goal")
            waypoints, given = waypoints_from_msg(msg, self.joints, partial)
            stamp, reference = m.stamp_to_seconds(msg.header.stamp), self.joint_task.reference
            self._check("joint trajectory", self.joint_task, PLAN,
                        (reference, stamp or now, waypoints, now, given, self.node.q),
                        lambda trajectory, t: reference.take(trajectory, None if stamp else t))
        except FloatingBaseError as exc:
            self._refuse("joint trajectory", str(exc))

    def _on_reference(self, msg):
        try:
            self._needs("joint", "reference")
            q = by_name("reference positions", list(msg.name), list(msg.position), self.joints)
            self.joint_task.reference.setpoint(self._start_time(msg.header.stamp), q)
            self.accepted += 1
        except FloatingBaseError as exc:
            self._refuse("reference", str(exc))

    def _on_target(self, msg):
        try:
            self._needs("end_effector", "target pose")
            if msg.header.frame_id not in ("", self.node._p("world_frame")):
                raise InputError(f"target pose in frame {msg.header.frame_id!r}, expected "
                                 f"{self.node._p('world_frame')!r}")
            start, target = self._start_time(msg.header.stamp), m.pose_from_msg(msg.pose)
            out, observer, task = self.node.out, self.controller.observer, self.ee_task
            momentum = None if out is None or not observer.initialized else out.momentum
            if self.node.q is None or momentum is None:
                raise InputError("no joint state or base pose estimate yet: the target cannot be checked")
            # check_reachable from the measured shape and the last tick's estimates of the base pose and the
            # momentum (from where the arm is: a reference still moving toward a previous target is not followed)
            self._check("target pose", task, CHECK_REACHABLE,
                        (self.frame, self.node.q.copy(), observer.g_hat.copy(), momentum.copy(), target, task.v_max,
                         task.w_max), lambda _, t: task.command(target, start), context=True)
        except FloatingBaseError as exc:
            self._refuse("target pose", str(exc))

    def _on_attitude_target(self, msg):
        """A base attitude (world frame): the reorientation plans for it, or replaces a running plan with it."""
        try:
            self._needs("reorient", "base attitude target")
            if msg.header.frame_id not in ("", self.node._p("world_frame")):
                raise InputError(f"base attitude target in frame {msg.header.frame_id!r}, expected "
                                 f"{self.node._p('world_frame')!r}")
            self._start_time(msg.header.stamp)          # a stale target is refused
            o = msg.quaternion
            self.reorient_task.command(rotation_from_quaternion([o.x, o.y, o.z, o.w]))
            self.accepted += 1
        except FloatingBaseError as exc:
            self._refuse("base attitude target", str(exc))

    # -- outputs ------------------------------------------------------------------------

    def publish(self):
        motion = self.controller.motion
        if motion is not None:
            self.error_pub.publish(Float64MultiArray(data=[float(e) for e in motion.error]))
        task = self.reorient_task
        if task is not None:
            for reason in task.refusals[self.refusals_shown:]:
                self._refuse("base attitude target", reason)
            self.refusals_shown = len(task.refusals)
            level = DiagnosticStatus.WARN if task.status == "refused" else DiagnosticStatus.OK
            self.reorient_pub.publish(DiagnosticStatus(
                level=level, name=f"{self.node.get_fully_qualified_name()}: reorientation", message=task.status,
                values=[KeyValue(key=k, value=m.format_value(v)) for k, v in task.progress().items()]))

    def diagnostic_values(self):
        motion = self.controller.motion
        error = float(np.linalg.norm(motion.error)) if motion is not None else "none"
        reorientation = {} if self.reorient_task is None else {
            f"reorient_{k}": v for k, v in self.reorient_task.progress().items()}
        return {"task": self.task, "tracking_error_norm": error, "commands_accepted": self.accepted,
                "commands_being_checked": len(self.queued) + (self.checking is not None),
                "last_refused_command": self.refused, "task_switch_max_step_fraction": self.switch_step,
                **reorientation}
