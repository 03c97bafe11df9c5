"""The controller node's motion commands (docs/MOTION.md): topics, the ``task`` parameter, tracking error.

Subscribes  ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory: every joint by name,
            ``time_from_start``, positions with optional velocities and accelerations; the
            header stamp is the start time, zero: now), ``~/reference`` (sensor_msgs/JointState:
            a set-point, every joint by name) and ``~/target_pose`` (geometry_msgs/PoseStamped in
            the world frame) while ``task`` is ``joint`` (the first two) or ``end_effector``.
Publishes   ``~/tracking_error`` (std_msgs/Float64MultiArray: ``q - q_r`` in the model's joint order
            for ``joint``, ``[rotation vector; position error]`` in world axes for ``end_effector``).

A refused command (unknown or missing joints, wrong lengths, non-finite values, beyond the
position, velocity or acceleration limits, a stamp older than ``reference.max_age``, the wrong
frame or task) is logged and reported on ``/diagnostics`` with its reason; the last valid
reference is kept.  A new ``task`` takes effect at the next tick, blended from the current one
over ``task_blend_s`` (:class:`~floating_base_control.control.handover.Handover`).
"""
import numpy as np
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from floating_base_control.control.end_effector import CartesianGains, EndEffectorTask
from floating_base_control.control.handover import Handover
from floating_base_control.control.trajectory import TrajectoryReference, Waypoint
from floating_base_control.control.tracking import JointTask
from floating_base_control.validation import FloatingBaseError, InputError
from floating_base_control.ros import messages as m
from floating_base_control.ros.params import CARTESIAN_AXES


def by_name(what, names, values, joints):
    """``values`` (one per name) in the order of ``joints``; ``InputError`` naming missing or unknown joints
    or a wrong length."""
    if len(values) != len(names):
        raise InputError(f"{what}: {len(values)} values for {len(names)} joint names")
    index = {n: i for i, n in enumerate(names)}
    missing, unknown = [j for j in joints if j not in index], [n for n in names if n not in joints]
    if missing or unknown:
        raise InputError(f"{what}: missing joints {missing}, unknown joints {unknown}")
    return np.array([values[index[j]] for j in joints], dtype=float)


def waypoints_from_msg(msg, joints):
    """:class:`Waypoint` s of a ``trajectory_msgs/JointTrajectory``, in the model's joint order."""
    if not msg.points:
        raise InputError("joint trajectory has no points")
    out = []
    for i, p in enumerate(msg.points):
        optional = [None if len(x) == 0 else by_name(f"point {i} {what}", msg.joint_names, list(x), joints)
                    for what, x in (("velocities", p.velocities), ("accelerations", p.accelerations))]
        out.append(Waypoint(p.time_from_start.sec + p.time_from_start.nanosec * 1e-9,
                            by_name(f"point {i} positions", msg.joint_names, list(p.positions), joints), *optional))
    return out


class MotionCommands:
    """What the controller node adds for motion tasks (see the module doc); the node calls
    :meth:`apply_parameters`, :meth:`motion` every tick, :meth:`publish` and :meth:`diagnostic_values`."""

    def __init__(self, node, model, controller):
        self.node, self.model, self.controller = node, model, controller
        self.joints = list(model.joint_names)
        self.frame = node._p("end_effector.frame") or model.pin_model.frames[model.pin_model.nframes - 1].name
        self.task, self.requested = "setpoint", "setpoint"
        self.joint_task = self.ee_task = None
        self.refused, self.accepted = "none", 0
        self.switch_step = "none"        # largest per-tick torque step of the last blend, fraction of the limits
        self.error_pub = node.create_lifecycle_publisher(Float64MultiArray, "~/tracking_error", 10)
        node.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        node.create_subscription(JointState, "~/reference", self._on_reference, 10)
        node.create_subscription(PoseStamped, "~/target_pose", self._on_target, 10)

    # -- parameters -------------------------------------------------------------------

    def apply_parameters(self):
        p = self.node._p
        self.requested = p("task")
        self.shape_gains = self.controller.shape_gains
        self.cartesian_gains = CartesianGains([p(f"end_effector.stiffness.{a}") for a in CARTESIAN_AXES],
                                              [p(f"end_effector.damping.{a}") for a in CARTESIAN_AXES],
                                              np.full(self.model.n, p("end_effector.nullspace_stiffness")),
                                              np.full(self.model.n, p("end_effector.nullspace_damping")),
                                              p("end_effector.damping_ratio") or None)
        if self.joint_task is not None:
            self.joint_task.gains = self.shape_gains
            self.joint_task.reference.acceleration_limits = self._acceleration_limits()
        if self.ee_task is not None:
            self.ee_task.gains = self.cartesian_gains
            self.ee_task.v_max, self.ee_task.w_max = p("end_effector.max_speed"), p("end_effector.max_angular_speed")
            self.ee_task.feedforward = p("end_effector.feedforward")

    def _acceleration_limits(self):
        return np.full(self.model.n, self.node._p("trajectory.max_acceleration"))

    # -- the task of each tick --------------------------------------------------------------

    def motion(self, now, q):
        """The controller's motion task for the tick at ``now`` (``None``: eq. 52 on the set-point)."""
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
        self.joint_task = self.ee_task = None
        if name == "setpoint":
            return self._setpoint_task()
        if name == "joint":
            reference = TrajectoryReference(np.clip(q, *self.model.position_limits.T), self.model.position_limits,
                                            self.model.velocity_limits, self._acceleration_limits(), t0=now)
            self.joint_task = JointTask(self.model, reference, self.shape_gains)
            return self.joint_task
        p = self.node._p
        self.ee_task = EndEffectorTask(self.model, self.frame, self.cartesian_gains, q, p("end_effector.max_speed"),
                                       p("end_effector.max_angular_speed"), p("end_effector.feedforward"))
        return self.ee_task

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
        self.node.get_logger().warning(f"{what} refused: {reason}")

    def _needs(self, task, what):
        if self.task != task or self.requested != task:
            raise InputError(f"{what} needs task '{task}' (task is '{self.requested}')")

    def _on_trajectory(self, msg):
        try:
            self._needs("joint", "joint trajectory")
            self.joint_task.reference.command(self._start_time(msg.header.stamp),
                                              waypoints_from_msg(msg, self.joints))
            self.accepted += 1
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
            self.ee_task.command(m.pose_from_msg(msg.pose), self._start_time(msg.header.stamp))
            self.accepted += 1
        except FloatingBaseError as exc:
            self._refuse("target pose", str(exc))

    # -- outputs ------------------------------------------------------------------------

    def publish(self):
        motion = self.controller.motion
        if motion is not None:
            self.error_pub.publish(Float64MultiArray(data=[float(e) for e in motion.error]))

    def diagnostic_values(self):
        motion = self.controller.motion
        error = float(np.linalg.norm(motion.error)) if motion is not None else "none"
        return {"task": self.task, "tracking_error_norm": error, "commands_accepted": self.accepted,
                "last_refused_command": self.refused, "task_switch_max_step_fraction": self.switch_step}
