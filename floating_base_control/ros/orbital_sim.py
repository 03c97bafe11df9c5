"""``mujoco_sim``: the simulated orbital robot behind the topics of real hardware.

Publishes   joint states (sensor_msgs/JointState: encoder readings, and the
            applied efforts) at ``publish_rate_hz``, and base pose samples
            (geometry_msgs/PoseStamped, noisy, at ``pose_rate_hz``, delivered
            ``pose_latency_s`` late, stamped with the time they were taken).
Subscribes  joint efforts (std_msgs/Float64MultiArray in ``joints`` order);
            a command older than ``command_timeout`` is replaced by zero torque,
            as a torque-controlled drive would.
Ground truth, for evaluation only, on ``~/ground_truth`` (nav_msgs/Odometry),
``~/joints`` (true joint states and applied efforts), ``~/locked_velocity`` (TwistStamped) and
``~/momentum`` (WrenchStamped: torque = angular, force = linear momentum, from
MuJoCo's own subtree quantities).

Time: the physics keeps up with the wall clock (several steps per tick when a
tick is late, up to ``MAX_CATCH_UP_S`` of a stall at once, each step under the
command it would have had; a tick that then finds no new period publishes nothing, rather
than the same sample again) and every message is stamped on one clock: the start's wall time
plus the steps of physics and, when the machine is too loaded to catch up, the
steps the physics stood still (a pause: samples due meanwhile see the state it
stands in).  So a sample is stamped with the time it was taken, and the stamps
keep the publish and pose grids whatever the pacing.  The clock starts on the
timer's grid, so that each tick steps to the time it was due: a joint state is
as old as the callback's delay and the publishing, not older.  Ground truth is
computed for the topics that have subscribers only. With
``wait_for_command`` (the default) the simulation starts paused, like a
simulator started paused: it publishes the initial joint states (freshly
stamped, no pose samples, no ground truth) and starts the physics at the first
command, so a run does not depend on how long the controller takes to start
and to discover the simulator.  With ``publish_clock`` that time is also
published on ``/clock`` (for nodes with ``use_sim_time``).  With ``lockstep``
the physics advances one publish period per command, as a simulator in
lockstep with its controller does: after a joint state it stands still (a
pause, as above) until a command comes, at most ``lockstep_timeout``; a
controller that the machine stalls then finds the robot where it left it,
instead of after tens of milliseconds under its last torque.  In lockstep with
``publish_clock`` time is the simulator's: the stamps and ``/clock`` advance with
the physics only (a wait is no pause), so a controller with ``use_sim_time`` reads
its trajectories, watchdogs and stamps on the physics' time, and a machine that
cannot keep the rate slows the run down instead of changing it.  In lockstep the
command that answered a state is applied however late the simulator's tick runs
(``command_timeout`` is for a controller that stopped answering).
"""
import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.timer import TimerInfo
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from floating_base_control.robots.orbital.spacecraft import load_robot
from floating_base_control.sim.plant import MujocoPlant
from floating_base_control.sim.sensors import JointEncoders, PoseSensor
from floating_base_control.ros.realtime import CollectBetweenTicks
from floating_base_control.validation import FloatingBaseError
from floating_base_control.ros import messages as m
from floating_base_control.ros import runtime as rt
from floating_base_control.ros.params import robot_options, sim_params

#: Longest stall (s) the physics catches up in one tick, under the last command until it times out, as the world
#: does not wait for a stalled computer (a virtual machine's vCPUs stall for tens of milliseconds under load).
#: Pausing instead would let the stamps run on while the base stands still: an observer then sees a tumble stop.
#: Beyond it (a machine too loaded for the rate), the simulation falls behind the wall clock rather than move
#: the robot open loop for longer (a simulation that must keep its time whatever the load: ``lockstep``).
MAX_CATCH_UP_S = 0.1


class SimNode(Node):
    def __init__(self, **kwargs):
        super().__init__("mujoco_sim", **kwargs)
        self._wall = rt.clock_seconds(self)
        self._warn_command = rt.throttled_warning(self.get_logger(), 1.0)
        self._warn_behind = rt.throttled_warning(self.get_logger(), 5.0)
        for spec in sim_params():
            rt.declare(self, spec)
        p = self._p
        self.model, urdf = load_robot(**robot_options(p))
        joints = m.joint_order(p("joints"), self.model.joint_names)
        self.cmd_index = [joints.index(j) for j in self.model.joint_names]
        self.dt = 1.0 / p("physics_rate_hz")
        # whole publish periods of physics per tick: the stamps stay on the publish_rate_hz grid when
        # a tick comes late (a loaded machine), as a driver's fixed-rate loop stamps them
        self.per_tick = max(1, round(p("physics_rate_hz") / p("publish_rate_hz")))
        self.max_catch_up = self.per_tick * max(1, round(MAX_CATCH_UP_S / self.dt) // self.per_tick)
        self.plant = MujocoPlant.from_urdf(urdf, self.model, timestep=self.dt, contacts=False)
        seed = p("seed")
        self.encoders = JointEncoders(p("q_noise"), p("qdot_noise"), seed=2 * seed + 1)
        self.pose_sensor = PoseSensor(p("pose_rate_hz"), p("pose_rotation_noise"), p("pose_position_noise"),
                                      p("pose_latency_s"), seed=2 * seed + 2)
        lo, hi = self.model.position_limits.T
        middle = np.where(np.isfinite(lo + hi), 0.5 * (lo + hi), 0.0)
        q0 = np.array(p("q0"), dtype=float)
        if q0.size not in (1, self.model.n):
            raise FloatingBaseError(f"parameter q0 needs {self.model.n} values (or one: the middle of each "
                                    f"joint's range), got {q0.size}")
        q0 = np.clip(q0, lo, hi) if q0.size == self.model.n else middle
        mu0 = np.r_[np.deg2rad(p("mu0_omega_deg_s")), p("mu0_v")]
        self.plant.set_state(np.eye(4), q0, mu0, np.zeros(self.model.n))
        self.tau = self.zero = np.zeros(self.model.n)
        self.cmd_time = -np.inf
        self.command_timeout = p("command_timeout")
        self.steps = self.paused = 0       # the stamp clock: t0 + (steps + paused) * dt
        self._published = None             # the stamp clock of the last joint state published
        self.t0 = None
        self.wait_for_command = p("wait_for_command")
        self.lockstep, self.lockstep_timeout = p("lockstep"), p("lockstep_timeout")
        self.commanded = False              # a command since the physics last stepped
        self.truth_every = max(1, round(p("publish_rate_hz") / p("ground_truth_rate_hz")))
        self.ticks = 0
        self.joint_pub = self.create_publisher(JointState, p("joint_states_topic"), 10)
        self.pose_pub = self.create_publisher(PoseStamped, p("base_pose_topic"), 10)
        self.truth_pub = self.create_publisher(Odometry, "~/ground_truth", 10)
        self.truth_joint_pub = self.create_publisher(JointState, "~/joints", 10)
        self.mu_pub = self.create_publisher(TwistStamped, "~/locked_velocity", 10)
        self.momentum_pub = self.create_publisher(WrenchStamped, "~/momentum", 10)
        self.create_subscription(Float64MultiArray, p("command_topic"), self._on_command, rt.LATEST_ONLY)
        self._preallocate_messages(p("world_frame"), p("base_frame"))
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if p("publish_clock") else None
        self.create_timer(1.0 / p("publish_rate_hz"), rt.timer_callback(self._tick))
        self.collector = CollectBetweenTicks()      # the joint states keep their period: no GC inside a tick
        self.collector.start()

    def _p(self, name):
        return self.get_parameter(name).value

    def _preallocate_messages(self, world, base):
        """The messages of every tick, filled in place (no allocation, no per-element checks)."""
        n, names = self.model.n, list(self.model.joint_names)
        self.joint_msg = JointState(name=names)
        self.joint_q, self.joint_qdot, self.joint_effort = (m.float64_field(self.joint_msg, f, n)
                                                            for f in ("position", "velocity", "effort"))
        self.truth_msg = Odometry()
        self.truth_msg.header.frame_id, self.truth_msg.child_frame_id = world, base
        self.truth_joint_msg = JointState(name=names)
        self.truth_joint_msg.header.frame_id = world
        self.truth_q, self.truth_qdot, self.truth_effort = (m.float64_field(self.truth_joint_msg, f, n)
                                                            for f in ("position", "velocity", "effort"))
        self.truth_mu_msg = TwistStamped()
        self.truth_mu_msg.header.frame_id = base
        self.truth_momentum_msg = WrenchStamped()
        self.truth_momentum_msg.header.frame_id = world

    def destroy_node(self):
        self.collector.stop()
        super().destroy_node()

    def _on_command(self, msg):
        tau = m.effort_command(msg.data, self.cmd_index)
        if tau is None:
            self._warn_command(f"ignoring effort command {list(msg.data)}: needs {self.model.n} finite values")
            return
        self.tau, self.cmd_time, self.commanded = tau, self._wall(), True

    def _tick(self, timer: TimerInfo):
        wall = self._wall()
        if self.t0 is None:
            if self.wait_for_command and self.cmd_time == -np.inf:
                self._publish_joint_state(wall, self.zero)
                return
            # the physics' origin on the timer's grid (the time this tick was due, not when it ran): each
            # tick then steps to its own due time, and a joint state is as old as the callback's delay
            self.t0 = timer.expected_call_time.nanoseconds * 1e-9
        target = int((wall - self.t0) / self.dt)
        todo = (target - self.steps - self.paused) // self.per_tick * self.per_tick
        if self.lockstep:
            allowed = self.per_tick if self.commanded or wall - self.cmd_time > self.lockstep_timeout else 0
            if todo > allowed:
                if not self.clock_pub:            # on /clock, time is the physics': a wait is no time at all
                    self._pause(todo - allowed)
                todo = allowed
        elif todo > self.max_catch_up:
            self._warn_behind(f"{todo - self.max_catch_up} physics steps behind the wall clock: the simulation "
                              "slows down")
            self._pause(todo - self.max_catch_up)                 # fall behind rather than jump
            todo = self.max_catch_up
        if self.lockstep:     # the command that answered the last state is applied however late the tick runs
            fresh = self.commanded or wall - self.cmd_time <= self.command_timeout
            fresh_until = np.inf if fresh else -np.inf
        else:                 # each step of a catch-up under the command until it times out, at the step's time
            fresh_until = self.cmd_time + self.command_timeout - self.t0
        applied = self._command_at(fresh_until)
        for _ in range(max(todo, 0)):
            applied = self._command_at(fresh_until)
            self.plant.step(applied)
            self.steps += 1
            if self.pose_sensor.due(self._stamp_clock()):      # sampled on its own clock, not the tick's
                self.pose_sensor.sample(self._stamp_clock(), self.plant.state()[0])
        t = self._stamp_clock()
        self.commanded = self.commanded and todo <= 0     # a command counts for the state it answered
        if t == self._published:
            # the timer firing again at once after a late tick that caught up: the same sample again
            # would only make the controller step twice on it
            return
        self._published = t
        self._publish_joint_state(self.t0 + t, applied)
        self.ticks += 1
        if self.ticks % self.truth_every == 0:
            self._publish_truth(self.t0 + t, applied)
        for t_taken, g in self.pose_sensor.deliver(t):
            pose = PoseStamped()
            pose.header.stamp, pose.header.frame_id = m.seconds_to_stamp(self.t0 + t_taken), self._p("world_frame")
            m.fill_pose_msg(pose.pose, g)
            self.pose_pub.publish(pose)
        self.collector.after_tick()

    def _command_at(self, fresh_until):
        """The torque the next physics step applies: the last command until ``fresh_until`` (stamp clock)."""
        return self.tau if self._stamp_clock() <= fresh_until else self.zero

    def _stamp_clock(self):
        """The stamp clock (s since t0)."""
        return (self.steps + self.paused) * self.dt

    def _pause(self, steps):
        """The physics stands still for ``steps`` of the stamp clock; the pose samples due meanwhile
        are taken of the state it stands in, each stamped with its own time."""
        g1 = self.plant.state()[0]
        for _ in range(steps):
            self.paused += 1
            if self.pose_sensor.due(self._stamp_clock()):
                self.pose_sensor.sample(self._stamp_clock(), g1)

    def _publish_joint_state(self, t, applied):
        msg = self.joint_msg
        m.set_stamp(msg.header.stamp, t)
        if self.clock_pub:                       # the stamps' time, paused or not: a use_sim_time
            self.clock_pub.publish(Clock(clock=msg.header.stamp))  # controller must tick to send its first command
        self.joint_q[:], self.joint_qdot[:] = self.encoders.read(*self.plant.joint_state())
        self.joint_effort[:] = applied
        self.joint_pub.publish(msg)

    def _publish_truth(self, t, applied):
        """Ground truth on the topics someone listens to (each costs a share of the tick)."""
        pubs = (self.truth_pub, self.truth_joint_pub, self.mu_pub, self.momentum_pub)
        listened = [pub.get_subscription_count() > 0 for pub in pubs]
        if not any(listened):
            return
        g1, q, V1, qdot = self.plant.state()
        odom, joints, mu, w = self.truth_msg, self.truth_joint_msg, self.truth_mu_msg, self.truth_momentum_msg
        if listened[0]:
            m.set_stamp(odom.header.stamp, t)
            m.fill_pose_msg(odom.pose.pose, g1)
            m.fill_twist_msg(odom.twist.twist, V1)
            self.truth_pub.publish(odom)
        if listened[1]:
            m.set_stamp(joints.header.stamp, t)
            self.truth_q[:], self.truth_qdot[:], self.truth_effort[:] = q, qdot, applied
            self.truth_joint_pub.publish(joints)
        if listened[2]:
            m.set_stamp(mu.header.stamp, t)
            m.fill_twist_msg(mu.twist, self.model.locked_velocity(q, V1, qdot))
            self.mu_pub.publish(mu)
        if listened[3]:
            m.set_stamp(w.header.stamp, t)
            m.fill_wrench_msg(w.wrench, self.plant.momentum())
            self.momentum_pub.publish(w)


def main(args=None):
    rt.spin(SimNode, args)


if __name__ == "__main__":
    main()
