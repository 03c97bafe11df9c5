"""``hopper_controller``: the hopping controller of [Feurstein2021] 4.1.5 as a ROS 2 node.

Subscribes  joint states (sensor_msgs/JointState, by name), base odometry
            (nav_msgs/Odometry: pose and body twist) and the foot force
            (geometry_msgs/WrenchStamped, ``force.z`` = normal ground reaction).
Publishes   joint efforts (std_msgs/Float64MultiArray, ros2_control
            forward_command_controller convention), the base torque of the
            polar spring (std_msgs/Float64MultiArray, one value, N m about the
            plane normal) and ``/diagnostics``.

Each control step follows a complete set of inputs with one time stamp (joint
state, odometry, foot force; ``tick_on_input``): the hopper's stiff virtual
springs become unstable with one millisecond of extra delay.  A set with a refused
message gets the safe command at once; if the inputs stop, the timer sends it.
The gains are the fields of :class:`~floating_base_control.robots.hopper.controller.HopperGains`,
tunable live (validated by ``HopperGains`` itself, e.g. the contact hysteresis
needs ``liftoff_force < touchdown_force``); the variant is fixed at start.
``contact_rule`` picks stance/flight: ``foot_height`` (default; from the odometry and
the encoders, for commands held one period of ``control_rate_hz``, which is then the
period of the inputs: the simulator's ``publish_rate_hz``) or ``foot_force`` (the foot
force topic).
Lifecycle and safety: ``controller_base.py`` (the safe command is zero effort).
"""
from dataclasses import fields

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import Float64MultiArray

from floating_base_control.robots.hopper.controller import HopperController, HopperGains
from floating_base_control.robots.hopper.model import HopperMeasurements
from floating_base_control.control.watchdog import WatchdogConfig
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import hopper_urdf
from floating_base_control.validation import FloatingBaseError, InputError
from floating_base_control.ros import messages as m
from floating_base_control.ros import runtime as rt
from floating_base_control.ros.controller_base import ControlNode
from floating_base_control.ros.params import hopper_controller_params

NAME = "hopper_controller"
GAIN_FIELDS = [f.name for f in fields(HopperGains)]
INPUTS = {"joint state": "watchdog.max_joint_state_age", "base odometry": "watchdog.max_odometry_age",
          "foot force": "watchdog.max_foot_force_age"}


class HopperControllerNode(ControlNode):
    def __init__(self, **kwargs):
        super().__init__(NAME, hopper_controller_params(), **kwargs)
        urdf = self._p("urdf") or hopper_urdf(self._p("robot"))
        self.model = FloatingBaseModel.from_urdf(urdf, gravity=(0.0, 0.0, -self._p("gravity")))
        self.out_index = self.command_index()
        self.tick_on_input = True
        self.stamps = {}
        self.start()

    def _gains(self, overrides=None):
        values = {name: self._p(name) for name in GAIN_FIELDS}
        values.update(overrides or {})
        return HopperGains(**values)

    def check_parameters(self, new):
        try:
            self._gains({name: value for name, value in new.items() if name in GAIN_FIELDS})
        except InputError as exc:
            return str(exc)
        return None

    def configure(self):
        self.controller = HopperController(self.model, self._gains(), self._p("foot_frame"),
                                           control_period=1.0 / self._p("control_rate_hz"))
        self.g1 = self.V1 = None
        self.force, self.saturated = 0.0, False
        self.cmd_pub = self.create_lifecycle_publisher(Float64MultiArray, self._p("command_topic"), 10)
        self.base_pub = self.create_lifecycle_publisher(Float64MultiArray, self._p("base_torque_topic"), 10)
        self.cmd, self.base_cmd = Float64MultiArray(), Float64MultiArray()
        self.command_publishers = [self.cmd_pub, self.base_pub]
        self.create_subscription(Odometry, self._p("base_odometry_topic"), self._on_odometry, rt.LATEST_ONLY)
        self.create_subscription(WrenchStamped, self._p("foot_force_topic"), self._on_force, rt.LATEST_ONLY)

    def apply_parameters(self):
        self.controller.gains = self._gains()
        self.controller.base_torque_limit = self._p("base_torque_limit")
        self.watchdog.config = WatchdogConfig({name: self._p(param) for name, param in INPUTS.items()}, "zero")

    # -- inputs -----------------------------------------------------------------------

    def on_joint_state(self, msg):
        super().on_joint_state(msg)
        self._arrived("joint state", msg)

    def _on_odometry(self, msg):
        now = self.now()
        try:
            g1 = m.pose_from_msg(msg.pose.pose)
            V1 = m.twist_from_msg(msg.twist.twist)
            if not np.isfinite(V1).all():
                raise InputError("base odometry has a non-finite twist")
            if msg.header.frame_id != self._p("world_frame"):
                raise InputError(f"base odometry frame_id is not the world frame '{self._p('world_frame')}'")
            self.checked_stamp("base odometry", msg.header.stamp, now)
        except FloatingBaseError as exc:
            self.refuse("base odometry", str(exc), now)
        else:
            self.g1, self.V1 = g1, V1
            self.watchdog.received("base odometry", now)
        self._arrived("base odometry", msg)

    def _on_force(self, msg):
        now = self.now()
        force = msg.wrench.force.z
        try:
            if not np.isfinite(force):
                raise InputError("foot force is not finite")
            self.checked_stamp("foot force", msg.header.stamp, now)
        except FloatingBaseError as exc:
            self.refuse("foot force", str(exc), now)
        else:
            self.force = max(float(force), 0.0)
            self.watchdog.received("foot force", now)
        self._arrived("foot force", msg)

    def _arrived(self, name, msg):
        """Step once all inputs carry the same new stamp, refused ones included (the step then sends the
        safe command: the simulator in lockstep gets its answer)."""
        self.stamps[name] = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        if len(self.stamps) == len(INPUTS) and len(set(self.stamps.values())) == 1:
            self.stamps.clear()
            self.input_tick()

    # -- control ----------------------------------------------------------------------

    def control(self, now):
        cmd = self.controller.step(HopperMeasurements(now, self.q, self.qdot, self.g1, self.V1, self.force))
        self.saturated = cmd.saturated
        return [cmd.tau, np.array([cmd.base_torque])]

    def safe_commands(self, now):
        return [np.zeros(self.model.n), np.zeros(1)]

    def publish_commands(self, commands):
        tau, base = commands
        self.cmd.data = tau[self.out_index].tolist()
        self.cmd_pub.publish(self.cmd)
        self.base_cmd.data = base.tolist()
        self.base_pub.publish(self.base_cmd)

    def diagnostic_values(self):
        now = self.now()
        return {"stance": self.controller.contact.stance, "variant": self.controller.gains.variant,
                **{f"{name.replace(' ', '_')}_age_s": self.watchdog.age(name, now) for name in INPUTS}}


def main(args=None):
    rt.spin(HopperControllerNode, args)


if __name__ == "__main__":
    main()
