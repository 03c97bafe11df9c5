"""Running the nodes: process entry point, QoS profiles, parameter descriptors, local DDS.

``spin`` is every node's ``main()``: a node that cannot start (a start value out of its range, a URDF
that does not load, ``joints`` that are not the URDF's) logs one line naming the parameter or the file
and the process exits with status 2 (1 for an unexpected exception), without a traceback unless
``FBC_DEBUG=1``.  ``descriptor`` turns a :class:`~.params.ParamSpec` into
the ``ParameterDescriptor`` that rclpy enforces (ranges: rqt_reconfigure sliders), ``declare`` declares
it and says in one line why a start value is refused;
``local_env``/``node_command`` start nodes as separate processes whose DDS traffic stays on
this machine (the demo, the benchmarks and the tests).
"""
import contextlib
import inspect
import math
import os
import signal
import sys
import time

import rclpy
import rclpy.node
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException, ParameterException
from rclpy.experimental import EventsExecutor
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from floating_base_control.ros.realtime import cpu_affinity, fifo_scheduling
from floating_base_control.validation import InputError, debugging, one_line

#: For the streams a control loop consumes at its own rate (joint states, commands): only the
#: newest message matters, and a queue of old ones would only add delay.
LATEST_ONLY = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)

#: For sensor streams whose every sample counts (base pose): a best-effort subscription matches
#: both reliable publishers and the usual SensorDataQoS (best-effort) ones of motion capture and
#: odometry; asking for reliable delivery would silently match no best-effort publisher.
SENSOR_SAMPLES = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)

#: Fast DDS over shared memory only (no UDP sockets, no multicast discovery).
LOCAL_DDS = {"FASTDDS_BUILTIN_TRANSPORTS": "SHM", "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}


def descriptor(spec):
    """``rcl_interfaces/ParameterDescriptor`` of a :class:`~.params.ParamSpec`."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.range is not None and isinstance(spec.default, int) and not isinstance(spec.default, bool):
        d.integer_range = [IntegerRange(from_value=int(spec.range[0]), to_value=int(spec.range[1]), step=1)]
    elif spec.range is not None:
        d.floating_point_range = [FloatingPointRange(from_value=float(spec.range[0]),
                                                     to_value=float(spec.range[1]), step=0.0)]
    if spec.choices:
        d.additional_constraints = "one of: " + ", ".join(spec.choices)
    return d


def declare(node, spec):
    """Declare the parameter of a :class:`~.params.ParamSpec` on ``node``.  A start value (YAML, ``-p``)
    of another type, out of the range or not one of the choices is an :class:`InputError` naming the
    parameter, its value and what it accepts."""
    overrides = getattr(node, "_parameter_overrides", {})                # rclpy's store of the start values
    given = overrides.get(spec.name)
    if given is not None and given.type_ == Parameter.Type.NOT_SET and isinstance(spec.default, list):
        # `[]` reaches rclpy without a type (an empty list of strings or of numbers?): a placeholder default
        # (one value: [''] none, [-1] any CPU, [0.0] the middle of the range) is what an empty list means
        if len(spec.default) > 1:
            raise InputError(f"parameter {spec.name} = [] is empty: it takes {_type_name(spec.default)} "
                             f"({spec.description})")
        del overrides[spec.name]
        given = None
    value = "" if given is None else f" = {given.value!r}"
    try:
        node.declare_parameter(spec.name, spec.default, descriptor(spec))
    except InvalidParameterTypeException:
        raise InputError(f"parameter {spec.name}{value} is not {_type_name(spec.default)}") from None
    except InvalidParameterValueException as exc:      # rclpy's range, or the node's own check
        raise InputError(f"parameter {spec.name}{value} {_accepts(spec) or 'is refused: ' + one_line(exc)}") from None
    if spec.choices and node.get_parameter(spec.name).value not in spec.choices:
        raise InputError(f"parameter {spec.name}{value} {_accepts(spec)}")


def _accepts(spec):
    if spec.choices:
        return f"must be one of {list(spec.choices)}"
    if spec.range is not None:
        return f"is outside its range [{spec.range[0]:g}, {spec.range[1]:g}] ({spec.description})"
    return ""


#: What a parameter of a given default's type accepts, for the error that refuses another.
_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a floating-point number (5.0, not 5)",
               str: "a string", (list, str): "a list of strings", (list, int): "a list of integers",
               (list, float): "a list of floating-point numbers ([1.0, 0.5], not [1, 0.5])"}


def _type_name(default):
    return _TYPE_NAMES[(list, type(default[0])) if isinstance(default, list) else type(default)]


def timer_callback(callback):
    """``callback`` for ``create_timer``, its signature computed once.  rclpy's EventsExecutor asks for a
    timer callback's signature at every call (to pass a ``TimerInfo`` or not): about 50 us of CPU per call
    for a bound method, measured, which at 1 kHz is a twentieth of a core; a ``__signature__`` answers at
    once."""
    def call(*args):
        return callback(*args)
    call.__signature__ = inspect.signature(callback)
    return call


def throttled_warning(logger, period_s):
    """``logger.warning`` at most once per ``period_s`` (monotonic time).  rclpy's own
    ``throttle_duration_sec`` identifies its caller (stack frames, file stats) at every call, logged or
    not: about 0.3 ms, measured, which a 1 kHz node paid at every tick of a fault."""
    last = [-math.inf]

    def warn(text):
        now = time.monotonic()
        if now - last[0] >= period_s:
            last[0] = now
            logger.warning(text)
    return warn


def clock_seconds(node):
    """The node's clock (ROS time: simulated with ``use_sim_time``) as a function returning seconds.
    ``Clock.now()`` builds and checks a ``Time`` at every call (9 us against 2 us for its handle's reading,
    measured), and a 1 kHz node reads its clock several times a tick."""
    handle = node.get_clock().handle
    return lambda: handle.get_now().nanoseconds * 1e-9


def local_env(domain_id):
    """The environment of a node process kept on this machine, in ROS domain ``domain_id``."""
    env = dict(os.environ, **LOCAL_DDS)
    env["ROS_DOMAIN_ID"] = str(domain_id)
    return env


def node_command(module, params_file=None, overrides=()):
    """Command line of the node in ``floating_base_control.ros.<module>``, as ``ros2 run``
    would start it, with a parameter file and ``(name, value)`` overrides."""
    args = [sys.executable, "-m", f"floating_base_control.ros.{module}", "--ros-args"]
    if params_file:
        args += ["--params-file", params_file]
    for name, value in overrides:
        args += ["-p", f"{name}:={value}"]
    return args


#: After the lifecycle shutdown transition, how long the node goes on spinning before it is destroyed (s).
SHUTDOWN_LINGER_S = 0.5


def events_executor():
    """rclpy's events executor.  It turns on ``faulthandler`` on ``sys.stderr``, which fails where that has no
    file descriptor (a notebook, a test capturing output): there, on the process's own stderr."""
    stderr, sys.stderr = sys.stderr, sys.__stderr__ or sys.stderr
    try:
        return EventsExecutor()
    finally:
        sys.stderr = stderr


def _linger(executor):
    """Spin a little longer after the shutdown transition: its service response was sent inside the
    last callback, and destroying the node at once can lose it before the client has read it (on a
    loaded machine a `ros2 lifecycle set ... shutdown` then never hears back).  The node is
    finalized: its callbacks publish nothing more."""
    end = time.monotonic() + SHUTDOWN_LINGER_S
    while time.monotonic() < end and rclpy.ok():
        executor.spin_once(timeout_sec=0.05)


def _scheduling(node):
    """The node's ``realtime_priority`` (0: ordinary scheduling) and ``cpu_affinity`` ([-1]: any CPU) for the
    whole process, or a warning for each that cannot be applied."""
    priority = node.get_parameter("realtime_priority").value if node.has_parameter("realtime_priority") else 0
    problem = priority and fifo_scheduling(priority)
    if problem:
        node.get_logger().warning(f"realtime_priority {priority} not applied: {problem}")
    cpus = list(node.get_parameter("cpu_affinity").value) if node.has_parameter("cpu_affinity") else [-1]
    problem = cpus != [-1] and cpu_affinity(cpus)
    if problem:
        node.get_logger().warning(f"cpu_affinity {cpus} not applied: {problem}")


def spin(node_class, args=None):
    """``main()`` of a node: one node on rclpy's events executor until SIGINT, SIGTERM or the
    lifecycle shutdown transition (the node's ``finalized``); exit status 0 in all three cases.

    The events executor dispatches from C++; at a 1 kHz control rate the Python
    wait-set executor costs a large share of the tick.  Signals only set a flag,
    so that no callback runs into a context that is being shut down, and any
    further signal (a second Ctrl-C, ``ros2 launch`` forwarding SIGINT to the
    process group that already got it) cannot interrupt the node's last words:
    ``destroy_node`` sends the zero command and waits for its acknowledgement.
    """
    stop = []
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: stop.append(signum))
    node = _start(node_class)
    _scheduling(node)
    executor = events_executor()                  # its threads inherit the scheduling
    executor.add_node(node)
    try:
        while not stop and rclpy.ok() and not getattr(node, "finalized", False):
            executor.spin_once(timeout_sec=0.1)
        if not stop:
            _linger(executor)
    finally:
        executor.shutdown()
        node.destroy_node()
        # not rclpy's default uninstall_signal_handlers, which, with none of its own installed, sets
        # SIGINT and SIGTERM to their default action and then puts ours back: a second Ctrl-C between
        # the two killed the process (exit -2), seen in test_ros_stop and reproduced
        rclpy.try_shutdown(uninstall_handlers=False)
        for sig in (signal.SIGINT, signal.SIGTERM):    # the interpreter's exit restores the default handlers:
            signal.signal(sig, signal.SIG_IGN)        # a late signal must not turn a clean exit into a kill


def _start(node_class):
    """A new node of ``node_class``; if it cannot start, one line on its log and the process exits
    (module doc).  A node that failed is destroyed at once (see ``controller_base``: left to the
    garbage collector, its DDS participant can hang the process)."""
    node = node_class.__new__(node_class)
    try:
        node.__init__()
        return node
    except Exception as exc:
        logger = rclpy.logging.get_logger(node_class.__name__)
        with contextlib.suppress(AttributeError):         # a node that got as far as its name
            logger = node.get_logger()
        discard(node)
        if debugging():
            raise
        status, text = start_failure(exc)
        logger.fatal(text)
        rclpy.try_shutdown(uninstall_handlers=False)
        sys.exit(status)


def discard(node):
    """Destroy a node whose ``__init__`` failed: its class's ``destroy_node`` may need what ``__init__``
    never made, so rclpy's own after it (else the context destroys the node again at shutdown)."""
    for destroy in (node.destroy_node, lambda: rclpy.node.Node.destroy_node(node)):
        with contextlib.suppress(Exception):        # a node never created, or destroyed already
            destroy()


def start_failure(exc):
    """``(exit status, one line)`` of a node that ``exc`` stopped at start."""
    if isinstance(exc, (ValueError, ParameterException, OSError)):    # the package's errors are ValueErrors
        return 2, f"cannot start: {one_line(exc)}"
    return 1, f"cannot start: unexpected {type(exc).__name__}: {one_line(exc)} (FBC_DEBUG=1 shows the traceback)"
