"""``floating_base_controller``: the observer and the shape controller of [Mishra2023] as a ROS 2 node.

Subscribes  joint states (sensor_msgs/JointState, matched by name) and the base
            pose (geometry_msgs/PoseStamped, or nav_msgs/Odometry).
Publishes   joint efforts (std_msgs/Float64MultiArray in ``joints`` order, for
            ros2_control's forward_command_controller), ``~/base_estimate``
            (nav_msgs/Odometry), ``~/locked_velocity`` (TwistStamped, the
            estimate of mu in the base frame), ``~/momentum`` (WrenchStamped:
            torque = angular, force = linear momentum about the world origin),
            ``~/compensation`` (Float64MultiArray: tau_hat_1 then tau_hat_2) and
            ``/diagnostics``; the estimates at ``estimate_rate_hz``, on the topics
            that have subscribers.
Motion      the ``task`` parameter, ``~/joint_trajectory``, ``~/reference``, ``~/target_pose``,
            ``~/base_attitude_target``, ``~/tracking_error`` and ``~/reorientation``: see
            ``motion_commands.py``.

One control step per timer tick, or per new joint state with
``tick_on_joint_state`` (the timer is then a watchdog); the estimates are
published after the command (lifecycle, safety, diagnostics and garbage
collection between ticks: see ``controller_base.py``).  Unusable input (stale, non-finite, unknown or missing
joints, wrong lengths) gives the safe command; the observer does not integrate
across the gap.
"""
import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.control.limits import LimitMonitor
from floating_base_control.control.shape import ShapeGains
from floating_base_control.control.watchdog import WatchdogConfig, safe_torque
from floating_base_control.estimation.health import HealthConfig
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.robots.orbital.spacecraft import load_robot
from floating_base_control.validation import FloatingBaseError
from floating_base_control.ros import messages as m
from floating_base_control.ros import runtime as rt
from floating_base_control.ros.controller_base import ControlNode
from floating_base_control.ros.motion_commands import MotionCommands
from floating_base_control.ros.params import (ROBOT_PARAMS, controller_params, default_joint_gains, gain_stability,
                                             robot_options)

NAME = "floating_base_controller"


class ControllerNode(ControlNode):
    motion_commands = None            # until configured

    def __init__(self, **kwargs):
        robot_specs = [s for s in controller_params([], [], []) if s.name in ROBOT_PARAMS]
        super().__init__(NAME, robot_specs, **kwargs)
        self.model = load_robot(**robot_options(self._p))[0]
        limits = self.model.joint_names, self.model.position_limits, self.model.effort_limits
        rate = next(s for s in controller_params(*limits) if s.name == "control_rate_hz")
        self.specs[rate.name] = rate        # first: the default gains are those of this rate
        self.declare_parameter(rate.name, rate.default, rt.descriptor(rate))
        specs = controller_params(*limits, default_joint_gains(self.model, 1.0 / self._p("control_rate_hz")))
        for spec in specs:
            self.specs[spec.name] = spec
            if not self.has_parameter(spec.name):
                rt.declare(self, spec)
        self.out_index = np.array(self.command_index())
        self.declared = True           # start() checks the gains, together
        self.start()

    def check_parameters(self, new):
        """New gains that make the loop unstable at the current shape are refused; gains that lack the required
        margins there are accepted with a warning (``params.gain_stability``).  Before the first joint state the
        shape is not known: the gains are checked at the set-points, with a warning only (with
        ``hold_on_activate`` the set-points become the measured shape at activation)."""
        if not getattr(self, "declared", False):          # one at a time while being declared
            return None
        get = lambda name: new[name] if name in new else self._p(name)      # noqa: E731
        q = getattr(self, "q", None)
        known = q is not None
        if not known:
            lo, hi = self.model.position_limits.T
            q = np.clip([get(f"setpoint.{j}") for j in self.model.joint_names], lo, hi)
        try:
            refusal, warning = gain_stability(get, new, self.model, q, current=self._p)
        except FloatingBaseError as exc:
            return str(exc)
        if refusal and not known:
            refusal, warning = None, "; ".join(filter(None, [f"{refusal} (no joint state yet: the set-points' shape)",
                                                             warning]))
        if warning:
            self.get_logger().warning(f"accepted, but {warning}")
        return refusal

    def configure(self):
        n = self.model.n
        self.controller = OrbitalController(self.model, np.clip(np.zeros(n), *self.model.position_limits.T),
                                            ShapeGains(np.zeros(n), np.ones(n)),
                                            control_period=1.0 / self._p("control_rate_hz"))
        self.poses, self.out, self.saturated = [], None, False
        self.limits = LimitMonitor(self.model.position_limits, self.model.velocity_limits)
        self.hold_pending = False
        self.cmd_pub = self.create_lifecycle_publisher(Float64MultiArray, self._p("command_topic"), 10)
        self.est_pub = self.create_lifecycle_publisher(Odometry, "~/base_estimate", 10)
        self.mu_pub = self.create_lifecycle_publisher(TwistStamped, "~/locked_velocity", 10)
        self.momentum_pub = self.create_lifecycle_publisher(WrenchStamped, "~/momentum", 10)
        self.comp_pub = self.create_lifecycle_publisher(Float64MultiArray, "~/compensation", 10)
        self.cmd = Float64MultiArray()
        self.cmd_data = m.float64_field(self.cmd, "data", n)     # filled in place
        world, base = self._p("world_frame"), self._p("base_frame")
        self.odom_msg = Odometry()                 # estimates: preallocated, filled in place
        self.odom_msg.header.frame_id, self.odom_msg.child_frame_id = world, base
        self.mu_msg = TwistStamped()
        self.mu_msg.header.frame_id = base
        self.momentum_msg = WrenchStamped()
        self.momentum_msg.header.frame_id = world
        self.comp_msg = Float64MultiArray()
        self.comp_data = m.float64_field(self.comp_msg, "data", 2 * n)
        self.tick_on_input = self._p("tick_on_joint_state")
        self.command_publishers = [self.cmd_pub]
        pose_type = Odometry if self._p("base_pose_type") == "odometry" else PoseStamped
        self.create_subscription(pose_type, self._p("base_pose_topic"), self._on_pose, rt.SENSOR_SAMPLES)
        self.estimate_every = max(1, round(self._p("control_rate_hz") / self._p("estimate_rate_hz")))
        self.motion_commands = MotionCommands(self, self.model, self.controller)

    def apply_parameters(self):
        """Rebuild gains and limits from the parameters; the next tick uses them."""
        names, c = self.model.joint_names, self.controller
        c.shape_gains = ShapeGains([self._p(f"stiffness.{j}") for j in names],
                                   [self._p(f"damping.{j}") for j in names],
                                   [self._p(f"integral.{j}") for j in names])
        c.q_d = np.array([self._p(f"setpoint.{j}") for j in names])
        c.torque_limits = np.array([self._p(f"effort_limit.{j}") for j in names])
        c.compensation = self._p("compensation")
        c.observer.gains = ObserverGains(self._p("observer.k"), self._p("observer.l_rot"),
                                         self._p("observer.l_trans"))
        c.health.config = HealthConfig(self._p("health.innovation_threshold"), self._p("health.length"),
                                       int(self._p("health.reinit_after")), self._p("health.max_angular_rate"),
                                       self._p("health.max_speed"))
        self.watchdog.config = WatchdogConfig({"joint state": self._p("watchdog.max_joint_state_age"),
                                               "base pose": self._p("watchdog.max_base_pose_age")},
                                              self._p("watchdog.safe_mode"), self._p("watchdog.safe_damping"))
        self.motion_commands.apply_parameters()

    def on_cleanup(self, state):
        self._close_worker()
        return super().on_cleanup(state)

    def destroy_node(self):
        super().destroy_node()
        self._close_worker()

    def _close_worker(self):
        if getattr(self, "motion_commands", None) is not None:
            self.motion_commands.close()

    def on_activate(self, state):
        self.hold_pending = self._p("hold_on_activate")
        self.controller.hold(self.now())           # the observer does not integrate the inactive time
        return super().on_activate(state)

    # -- inputs -----------------------------------------------------------------------

    def on_joint_state(self, msg):
        super().on_joint_state(msg)
        if self.tick_on_input:          # a refused one too: its step sends the safe command
            self.input_tick()

    def _on_pose(self, msg):
        """A base pose sample: unusable values make the stream bad; a sample in another frame or
        stamped in the future is dropped and reported (the observer's gate judges the others)."""
        now = self.now()
        pose = msg.pose.pose if isinstance(msg, Odometry) else msg.pose
        try:
            g = m.pose_from_msg(pose)
        except FloatingBaseError as exc:
            self.refuse("base pose", str(exc), now)
            return
        world, t = self._p("world_frame"), m.stamp_to_seconds(msg.header.stamp) or now
        if msg.header.frame_id != world:
            return self.refuse("base pose", f"base pose sample dropped: frame_id is not the world frame "
                               f"'{world}'", now, stream_bad=False)
        if t - now > self.future_tolerance:
            return self.refuse("base pose", f"base pose sample dropped: stamp in the future (by more than "
                               f"{self.future_tolerance:g} s)", now, stream_bad=False)
        self.watchdog.received("base pose", now)
        if self.active:                            # only ticks consume samples
            self.poses.append((t, g))

    # -- control ----------------------------------------------------------------------

    def control(self, now):
        if self.hold_pending:
            self.hold_pending = False
            self._hold_measured_position()
        samples, self.poses = self.poses, []
        self.motion_commands.motion(now, self.q)
        counts = self._health_counts()
        try:
            self.out = self.controller.step(now, self.q, self.qdot, samples)
        finally:
            self._report_health(counts, now)
        self.saturated = self.out.saturated
        return [self.out.tau]

    def after_tick(self, now):
        self.limits.update(self.q, self.qdot, self.saturated)
        # no estimate before the first admitted sample, nor after a restart of the observer
        if (self.tick % self.estimate_every == 0 and self.controller.observer.initialized
                and np.isfinite(self.out.tau).all()):
            self._publish_estimates(self.out)
            self.motion_commands.publish()

    def _hold_measured_position(self):
        """``hold_on_activate``: every set-point becomes the measured position (within its range),
        in one atomic change, so that activation does not make the arm jump."""
        lo, hi = self.model.position_limits.T
        result = self.set_parameters_atomically([Parameter(f"setpoint.{j}", value=float(v)) for j, v in
                                                 zip(self.model.joint_names, np.clip(self.q, lo, hi))])
        if not result.successful:
            self.get_logger().error(f"hold_on_activate: set-points unchanged: {result.reason}")

    def on_fault(self, now):
        samples, self.poses = self.poses, []
        counts = self._health_counts()
        self.controller.hold(now, samples)
        self._report_health(counts, now)

    def _health_counts(self):
        h = self.controller.health
        return h.rejected, h.reinitializations, h.restarts

    def _report_health(self, before, now):
        """Report what the estimator's health checks did during this tick (stable texts)."""
        h = self.controller.health
        rejected, reinitializations, restarts = before
        if h.rejected > rejected:
            self.report("pose gate", f"base pose sample rejected: {h.last_rejection}", now)
        if h.reinitializations > reinitializations:
            self.report("observer reinit", "observer re-initialized on the pose samples after a run of "
                        "rejections (a re-localisation?)", now)
        if h.restarts > restarts:
            self.report("observer restart", f"observer restarted: {h.last_restart}", now)

    def safe_commands(self, now):
        fresh = self.watchdog.fresh("joint state", now)
        return [safe_torque(self.watchdog.config, self.qdot if fresh else None, self.controller.torque_limits)]

    def publish_commands(self, commands):
        np.take(commands[0], self.out_index, out=self.cmd_data)
        self.cmd_pub.publish(self.cmd)

    def _publish_estimates(self, out):
        """The estimates on the topics someone listens to (each message costs a share of a tick)."""
        odom_on, mu_on, w_on, comp_on = (pub.get_subscription_count() > 0 for pub in
                                         (self.est_pub, self.mu_pub, self.momentum_pub, self.comp_pub))
        if odom_on or mu_on or w_on:
            est = self.controller.estimates(out)
            stamp = self.get_clock().now().to_msg()
            odom, mu, w = self.odom_msg, self.mu_msg, self.momentum_msg
            odom.header.stamp = mu.header.stamp = w.header.stamp = stamp
        if odom_on:
            m.fill_pose_msg_se3(odom.pose.pose, self.controller.observer.g_hat_se3)     # est.g_hat as pin.SE3
            m.fill_twist_msg(odom.twist.twist, est.V1_hat)
            self.est_pub.publish(odom)
        if mu_on:
            m.fill_twist_msg(mu.twist, est.mu_hat_o)
            self.mu_pub.publish(mu)
        if w_on:
            m.fill_wrench_msg(w.wrench, est.momentum)
            self.momentum_pub.publish(w)
        if comp_on:
            np.concatenate((out.tau_hat_1, out.tau_hat_2), out=self.comp_data)
            self.comp_pub.publish(self.comp_msg)

    def diagnostic_values(self):
        obs, now = self.controller.observer, self.now()
        values = {"joint_state_age_ms": 1e3 * (now - self.joint_stamp) if self.joint_stamp else "none",
                  "base_pose_age_s": self.watchdog.age("base pose", now),
                  "observer_initialized": obs.initialized, "observer_pose_samples": obs.samples,
                  "observer_resets": obs.resets, "pose_samples_rejected": self.controller.health.rejected,
                  "observer_reinitializations": self.controller.health.reinitializations,
                  "observer_restarts": self.controller.health.restarts, **self.limits.report()}
        if obs.initialized:
            est = obs.estimate()
            values["observer_error_eps"] = float(np.linalg.norm(est.eps))
            values["locked_velocity_norm"] = float(np.linalg.norm(est.mu_hat_o))
        return {**values, **self.motion_commands.diagnostic_values()}


def main(args=None):
    rt.spin(ControllerNode, args)


if __name__ == "__main__":
    main()
