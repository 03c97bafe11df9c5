"""What the package's controller nodes share: parameters, lifecycle, safety, diagnostics.

A controller node is a lifecycle node with one control step per timer tick.
This base class declares its parameters from :class:`~.params.ParamSpec`s
(descriptions, ranges, read-only flags: rqt_reconfigure sliders), validates
changes and hands accepted ones to the subclass between ticks, runs the timer
only while active, and around every tick: asks the subclass whether its inputs
are usable, sends the safe command when they are not (or when the control law
returns anything non-finite), logs and reports the reasons on ``/diagnostics``
and resumes when the inputs are good again.  It also keeps the loop statistics
(rate, period, compute time, input age) and an optional per-tick timing log.

Every controller node has a ``model`` (set before :meth:`start`), joint
states on ``joint_states_topic`` (mapped by name, checked, stamped:
:meth:`on_joint_state`) and a watchdog over named input streams, which decides
``input_reasons``.  :class:`ControlNode` is abstract: a subclass implements its
hooks ``configure``, ``apply_parameters``, ``control``, ``safe_commands``,
``publish_commands`` and ``diagnostic_values`` (abstract methods), and may
override ``check_parameters``, ``on_fault`` and ``after_tick`` (documented
defaults: accept, nothing, nothing); ``control`` sets ``saturated``.
An exception in the control step is reported like unusable input (safe command,
``/diagnostics``); leaving the active state (deactivate, shutdown, SIGINT, SIGTERM)
stops the ticks, then sends zero commands once and waits (briefly) until every
subscriber acknowledged them, since an effort interface keeps the last command;
subclasses list their command publishers in ``command_publishers``.  A subclass whose step must follow
each new set of inputs sets ``tick_on_input`` and calls :meth:`input_tick`
when one is complete, refused messages included (the step then sends the safe command at once, as a
ros2_control loop does in a cycle whose read failed, and a lockstep simulator waiting for an answer to
its state gets one); the timer is then a watchdog, re-armed by every step, that
fires (and ticks, with the safe command) only when inputs stop arriving: while they
flow it never wakes the process (a timer's wake-up costs about 70 us of CPU,
measured: a tenth of the node's tick).  Work that need not delay the command (publishing
estimates) goes in ``after_tick``, which runs after the command is published;
then, with ``gc_between_ticks``, the garbage collector's young generations
(``realtime.CollectBetweenTicks``: nothing is collected inside a step).

Inputs are checked before use (``control/plausibility.py``): a joint state with
an implausible velocity or a stamp off the node's clock is refused like an
unusable one; joint positions and velocities beyond the URDF's limits are
reported (:meth:`report`) without stopping control.  ``/diagnostics`` carries
one status per node, named after its fully qualified name: OK only while
active, controlling, with nothing to report; WARN for a fault or a report,
ERROR once it lasts longer than ``diagnostics.error_after``, and while inactive
or finalized (then it stops publishing).  A notice (:meth:`notice`: a refused
command, for ``REFUSAL_HOLD`` s; an input topic with more than one publishing
node, while it has, with their names) is WARN and never escalates: control is
not affected.  Messages carry no running numbers (aggregators and operators
compare them); durations and counters are key-values.

One coherent module: the one place where a tick's safety is decided; lifecycle, parameter
changes, input checks, the safe command and the diagnostics act on the same per-tick state (the
watchdog, the reasons, the events), so split they would read each other's attributes.  The loop
statistics are apart (``loop_stats.py``).
"""
import abc
import functools
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from sensor_msgs.msg import JointState

from floating_base_control.control.plausibility import JointLimitCheck, stamp_problem
from floating_base_control.control.watchdog import Watchdog
from floating_base_control.ros.loop_stats import LoopStats
from floating_base_control.ros.realtime import CollectBetweenTicks
from floating_base_control.validation import FloatingBaseError, InputError
from floating_base_control.ros import messages as m
from floating_base_control.ros import runtime as rt

#: Longest wait (s) for the subscribers' acknowledgement of the zero command when the node stops.
STOP_ACK_TIMEOUT = 0.5
#: A reported problem (:meth:`ControlNode.report`) stays in the diagnostics this long (s) after it last occurred.
REPORT_HOLD = 1.0
#: A refused command (:meth:`ControlNode.refused_command`) stays in the diagnostics this long (s): long enough
#: for an operator (and rqt_robot_monitor at 1 Hz) to see it, short enough not to hide the next.
REFUSAL_HOLD = 5.0


def _destroyed_on_failure(init):
    """``init`` of a node class, destroying the node when it raises (a parameter out of its range, a
    URDF that does not load).  Left to the garbage collector, the node's DDS participant is torn down
    wherever a collection runs, and a Fast DDS thread waiting for the GIL that the collecting thread
    holds can hang that process for good (seen: a test process stuck in a later test's XML parse)."""
    @functools.wraps(init)
    def init_or_destroy(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except BaseException:
            rt.discard(self)
            raise
    return init_or_destroy


class ControlNode(LifecycleNode, metaclass=abc.ABCMeta):
    """The base of the controller nodes (module docstring); a subclass implements the hooks below."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _destroyed_on_failure(cls.__init__)

    def __init__(self, name, specs, **kwargs):
        super().__init__(name, **kwargs)
        self._seconds = rt.clock_seconds(self)
        self._warn_report = rt.throttled_warning(self.get_logger(), 1.0)
        self._warn_safe = rt.throttled_warning(self.get_logger(), 1.0)
        self.specs = {s.name: s for s in specs}
        for spec in specs:
            if not self.has_parameter(spec.name):
                rt.declare(self, spec)
        self.configured = self.active = self.finalized = False
        self.command_publishers = []
        self.tick_on_input = False
        self.last_tick = -np.inf
        self.saturated = False            # the last command hit a torque limit (set by ``control``)
        self.collector = CollectBetweenTicks()
        self.add_on_set_parameters_callback(self._validate)
        self.add_post_set_parameters_callback(self._apply_accepted)

    def start(self):
        """End of a subclass' ``__init__``: check the initial parameter values (YAML, command
        line), then configure and activate if the ``autostart`` parameter says so."""
        result = self._validate(self.get_parameters(list(self.specs)))
        if not result.successful:
            raise FloatingBaseError(f"{self.get_name()}: {result.reason}")
        if self._p("autostart"):
            self.trigger_configure()
            self.trigger_activate()

    def _p(self, name):
        return self.get_parameter(name).value

    def command_index(self):
        """Model-joint index of each entry of the ``joints`` parameter (the command order)."""
        names = list(self.model.joint_names)
        return [names.index(j) for j in m.joint_order(self._p("joints"), names)]

    # -- the hooks a subclass provides ------------------------------------------------

    @abc.abstractmethod
    def configure(self):
        """Create the node's own publishers, subscriptions and controller (``on_configure``, after the
        base's joint-state subscription and watchdog); list the command publishers in ``command_publishers``."""

    @abc.abstractmethod
    def apply_parameters(self):
        """Take the current parameter values (after ``configure``, and after every accepted change;
        a :class:`FloatingBaseError` is logged, the node goes on)."""

    @abc.abstractmethod
    def control(self, now):
        """The control step at time ``now`` (s), inputs usable: the commands (list of arrays, the order
        ``publish_commands`` takes); sets ``saturated``.  An exception or a non-finite command gives the
        safe command."""

    @abc.abstractmethod
    def safe_commands(self, now):
        """The commands sent while the inputs are unusable (zeroed when the node stops)."""

    @abc.abstractmethod
    def publish_commands(self, commands):
        """Publish the commands (from ``control`` or ``safe_commands``)."""

    @abc.abstractmethod
    def diagnostic_values(self):
        """The node's own key-values on ``/diagnostics`` ``{name: value}``."""

    def check_parameters(self, new):
        """Why the new values ``{name: value}`` (set together, the others unchanged) are not
        acceptable (``None`` if they are)."""
        return None

    def on_fault(self, now):
        """A tick sends the safe command (inputs unusable, or the control step failed): keep the
        subclass' state consistent (e.g. consume queued samples).  Default: nothing."""

    def after_tick(self, now):
        """After a successful tick's command is out: work that need not delay it."""

    # -- parameters -------------------------------------------------------------------

    def _validate(self, params):
        for p in params:
            spec = self.specs.get(p.name)
            if spec is not None and spec.choices and p.value not in spec.choices:
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} must be one of {list(spec.choices)}, got {p.value!r}")
        reason = self.check_parameters({p.name: p.value for p in params})
        return SetParametersResult(successful=not reason, reason=reason or "")

    def _apply_accepted(self, params):
        """Hand accepted values to the subclass; a value it cannot use is logged, never fatal
        (rclpy would drop the set-parameters answer and the node with it)."""
        if not self.configured:
            return
        try:
            self._apply_monitoring()
            self.apply_parameters()
        except FloatingBaseError as exc:
            self.get_logger().error(f"parameters {[p.name for p in params]} accepted but not applied: {exc}")

    # -- lifecycle --------------------------------------------------------------------

    def on_configure(self, state):
        self._before = (set(self.publishers), set(self.subscriptions), set(self.timers))
        try:
            self.stats = LoopStats(keep_all=bool(self._p("timing_log")))
            self.reasons, self.tick = [], 0
            self.diag_pub = self.create_publisher(m.DiagnosticArray, "/diagnostics", 10)
            self.diag_timer = self.create_timer(1.0 / self._p("diagnostics_rate_hz"),
                                                rt.timer_callback(self._publish_diagnostics))
            self.watchdog = Watchdog(None)
            self.mapper = m.JointStateMapper(self.model.joint_names)
            self.limit_check = JointLimitCheck(self.model.joint_names, self.model.position_limits,
                                               self.model.velocity_limits)
            self.events, self.refused, self.problem_since = {}, {}, None
            self._apply_monitoring()
            self.q = self.qdot = self.joint_stamp = None
            self.create_subscription(JointState, self._p("joint_states_topic"), self.on_joint_state,
                                     rt.LATEST_ONLY)
            self.configure()
            self.input_topics = sorted({sub.topic_name for sub in set(self.subscriptions) - self._before[1]})
            self.configured = True
            self.apply_parameters()
        except Exception as exc:          # rclpy would swallow it: say why the node stays unconfigured
            self.get_logger().error(f"configure failed: {exc}")
            self.on_cleanup(state)
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        period = 1.0 / self._p("control_rate_hz")
        if self.tick_on_input:          # the watchdog: two periods without an input tick
            self.last_tick = self.now() or None
            self.timer = self.create_timer(2.0 * period, rt.timer_callback(self._watchdog_tick))
        else:
            self.timer = self.create_timer(period, rt.timer_callback(self._tick))
        self.active = True
        if self.has_parameter("gc_between_ticks") and self._p("gc_between_ticks"):
            self.collector.start()
        return super().on_activate(state)

    def input_tick(self):
        """A complete new set of inputs arrived: one control step now (``tick_on_input``)."""
        if self.active:
            self._tick()
            self.timer.reset()

    def _watchdog_tick(self):
        """Tick (with the safe command, unless a usable set of inputs has come) when none came for a
        period since the last tick or activation.  Simulated time reads 0 until the first ``/clock``,
        which fires this timer at once: the watchdog counts from there.  A safe command sent then,
        while the first inputs are on their way, would be taken by a lockstep simulator as the
        answer to its state, and the real answer as the answer to the next one: one tick of delay
        for the rest of the run, which the hopper does not survive."""
        now = self.now()
        if self.last_tick is None:
            self.last_tick = now
        elif now - self.last_tick > 1.0 / self._p("control_rate_hz"):    # an input tick may have run meanwhile
            self._tick()

    def on_deactivate(self, state):
        self._stop()
        return super().on_deactivate(state)

    def _stop(self):
        """Leave the active state: no tick from now on (one already queued returns at once), then
        zero commands once (an effort interface holds the last one), acknowledged by every
        reliable subscriber or given up after ``STOP_ACK_TIMEOUT`` (logged)."""
        if not self.active:
            return
        self.active = False
        self.destroy_timer(self.timer)
        self.collector.stop()
        self.publish_commands([np.zeros_like(c) for c in self.safe_commands(self.now())])
        timeout = Duration(seconds=STOP_ACK_TIMEOUT)
        if not all([pub.wait_for_all_acked(timeout) for pub in self.command_publishers]):
            self.get_logger().warning(f"zero command not acknowledged by every subscriber within "
                                      f"{STOP_ACK_TIMEOUT} s")

    def on_cleanup(self, state):
        """Destroy what ``on_configure`` created (publishers, subscriptions, timers)."""
        publishers, subscriptions, timers = self._before
        for pub in set(self.publishers) - publishers:
            self.destroy_lifecycle_publisher(pub)
        for sub in set(self.subscriptions) - subscriptions:
            self.destroy_subscription(sub)
        for timer in set(self.timers) - timers:
            self.destroy_timer(timer)
        self.configured = False
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        """Finalized: zero commands if active, a last ERROR status; the process ends (``runtime.spin``)."""
        self._stop()
        self.finalized = True
        if self.configured:
            self._publish_diagnostics()
            self.destroy_timer(self.diag_timer)
            self.diag_pub.wait_for_all_acked(Duration(seconds=STOP_ACK_TIMEOUT))    # the process ends next
        return TransitionCallbackReturn.SUCCESS

    def destroy_node(self):
        self._stop()
        if self.configured and self._p("timing_log"):
            self.stats.write(self._p("timing_log"))
        super().destroy_node()

    # -- inputs -----------------------------------------------------------------------

    def _apply_monitoring(self):
        self.limit_check.velocity_factor = self._p("limits.velocity_factor")
        self.future_tolerance, self.max_stamp_age = self._p("stamps.future_tolerance"), self._p("stamps.max_age")

    def on_joint_state(self, msg):
        """Take a joint state (``True``), or mark the stream bad with the reason (``False``)."""
        now = self.now()
        try:
            q, qdot = self.mapper.map(msg.name, msg.position, msg.velocity)
            stamp = self.checked_stamp("joint state", msg.header.stamp, now)
            refusal, report = self.limit_check.check(q, qdot)
            if refusal:
                raise InputError(refusal)
        except FloatingBaseError as exc:
            self.q = self.qdot = None         # the safe command must not use stale velocities
            self.refuse("joint state", str(exc), now)
            return False
        if report:
            self.report("joint limits", report, now)
        self.q, self.qdot, self.joint_stamp = q, qdot, stamp
        self.watchdog.received("joint state", now)
        return True

    def checked_stamp(self, name, stamp, now):
        """The stamp in seconds (an unset stamp: ``now``); :class:`InputError` if it is off the clock."""
        t = m.stamp_to_seconds(stamp) or now
        problem = stamp_problem(t, now, self.max_stamp_age, self.future_tolerance)
        if problem:
            raise InputError(f"{name} {problem}")
        return t

    def refuse(self, name, reason, now, stream_bad=True):
        """A message of input ``name`` is not used (counted): the stream is bad until the next good
        one, or (``stream_bad=False``: one sample among others) the message is only reported."""
        self.refused[name] = self.refused.get(name, 0) + 1
        if stream_bad:
            self.watchdog.received(name, now, reason)
        else:
            self.report(name, reason, now)

    def report(self, key, text, now):
        """A problem that does not stop control: logged, and in the diagnostics while it recurs."""
        if self.events.get(key, (None,))[0] != text:
            self._warn_report(text)
        self.events[key] = (text, now + REPORT_HOLD, True)

    def notice(self, key, text, until):
        """Something an operator should see that does not affect control: WARN (never ERROR) until ``until``."""
        self.events[key] = (text, until, False)

    def refused_command(self, what, reason):
        """A command (a trajectory, a target, ...) was refused: logged, and WARN with the reason for
        ``REFUSAL_HOLD`` s, published at once."""
        self.get_logger().warning(f"{what} refused: {reason}")
        self.notice("refused command", f"{what} refused: {reason}", self.now() + REFUSAL_HOLD)
        self._publish_diagnostics()

    def _check_publishers(self):
        """A notice, naming them, while an input topic has more than one publishing node (every input has
        one source: a second joint-state driver or an unknown commander is someone else talking)."""
        for topic in self.input_topics:
            nodes = sorted({f"{i.node_namespace.rstrip('/')}/{i.node_name}"
                            for i in self.get_publishers_info_by_topic(topic)})
            key = f"publishers of {topic}"
            if len(nodes) < 2:
                self.events.pop(key, None)
                continue
            text = f"{topic} has {len(nodes)} publishers: {', '.join(nodes)} (one expected)"
            if self.events.get(key, (None,))[0] != text:
                self.get_logger().warning(text)
            self.notice(key, text, np.inf)

    def input_reasons(self, now):
        return self.watchdog.reasons(now)

    def input_age(self, now):
        """Age of the joint state the tick uses (s)."""
        return now - self.joint_stamp if self.joint_stamp else np.nan

    # -- the control tick -------------------------------------------------------------

    def now(self):
        return self._seconds()

    def _tick(self):
        if not self.active:               # queued before the node left the active state
            return
        started = time.perf_counter()
        now = self.now()
        reasons = self.input_reasons(now)
        commands = None
        if not reasons:
            try:
                commands = self.control(now)
            except Exception as exc:      # e.g. a diverged estimate: the node must go on
                reasons = [f"the control step failed: {type(exc).__name__}: {exc}"]
            else:
                if not all(np.isfinite(c).all() for c in commands):
                    reasons, commands = ["the control law produced a non-finite command"], None
        if commands is None:
            self.on_fault(now)
            commands = self.safe_commands(now)
        self._report_transition(reasons)
        self.publish_commands(commands)
        self.tick += 1
        self.last_tick = now
        self.stats.record(now, self.input_age(now), self.saturated if not reasons else False,
                          time.perf_counter() - started)
        started = time.perf_counter()
        if not reasons:
            self.after_tick(now)
        self.stats.record_after(time.perf_counter() - started, self.collector.after_tick())

    def _report_transition(self, reasons):
        if reasons:
            self._warn_safe(f"safe command: {'; '.join(reasons)}")
        elif self.reasons:
            self.get_logger().info("inputs usable again: control resumed")
        changed = bool(reasons) != bool(self.reasons)
        self.reasons = reasons
        if changed:
            self._publish_diagnostics()

    def _publish_diagnostics(self):
        if not self.configured:
            return
        self._check_publishers()
        level, message, duration = self._status(self.now())
        s = self.stats.summary()
        values = {"active": self.active, "safe_command_reasons": "; ".join(self.reasons) or "none",
                  "fault_duration_s": duration,
                  "loop_rate_hz": s["rate_hz"], "period_p99_ms": s["period_p99_ms"],
                  "period_max_ms": s["period_max_ms"], "compute_p99_ms": s["compute_p99_ms"],
                  "input_age_ms": s["age_ms"], "saturation_fraction": s["saturated"],
                  "joint_limit_violations": self.limit_check.violations,
                  **{f"refused_{name.replace(' ', '_')}": n for name, n in self.refused.items()},
                  **self.diagnostic_values()}
        name = self.get_fully_qualified_name()
        self.diag_pub.publish(m.diagnostic_array(self.get_clock().now().to_msg(), f"{name}: control loop",
                                                 name, level, message, values))

    def _status(self, now):
        """``(level, message, fault duration)``: see the module docstring."""
        current = [(text, escalates) for text, until, escalates in self.events.values() if now <= until]
        problems = (["safe command: " + "; ".join(self.reasons)] if self.reasons else []) + \
            [text for text, escalates in current if escalates]
        notices = [text for text, escalates in current if not escalates]
        if not (problems and self.active):
            self.problem_since = None
        elif self.problem_since is None:
            self.problem_since = now
        duration = 0.0 if self.problem_since is None else now - self.problem_since
        if self.finalized:
            return m.ERROR, "finalized: no control", duration
        if not self.active:
            return m.ERROR, "inactive: no control", duration
        if problems or notices:
            level = m.ERROR if problems and duration > self._p("diagnostics.error_after") else m.WARN
            return level, "; ".join(problems + notices), duration
        return m.OK, "controlling", duration
