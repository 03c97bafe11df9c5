"""``hopper_sim``: a [Feurstein2021] hopper simulated by MuJoCo (viscoelastic floor) behind hardware topics.

Publishes   joint states (sensor_msgs/JointState), base odometry (nav_msgs/Odometry:
            pose and body twist, as an IMU-plus-kinematics estimator would give them)
            and the foot force (geometry_msgs/WrenchStamped, ``force.z`` = normal
            ground reaction), at ``publish_rate_hz``.
Subscribes  joint efforts and the base torque (std_msgs/Float64MultiArray); a
            command older than ``command_timeout`` is replaced by zero.
The physics runs at ``physics_rate_hz`` (the floor is stiff).  Simulated time is
published on ``/clock`` and stamps every message: run the controller with
``use_sim_time: true`` (config/hopper.yaml does), and the loop is consistent at
any speed; the simulator advances at ``real_time_factor`` times the wall clock
(or slower, if the machine cannot keep up).  With ``wait_for_command`` (default)
it starts paused: once a controller is there (a subscriber to the joint states,
a publisher of the efforts) it offers the initial state at ``t = 0`` (again every
``lockstep_timeout`` while unanswered: the first offer can reach a controller
that has not matched the simulator's topics yet) and steps from the first command
on, so the hopper does not fall unactuated while the controller comes up.  With
``lockstep`` (default) it waits, after publishing the state at ``t``, for the
controller's commands before it steps on: the joint efforts and, if anyone
publishes it, the base torque (at most ``lockstep_timeout`` of wall time, then the
commands it has).  The hopper's stiff springs do not tolerate the few
milliseconds of extra delay an unsynchronized loop of two Python processes adds,
nor a step on the new efforts and the previous tick's base torque (the two topics
arrive in either order).

A physics blow-up (MuJoCo's bad position, velocity or acceleration warnings, after
which MuJoCo resets the state) stops the simulation: no more states, an ERROR on
``/diagnostics`` saying when and why, and ``/clock`` goes on (without physics) so
that a controller on simulated time sees its inputs stop and sends its safe command.
The status is OK otherwise (``simulating``, or ``waiting for the controller's first
command``), at ``diagnostics_rate_hz`` of wall time.
"""
import time

import mujoco
import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from floating_base_control.model import FloatingBaseModel
from floating_base_control.robots.hopper.model import planar_pose, planar_twist
from floating_base_control.sim.hopper import HopperPlant
from floating_base_control.resources import hopper_urdf
from floating_base_control.validation import FloatingBaseError
from floating_base_control.ros import messages as m
from floating_base_control.ros import runtime as rt
from floating_base_control.ros.params import hopper_sim_params

#: The command streams a lockstep tick waits for.
COMMANDS = ("efforts", "base torque")
#: MuJoCo's warnings after which it has reset the state: the simulation cannot go on.
BLOW_UPS = {mujoco.mjtWarning.mjWARN_BADQPOS: "position", mujoco.mjtWarning.mjWARN_BADQVEL: "velocity",
            mujoco.mjtWarning.mjWARN_BADQACC: "acceleration"}


class HopperSimNode(Node):
    def __init__(self, **kwargs):
        super().__init__("hopper_sim", **kwargs)
        self._warn_command = rt.throttled_warning(self.get_logger(), 1.0)
        self._warn_base = rt.throttled_warning(self.get_logger(), 1.0)
        for spec in hopper_sim_params():
            rt.declare(self, spec)
        p = self._p
        urdf = p("urdf") or hopper_urdf(p("robot"))
        self.model = FloatingBaseModel.from_urdf(urdf, gravity=(0.0, 0.0, -p("gravity")))
        joints = m.joint_order(p("joints"), self.model.joint_names)
        self.cmd_index = [joints.index(j) for j in self.model.joint_names]
        self.dt = 1.0 / p("physics_rate_hz")
        self.plant = HopperPlant(self.model, urdf, floor=p("floor"), base=p("base"), timestep=self.dt,
                                 floor_K=p("floor_K"), floor_D=p("floor_D"))
        if len(p("initial_state")) != 8:
            raise FloatingBaseError(f"parameter initial_state needs 8 values (x, y, theta, q1, vx, vy, omega, "
                                    f"qdot1), got {len(p('initial_state'))}")
        x, y, th, q, vx, vy, w, qd = p("initial_state")
        self.plant.set_state(planar_pose(x, y, th), np.array([q]), planar_twist(vx, vy, w), np.array([qd]))
        self.tau, self.base_torque = np.zeros(self.model.n), 0.0
        self.cmd_time = self.base_time = -np.inf
        self.timeout = p("command_timeout")
        self.steps = 0
        self.per_tick = max(1, round(p("physics_rate_hz") / p("publish_rate_hz")))
        self.lockstep, self.lockstep_timeout = p("lockstep"), p("lockstep_timeout")
        self.answered, self.waiting_since = set(COMMANDS), None    # commands since the last published state
        self.wait_for_command, self.commanded, self.offered = p("wait_for_command"), False, None
        self.failure = None                  # why the physics stopped, once it blew up
        self.world, self.base = p("world_frame"), p("base_frame")
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        self.joint_pub = self.create_publisher(JointState, p("joint_states_topic"), 10)
        self.odom_pub = self.create_publisher(Odometry, p("base_odometry_topic"), 10)
        self.force_pub = self.create_publisher(WrenchStamped, p("foot_force_topic"), 10)
        self.command_topic = self.create_subscription(Float64MultiArray, p("command_topic"), self._on_command,
                                                      rt.LATEST_ONLY).topic_name
        self.base_topic = self.create_subscription(Float64MultiArray, p("base_torque_topic"), self._on_base_torque,
                                                   rt.LATEST_ONLY).topic_name
        self.joint_msg = JointState(name=list(self.model.joint_names))
        self.diag_pub = self.create_publisher(m.DiagnosticArray, "/diagnostics", 10)
        self.create_timer(1.0 / (p("publish_rate_hz") * p("real_time_factor")), rt.timer_callback(self._tick))
        self.create_timer(1.0 / p("diagnostics_rate_hz"), rt.timer_callback(self._publish_diagnostics))

    def _p(self, name):
        return self.get_parameter(name).value

    @property
    def t(self):
        return self.steps * self.dt

    def _on_command(self, msg):
        tau = m.effort_command(msg.data, self.cmd_index)
        if tau is not None:
            self.tau, self.cmd_time, self.commanded = tau, self.t, True
            self.answered.add("efforts")
        else:
            self._warn_command(f"ignoring effort command {list(msg.data)}")

    def _on_base_torque(self, msg):
        if len(msg.data) == 1 and np.isfinite(msg.data[0]):
            self.base_torque, self.base_time = float(msg.data[0]), self.t
            self.answered.add("base torque")
        else:
            self._warn_base(f"ignoring base torque command {list(msg.data)}")

    def _answered(self):
        """Lockstep: the efforts, and the base torque unless nobody publishes it, came after the last state."""
        return "efforts" in self.answered and ("base torque" in self.answered
                                               or not self.count_publishers(self.base_topic))

    def _tick(self):
        if self.failure:
            self.steps += self.per_tick          # time goes on without physics: watchdogs on /clock see it
            self.clock_pub.publish(Clock(clock=m.seconds_to_stamp(self.t)))
            return
        if self.wait_for_command and not self.commanded:
            self._offer_initial_state()
            return
        if self.lockstep and not self._answered():
            now = time.monotonic()
            self.waiting_since = self.waiting_since or now
            if now - self.waiting_since < self.lockstep_timeout:
                return
        self.answered.clear()
        self.waiting_since = None
        tau = self.tau if self.t - self.cmd_time <= self.timeout else np.zeros(self.model.n)
        base = self.base_torque if self.t - self.base_time <= self.timeout else 0.0
        warnings = [self.plant.data.warning[w].number for w in BLOW_UPS]
        for _ in range(self.per_tick):
            self.plant.advance(tau, base)
            self.steps += 1
            blown = [name for w, name, n in zip(BLOW_UPS, BLOW_UPS.values(), warnings)
                     if self.plant.data.warning[w].number > n]
            if blown:
                return self._stop_physics(blown)
        self._publish_state(tau)

    def _offer_initial_state(self):
        """``wait_for_command``: the state at t = 0, once a controller is there, and again every
        ``lockstep_timeout`` while unanswered."""
        now = time.monotonic()
        there = self.joint_pub.get_subscription_count() and self.count_publishers(self.command_topic)
        if there and (self.offered is None or now - self.offered >= self.lockstep_timeout):
            self.offered = now
            self.answered.clear()
            self._publish_state(self.tau)

    def _stop_physics(self, blown):
        """The physics blew up (MuJoCo reset its state): no more states, ERROR on /diagnostics."""
        self.failure = (f"physics diverged at t = {self.t:.4f} s (MuJoCo: bad {' and '.join(blown)}, the state "
                        f"was reset): simulation stopped, no more states")
        self.get_logger().error(self.failure)
        self._publish_diagnostics()

    def _publish_diagnostics(self):
        if self.failure:
            level, message = m.ERROR, self.failure
        elif self.wait_for_command and not self.commanded:
            level, message = m.OK, "waiting for the controller's first command"
        else:
            level, message = m.OK, "simulating"
        name = self.get_fully_qualified_name()
        self.diag_pub.publish(m.diagnostic_array(self.get_clock().now().to_msg(), f"{name}: simulation", name,
                                                 level, message, {"sim_time_s": self.t}))

    def _publish_state(self, tau):
        """The state at the current time: /clock, joint states, odometry and foot force."""
        meas = self.plant.sense()
        stamp = m.seconds_to_stamp(self.t)
        self.clock_pub.publish(Clock(clock=stamp))
        msg = self.joint_msg
        msg.header.stamp = stamp
        msg.position, msg.velocity, msg.effort = meas.q.tolist(), meas.qdot.tolist(), tau.tolist()
        self.joint_pub.publish(msg)
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, self.world, self.base
        m.fill_pose_msg(odom.pose.pose, meas.g1)
        m.fill_twist_msg(odom.twist.twist, meas.V1)
        self.odom_pub.publish(odom)
        force = WrenchStamped()
        force.header.stamp, force.header.frame_id = stamp, "foot"
        force.wrench.force.z = float(meas.foot_force)
        self.force_pub.publish(force)


def main(args=None):
    rt.spin(HopperSimNode, args)


if __name__ == "__main__":
    main()
