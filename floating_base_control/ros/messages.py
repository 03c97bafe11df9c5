"""The ROS message edge: ROS messages <-> the package's notation, and their checks.

Every conversion between a ROS message and the core's types is here (docs/reference/conventions.md):
poses and twists (``geometry_msgs``: quaternion x, y, z, w; Odometry twists in the child
frame, the body), joint states matched by name, effort commands, time stamps and
diagnostics.  Message objects are read and written duck-typed; the only imports are message
packages, never rclpy.
"""
import array

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from std_msgs.msg import Header

from floating_base_control.conventions import matrix_to_quat_wxyz, pose, quat_wxyz_to_matrix
from floating_base_control.validation import FloatingBaseError, InputError

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


def stamp_to_seconds(stamp):
    return stamp.sec + stamp.nanosec * 1e-9


def seconds_to_stamp(t):
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def set_stamp(stamp, t):
    """Write ``t`` (s) into a ``builtin_interfaces/Time`` in place (a preallocated message's stamp)."""
    stamp.sec, stamp.nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)


def float64_field(msg, field, n):
    """Give ``msg.<field>`` (a float64 sequence) ``n`` zeros held in a buffer, and return a numpy view
    of it: a message preallocated once and filled in place at every publish (the generated setter
    checks every element of a list; an ``array('d')`` it keeps as it is)."""
    setattr(msg, field, array.array("d", bytes(8 * n)))
    return np.frombuffer(getattr(msg, field), dtype=float)


# -- poses and twists ---------------------------------------------------------------

def g_from_pose_msg(pose_msg):
    """``g1`` from a ``geometry_msgs/Pose`` (orientation normalized)."""
    p, o = pose_msg.position, pose_msg.orientation
    return pose(quat_wxyz_to_matrix([o.w, o.x, o.y, o.z]), [p.x, p.y, p.z])


def pose_from_msg(pose_msg):
    """``g1`` from a ``geometry_msgs/Pose``; :class:`InputError` if unusable."""
    p, o = pose_msg.position, pose_msg.orientation
    check_pose([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
    return g_from_pose_msg(pose_msg)


def fill_pose_msg(pose_msg, g):
    """Write ``g`` into a ``geometry_msgs/Pose``; returns the message."""
    p, o = pose_msg.position, pose_msg.orientation
    p.x, p.y, p.z = (float(c) for c in g[:3, 3])
    o.w, o.x, o.y, o.z = (float(c) for c in matrix_to_quat_wxyz(g[:3, :3]))
    return pose_msg


def fill_pose_msg_se3(pose_msg, M):
    """Write a ``pin.SE3`` into a ``geometry_msgs/Pose`` (quaternion by Pinocchio, ``w >= 0``, as
    :func:`fill_pose_msg`, at a tenth of its cost: the controller's publishing path); returns the message."""
    p, o = pose_msg.position, pose_msg.orientation
    p.x, p.y, p.z = M.translation.tolist()
    x, y, z, w = pin.Quaternion(M.rotation).coeffs().tolist()
    o.x, o.y, o.z, o.w = (x, y, z, w) if w >= 0 else (-x, -y, -z, -w)
    return pose_msg


def twist_from_msg(twist_msg):
    """Body twist ``[omega; v]`` of a ``geometry_msgs/Twist`` given in the body frame."""
    ang, lin = twist_msg.angular, twist_msg.linear
    return np.array([ang.x, ang.y, ang.z, lin.x, lin.y, lin.z], dtype=float)


def fill_twist_msg(twist_msg, V):
    """Write a body twist ``[omega; v]`` into a ``geometry_msgs/Twist``; returns the message."""
    ang, lin = twist_msg.angular, twist_msg.linear
    ang.x, ang.y, ang.z, lin.x, lin.y, lin.z = (float(c) for c in V)
    return twist_msg


def fill_vector3(v, x):
    v.x, v.y, v.z = (float(c) for c in x)


def fill_wrench_msg(wrench_msg, w):
    """Write ``[moment; force]`` into a ``geometry_msgs/Wrench``; returns the message."""
    fill_vector3(wrench_msg.torque, w[:3])
    fill_vector3(wrench_msg.force, w[3:])
    return wrench_msg


def check_pose(position, quaternion_xyzw):
    """Raise :class:`InputError` unless a pose message is usable (finite, non-degenerate quaternion)."""
    values = np.r_[position, quaternion_xyzw]
    if not np.isfinite(values).all():
        raise InputError("base pose has non-finite values")
    norm = np.linalg.norm(quaternion_xyzw)
    if not 0.5 < norm < 2.0:
        raise InputError(f"base pose quaternion has norm {norm:.3g}, expected 1")


# -- joint states and commands ----------------------------------------------------------

class JointStateMapper:
    """Joint states by name, in the controller's joint order (message order is not trusted)."""

    def __init__(self, joints):
        self.joints = tuple(joints)
        self._names, self._rows = None, None      # the last name order seen, and its row map

    def map(self, names, positions, velocities):
        """``(q, qdot)`` in the controller's order; :class:`InputError` saying what is wrong."""
        if len(positions) != len(names) or len(velocities) != len(names):
            raise InputError(f"joint state has {len(names)} names but {len(positions)} positions and "
                             f"{len(velocities)} velocities")
        if names != self._names:
            self._rows = self._row_map(list(names))
            self._names = names
        q = np.asarray(positions, dtype=float)[self._rows]
        qdot = np.asarray(velocities, dtype=float)[self._rows]
        if not (np.isfinite(q).all() and np.isfinite(qdot).all()):
            bad = [j for j, a, b in zip(self.joints, q, qdot) if not (np.isfinite(a) and np.isfinite(b))]
            raise InputError(f"joint state has non-finite position or velocity for {bad}")
        return q, qdot

    def _row_map(self, names):
        index = {n: i for i, n in enumerate(names)}
        missing = [j for j in self.joints if j not in index]
        if missing:
            unknown = [n for n in names if n not in self.joints]
            raise InputError(f"joint state lacks joints {missing}" +
                             (f" (unknown names {unknown})" if unknown else ""))
        return np.array([index[j] for j in self.joints])


def effort_command(data, cmd_index):
    """Joint efforts of a command (``Float64MultiArray.data``) in the model's joint order
    (``cmd_index``: the command entry of each model joint), or ``None`` if the command has
    the wrong length or a non-finite value."""
    tau = np.asarray(data, dtype=float)
    if tau.size != len(cmd_index) or not np.isfinite(tau).all():
        return None
    return tau[cmd_index]


def joint_order(joints, model_joints):
    """The ``joints`` parameter checked against the model: joint names in command order
    (``['']``: the model's order)."""
    names = list(model_joints)
    order = [j for j in joints if j] or names
    if sorted(order) != sorted(names):
        raise FloatingBaseError(f"parameter joints {order} must list the URDF's joints {names}, each once")
    return order


# -- diagnostics ------------------------------------------------------------------------

def diagnostic_array(stamp, name, hardware_id, level, message, values):
    """A ``DiagnosticArray`` with one status; ``values`` is a dict of printable values."""
    status = DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                              values=[KeyValue(key=k, value=format_value(v)) for k, v in values.items()])
    return DiagnosticArray(header=Header(stamp=stamp), status=[status])


def format_value(v):
    """A diagnostic value as text (floats to 6 significant digits)."""
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    return str(v)
