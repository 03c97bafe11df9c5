"""Message conversions and helpers shared by the nodes (the ROS edge of the package)."""
import signal

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.experimental import EventsExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header

from ..conventions import g_from_pose_msg
from ..control.watchdog import check_pose
from ..validation import FloatingBaseError


#: For the streams a control loop consumes at its own rate (joint states, commands): only the
#: newest message matters, and a queue of old ones would only add delay.
LATEST_ONLY = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)


def stamp_to_seconds(stamp):
    return stamp.sec + stamp.nanosec * 1e-9


def seconds_to_stamp(t):
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def pose_from_msg(pose):
    """``g1`` from a ``geometry_msgs/Pose``; :class:`InputError` if unusable."""
    p, o = pose.position, pose.orientation
    check_pose([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
    return g_from_pose_msg(pose)


def fill_vector3(v, x):
    v.x, v.y, v.z = (float(c) for c in x)


def descriptor(spec):
    """``rcl_interfaces/ParameterDescriptor`` of a :class:`~.params.ParamSpec`."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.range is not None:
        d.floating_point_range = [FloatingPointRange(from_value=float(spec.range[0]),
                                                     to_value=float(spec.range[1]), step=0.0)]
    if spec.choices:
        d.additional_constraints = "one of: " + ", ".join(spec.choices)
    return d


def diagnostic_array(stamp, name, hardware_id, level, message, values):
    """A ``DiagnosticArray`` with one status; ``values`` is a dict of printable values."""
    status = DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                              values=[KeyValue(key=k, value=_fmt(v)) for k, v in values.items()])
    return DiagnosticArray(header=Header(stamp=stamp), status=[status])


def _fmt(v):
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    return str(v)


OK, WARN = DiagnosticStatus.OK, DiagnosticStatus.WARN


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


def spin(node_class, args=None):
    """``main()`` of a node: one node on rclpy's events executor until SIGINT or SIGTERM.

    The events executor dispatches from C++; at a 1 kHz control rate the Python
    wait-set executor costs a large share of the tick.  Signals only set a flag,
    so that no callback runs into a context that is being shut down.
    """
    stop = []
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    node = node_class()
    executor = EventsExecutor()
    executor.add_node(node)
    try:
        while not stop and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
