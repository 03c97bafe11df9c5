"""``floating_base_controller``: the observer and the shape controller of seed 002 as a ROS 2 node.

Subscribes  joint states (sensor_msgs/JointState, matched by name) and the base
            pose (geometry_msgs/PoseStamped, or nav_msgs/Odometry).
Publishes   joint efforts (std_msgs/Float64MultiArray in ``joints`` order, for
            ros2_control's forward_command_controller), ``~/base_estimate``
            (nav_msgs/Odometry), ``~/locked_velocity`` (TwistStamped, the
            estimate of mu in the base frame), ``~/momentum`` (WrenchStamped:
            torque = angular, force = linear momentum about the world origin),
            ``~/compensation`` (Float64MultiArray: tau_hat_1 then tau_hat_2) and
            ``/diagnostics``.

One control step per timer tick.  A lifecycle node: no commands unless
active.  Unusable input (stale, non-finite, unknown or missing joints, wrong
lengths) gives the safe command, a diagnostic and a rate-limited log line, and
the node resumes when good input returns.  Gains are parameters with ranges
(rqt_reconfigure sliders); they are validated and swapped between ticks.
"""
import time
from collections import deque

import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..control.orbital import OrbitalController
from ..control.shape import ShapeGains
from ..control.watchdog import JointStateMapper, Watchdog, WatchdogConfig, safe_torque
from ..conventions import fill_pose_msg, fill_twist_msg
from ..estimation.observer import ObserverGains
from ..lie import Ad_inv
from ..model import FloatingBaseModel
from ..resources import orbital_robot_urdf
from ..validation import FloatingBaseError
from . import messages as m
from .params import controller_params

NAME = "floating_base_controller"


class ControllerNode(LifecycleNode):
    def __init__(self, **kwargs):
        super().__init__(NAME, **kwargs)
        self.declare_parameter("urdf", "", m.descriptor(_spec("urdf")))
        urdf = self.get_parameter("urdf").value or orbital_robot_urdf()
        self.model = FloatingBaseModel.from_urdf(urdf)
        self.specs = {s.name: s for s in controller_params(self.model.joint_names, self.model.position_limits,
                                                           self.model.effort_limits)}
        for spec in self.specs.values():
            if spec.name != "urdf":
                self.declare_parameter(spec.name, spec.default, m.descriptor(spec))
        joints = [j for j in self.get_parameter("joints").value if j] or list(self.model.joint_names)
        if sorted(joints) != sorted(self.model.joint_names):
            raise FloatingBaseError(f"parameter joints {joints} must list the URDF's joints "
                                    f"{list(self.model.joint_names)}")
        self.joints = joints
        self.out_index = [self.model.joint_names.index(j) for j in joints]
        self.add_on_set_parameters_callback(self._validate)
        self.add_post_set_parameters_callback(lambda params: self._apply())
        self.controller = None
        if self.get_parameter("autostart").value:
            self.trigger_configure()
            self.trigger_activate()

    # -- parameters -------------------------------------------------------------------

    def _p(self, name):
        return self.get_parameter(name).value

    def _validate(self, params):
        for p in params:
            spec = self.specs.get(p.name)
            if spec is not None and spec.choices and p.value not in spec.choices:
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} must be one of {list(spec.choices)}, got {p.value!r}")
            if spec is not None and p.name.startswith("damping.") and p.value <= 0:
                return SetParametersResult(successful=False, reason=f"{p.name} must be > 0 (Lemma 11)")
        return SetParametersResult(successful=True)

    def _apply(self):
        """Rebuild gains and limits from the parameters; the next tick uses them."""
        if self.controller is None:
            return
        names = self.model.joint_names
        c = self.controller
        c.shape_gains = ShapeGains([self._p(f"stiffness.{j}") for j in names],
                                   [self._p(f"damping.{j}") for j in names])
        c.q_d = np.array([self._p(f"setpoint.{j}") for j in names])
        c.torque_limits = np.array([self._p(f"effort_limit.{j}") for j in names])
        c.compensation = self._p("compensation")
        c.observer.gains = ObserverGains(self._p("observer.k"), self._p("observer.l_rot"),
                                         self._p("observer.l_trans"))
        self.watchdog.config = WatchdogConfig(self._p("watchdog.max_joint_state_age"),
                                              self._p("watchdog.max_base_pose_age"),
                                              self._p("watchdog.safe_mode"), self._p("watchdog.safe_damping"))

    # -- lifecycle --------------------------------------------------------------------

    def on_configure(self, state):
        n = self.model.n
        self.controller = OrbitalController(self.model, np.zeros(n), ShapeGains(np.zeros(n), np.ones(n)))
        self.watchdog = Watchdog(WatchdogConfig())
        self._apply()
        self.mapper = JointStateMapper(self.model.joint_names)
        self.q = self.qdot = None
        self.joint_stamp = None
        self.active = False
        self.poses = []
        self.stats = LoopStats(keep_all=bool(self._p("timing_log")))
        self.reasons, self.tick = [], 0
        self.hold_pending = self._p("hold_on_activate")
        self.cmd_pub = self.create_lifecycle_publisher(Float64MultiArray, self._p("command_topic"), 10)
        self.est_pub = self.create_lifecycle_publisher(Odometry, "~/base_estimate", 10)
        self.mu_pub = self.create_lifecycle_publisher(TwistStamped, "~/locked_velocity", 10)
        self.momentum_pub = self.create_lifecycle_publisher(WrenchStamped, "~/momentum", 10)
        self.comp_pub = self.create_lifecycle_publisher(Float64MultiArray, "~/compensation", 10)
        self.diag_pub = self.create_publisher(m.DiagnosticArray, "/diagnostics", 10)
        self.cmd = Float64MultiArray()
        self.joint_sub = self.create_subscription(JointState, self._p("joint_states_topic"), self._on_joints,
                                                  m.LATEST_ONLY)
        pose_type = Odometry if self._p("base_pose_type") == "odometry" else PoseStamped
        self.pose_sub = self.create_subscription(pose_type, self._p("base_pose_topic"), self._on_pose, 10)
        self.diag_timer = self.create_timer(1.0 / self._p("diagnostics_rate_hz"), self._publish_diagnostics)
        self.estimate_every = max(1, round(self._p("control_rate_hz") / self._p("estimate_rate_hz")))
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        self.hold_pending = self._p("hold_on_activate")
        self.timer = self.create_timer(1.0 / self._p("control_rate_hz"), self._tick)
        self.active = True
        return super().on_activate(state)

    def on_deactivate(self, state):
        self.destroy_timer(self.timer)
        self.active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        for entity in (self.joint_sub, self.pose_sub):
            self.destroy_subscription(entity)
        for entity in (self.cmd_pub, self.est_pub, self.mu_pub, self.momentum_pub, self.comp_pub, self.diag_pub):
            self.destroy_publisher(entity)
        self.destroy_timer(self.diag_timer)
        self.controller = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        return TransitionCallbackReturn.SUCCESS

    def destroy_node(self):
        if self.controller is not None and self._p("timing_log"):
            self.stats.write(self._p("timing_log"))
        super().destroy_node()

    # -- inputs -----------------------------------------------------------------------

    def _now(self):
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joints(self, msg):
        now = self._now()
        try:
            self.q, self.qdot = self.mapper.map(msg.name, msg.position, msg.velocity)
            self.joint_stamp = m.stamp_to_seconds(msg.header.stamp) or now
            self.watchdog.joint_state(now)
        except FloatingBaseError as exc:
            self.q = self.qdot = None         # the safe command must not use stale velocities
            self.watchdog.joint_state(now, str(exc))

    def _on_pose(self, msg):
        now = self._now()
        pose = msg.pose.pose if isinstance(msg, Odometry) else msg.pose
        try:
            g = m.pose_from_msg(pose)
        except FloatingBaseError as exc:
            self.watchdog.base_pose(now, str(exc))
            return
        self.watchdog.base_pose(now)
        self.poses.append((m.stamp_to_seconds(msg.header.stamp) or now, g))

    # -- the control tick -------------------------------------------------------------

    def _tick(self):
        started = time.perf_counter()
        now = self._now()
        samples, self.poses = self.poses, []
        reasons = self.watchdog.reasons(now)
        out = None
        if not reasons:
            if self.hold_pending:
                self.hold_pending = False
                self.set_parameters([Parameter(f"setpoint.{j}", value=float(v))
                                     for j, v in zip(self.model.joint_names, self.q)])
            out = self.controller.step(now, self.q, self.qdot, samples)
            if not np.isfinite(out.tau).all():
                reasons, out = ["controller produced a non-finite torque"], None
        if out is None:
            self.controller.hold(now, samples)
            fresh = self.watchdog.joint_fresh(now)
            tau = safe_torque(self.watchdog.config, self.qdot if fresh else None, self.controller.torque_limits)
        else:
            tau = out.tau
        self._report_transition(reasons)
        self.cmd.data = tau[self.out_index].tolist()
        self.cmd_pub.publish(self.cmd)
        self.tick += 1
        if out is not None and self.tick % self.estimate_every == 0:
            self._publish_estimates(out)
        self.stats.record(now, now - self.joint_stamp if self.joint_stamp else np.nan,
                          out is not None and out.saturated, time.perf_counter() - started)

    def _report_transition(self, reasons):
        if reasons:
            self.get_logger().warning(f"safe command: {'; '.join(reasons)}", throttle_duration_sec=1.0)
        elif self.reasons:
            self.get_logger().info("inputs usable again: control resumed")
        if bool(reasons) != bool(self.reasons):
            self.reasons = reasons
            self._publish_diagnostics()
        self.reasons = reasons

    def _publish_estimates(self, out):
        obs = self.controller.observer
        stamp = self.get_clock().now().to_msg()
        world, base = self._p("world_frame"), self._p("base_frame")
        kin = self.model.kinematics(self.q)
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, world, base
        fill_pose_msg(odom.pose.pose, obs.g_hat)
        fill_twist_msg(odom.twist.twist, out.mu_hat_o - kin.A @ self.qdot)
        self.est_pub.publish(odom)
        mu = TwistStamped()
        mu.header.stamp, mu.header.frame_id = stamp, base
        fill_twist_msg(mu.twist, out.mu_hat_o)
        self.mu_pub.publish(mu)
        J = Ad_inv(obs.g_hat).T @ (kin.M_b @ out.mu_hat_o)
        w = WrenchStamped()
        w.header.stamp, w.header.frame_id = stamp, world
        m.fill_vector3(w.wrench.torque, J[:3])
        m.fill_vector3(w.wrench.force, J[3:])
        self.momentum_pub.publish(w)
        self.comp_pub.publish(Float64MultiArray(data=np.r_[out.tau_hat_1, out.tau_hat_2].tolist()))

    def _publish_diagnostics(self):
        if self.controller is None:
            return
        obs = self.controller.observer
        s = self.stats.summary()
        now = self._now()
        values = {"active": self.active, "safe_command_reasons": "; ".join(self.reasons) or "none",
                  "loop_rate_hz": s["rate_hz"], "period_p99_ms": s["period_p99_ms"],
                  "period_max_ms": s["period_max_ms"], "compute_p99_ms": s["compute_p99_ms"],
                  "joint_state_age_ms": s["age_ms"],
                  "base_pose_age_s": now - self.watchdog.pose_time if self.watchdog.pose_time else "none",
                  "torque_saturation_fraction": s["saturated"],
                  "observer_initialized": obs.initialized, "observer_pose_samples": obs.samples,
                  "observer_resets": obs.resets}
        if obs.initialized:
            est = obs.estimate()
            values["observer_error_eps"] = float(np.linalg.norm(est.eps))
            values["locked_velocity_norm"] = float(np.linalg.norm(est.mu_hat_o))
        level = m.WARN if self.reasons else m.OK
        message = "safe command: " + "; ".join(self.reasons) if self.reasons else "controlling"
        self.diag_pub.publish(m.diagnostic_array(self.get_clock().now().to_msg(), f"{NAME}: control loop",
                                                 self.get_fully_qualified_name(), level, message, values))


class LoopStats:
    """Tick period, compute time, joint-state age and saturation over the last ticks (and, if
    ``keep_all``, of every tick, for a timing log)."""

    def __init__(self, window=2000, keep_all=False):
        self.times, self.ages, self.sat, self.compute = (deque(maxlen=window) for _ in range(4))
        self.all = [] if keep_all else None

    def record(self, t, age, saturated, compute):
        self.times.append(t)
        self.ages.append(age)
        self.sat.append(saturated)
        self.compute.append(compute)
        if self.all is not None:
            self.all.append((t, compute, age))

    def write(self, path):
        """CSV of every tick: time, compute time, joint-state age (s)."""
        np.savetxt(path, np.array(self.all).reshape(-1, 3), delimiter=",", header="t,compute_s,joint_state_age_s",
                   comments="")

    def summary(self):
        if len(self.times) < 3:
            return dict(rate_hz=0.0, period_p99_ms=float("nan"), period_max_ms=float("nan"),
                        compute_p99_ms=float("nan"), age_ms=float("nan"), saturated=0.0)
        periods = np.diff(self.times) * 1e3
        ages = np.array(self.ages)
        ages = ages[np.isfinite(ages)]
        return dict(rate_hz=(len(self.times) - 1) / (self.times[-1] - self.times[0]),
                    period_p99_ms=float(np.percentile(periods, 99)), period_max_ms=float(periods.max()),
                    compute_p99_ms=float(np.percentile(self.compute, 99)) * 1e3,
                    age_ms=float(ages.mean()) * 1e3 if ages.size else float("nan"),
                    saturated=float(np.mean(self.sat)))


def _spec(name):
    return {s.name: s for s in controller_params([], [], [])}[name]


def main(args=None):
    m.spin(ControllerNode, args)


if __name__ == "__main__":
    main()
