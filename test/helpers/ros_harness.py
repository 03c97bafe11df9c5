"""Running the package's nodes as separate processes and talking to them through ROS 2 only.

Traffic stays on this machine: Fast DDS with shared memory only and a domain
of the test's own: :func:`domain_for` takes the first free id of ``DOMAINS`` by an exclusive
``flock`` on ``<tmp>/fbc-ros-domains/<id>.lock``, so concurrent pytest runs on one machine never
share a domain.  Everything here is what a real client (or rqt) would do:
publish on topics, subscribe, call parameter and lifecycle services.
"""
import fcntl
import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.duration import Duration  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from floating_base_control.processes import die_with_parent  # noqa: E402
from floating_base_control.ros.runtime import LOCAL_DDS, local_env  # noqa: E402

os.environ.update(LOCAL_DDS)       # any participant of this process (clients, in-process nodes): shared memory only


#: the domains tests take: away from 0, the Makefile's 61 and ``ros2 launch`` users' usual ids, and
#: below 232 (Fast DDS's largest valid id)
DOMAINS = range(100, 200)
LOCK_DIR = Path(tempfile.gettempdir()) / "fbc-ros-domains"
_taken = {}          # name -> (domain, fd of its locked file)


#: the overall limit (s) of a wait on a predicate: generous, a loaded machine must not decide a verdict
TIMEOUT = 30.0


def domain_for(name):
    """A ROS domain of ``name``'s own on this machine (the same one for the same name).

    The first id of ``DOMAINS`` whose lock file no other process holds (an exclusive ``flock``,
    taken without waiting): held until :func:`release_domains` or this process ends, and passed
    on to every node :func:`popen` starts on it, so a node left over from a killed run keeps its
    domain taken as long as it lives."""
    if name not in _taken:
        LOCK_DIR.mkdir(exist_ok=True)
        for domain in (d for d in DOMAINS if not in_use(d)):
            fd = os.open(LOCK_DIR / f"{domain}.lock", os.O_RDONLY | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            _taken[name] = (domain, fd)
            break
        else:
            raise RuntimeError(f"every ROS domain in {DOMAINS} is taken (see the holders: fuser {LOCK_DIR}/*)")
    return _taken[name][0]


def in_use(domain):
    """Whether a Fast DDS participant has shared-memory ports of ``domain`` on this machine (RTPS ports
    7400 + 250 domain + offset): one started without the lock, e.g. by a script with a fixed
    ROS_DOMAIN_ID, or a file left behind (skipping it costs one id of a hundred)."""
    base = 7400 + 250 * domain
    return any(base <= int(m.group(1)) < base + 250
               for m in map(re.compile(r"fastdds_port(\d+)").match, os.listdir("/dev/shm")) if m)


def release_domains(prefix):
    """Free the domains taken for names starting with ``prefix`` (a test module's, when it ends)."""
    for name in [n for n in _taken if n.startswith(prefix)]:
        os.close(_taken.pop(name)[1])


def popen(args, domain):
    """Start ``args`` in ROS domain ``domain`` (holding its lock), in a process group of its own
    (what a terminal or ``ros2 launch`` signals as a whole) that ends when this process ends, killed or
    not (:func:`~floating_base_control.processes.die_with_parent`), output captured in a file (:func:`output`):
    a pipe read only at the end fills with 64 kB of log, a node's warning a second for four minutes,
    and then blocks the node in its next write."""
    locks = [fd for d, fd in _taken.values() if d == domain]
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(args, env=local_env(domain), stdout=log, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, pass_fds=locks, preexec_fn=die_with_parent())
    proc.log = log
    return proc


def output(proc, timeout=None):
    """What the process wrote, once it ended (waiting up to ``timeout`` s)."""
    proc.wait(timeout=timeout)
    proc.log.seek(0)
    return proc.log.read()


def start_node(module, domain, params, ros_args=()):
    """Start ``floating_base_control.ros.<module>`` with ``-p name:=value`` parameters (:func:`popen`)."""
    args = [sys.executable, "-m", f"floating_base_control.ros.{module}", "--ros-args", *ros_args]
    for name, value in params.items():
        args += ["-p", f"{name}:={value}"]
    return popen(args, domain)


def controller_with_client(test_module, params, joints):
    """A module fixture's body: ``floating_base_controller`` in the test module's own domain and a
    client, yielded; then both stopped, and the node's output must hold no traceback."""
    domain = domain_for(test_module)
    proc = start_node("orbital_controller", domain, params)
    client = Client(domain, joints)
    yield client
    client.close()
    log = stop(proc)
    assert "Traceback" not in log, log


def signal_group(proc, sig=signal.SIGINT):
    """Ctrl-C in a terminal: the signal goes to the whole process group."""
    os.killpg(proc.pid, sig)


def stop(proc):
    """Ctrl-C to a node process (killed if it has not ended 10 s later); what it wrote."""
    return stop_all([proc])[0]


def stop_all(procs):
    """:func:`stop` of several processes, their shutdowns at the same time: each gets its SIGINT, then each
    is waited for; what each wrote."""
    running = [proc for proc in procs if proc.poll() is None]
    for proc in running:
        proc.send_signal(2)
    for proc in running:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return [output(proc) for proc in procs]


class Client:
    """A test node: publishes inputs, records outputs, calls services."""

    def __init__(self, domain, joints):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("test_client", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.joints = list(joints)
        self.commands, self.diagnostics = [], []
        self.poses_sent = 0
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda msg: self.commands.append((time.monotonic(), list(msg.data))), 100)
        self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda msg: self.diagnostics.extend(msg.status), 100)

    # Publishers as a robot stack's (joint_state_broadcaster reliable, motion capture best-effort), created
    # when first used: a client that only watches is no second source of joint states (the node warns)
    @functools.cached_property
    def joint_pub(self):
        return self.node.create_publisher(JointState, "/joint_states", 10)

    @functools.cached_property
    def pose_pub(self):
        return self.node.create_publisher(PoseStamped, "/base_pose", qos_profile_sensor_data)

    @functools.cached_property
    def reliable_pose_pub(self):
        return self.node.create_publisher(PoseStamped, "/base_pose", 10)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def spin(self, seconds):
        """Spin for ``seconds``, at least once (a client that got no CPU meanwhile still takes a message)."""
        end = time.monotonic() + seconds
        while True:
            self.executor.spin_once(timeout_sec=0.005)
            if time.monotonic() >= end:
                return

    def now_msg(self):
        return self.node.get_clock().now().to_msg()

    def stamp(self, age=0.0):
        """A stamp ``age`` s ago (negative: in the future)."""
        return (self.node.get_clock().now() - Duration(nanoseconds=int(age * 1e9))).to_msg()

    def publish_joints(self, q, qdot, names=None, age=0.0):
        msg = JointState(name=list(names or self.joints), position=[float(x) for x in q],
                         velocity=[float(x) for x in qdot])
        msg.header.stamp = self.stamp(age)
        self.joint_pub.publish(msg)

    def publish_pose(self, xyz=(0.0, 0.0, 0.0), quat_xyzw=(0.0, 0.0, 0.0, 1.0), reliable=False, age=0.0,
                     frame_id="world"):
        """A base pose sample (best-effort, as SensorDataQoS, unless ``reliable``) taken ``age`` s ago."""
        msg = PoseStamped()
        msg.header.stamp = self.stamp(age)
        msg.header.frame_id = frame_id
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = xyz
        o.x, o.y, o.z, o.w = quat_xyzw
        (self.reliable_pose_pub if reliable else self.pose_pub).publish(msg)
        self.poses_sent += 1

    def stream(self, seconds, q, qdot, pose_every=20, pose=None, **joint_kwargs):
        """Publish joint states every 5 ms (and a pose every ``pose_every`` of them; 0: none;
        ``pose``: keyword arguments of :meth:`publish_pose`) for ``seconds``."""
        end, i = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            self.publish_joints(q, qdot, **joint_kwargs)
            if pose_every and i % pose_every == 0:
                self.publish_pose(**(pose or {}))
            i += 1
            self.spin(0.005)

    def last_command(self, since=0.0):
        recent = [c for t, c in self.commands if t >= since]
        return recent[-1] if recent else None

    def set_parameters(self, node_name, atomically=False, **values):
        """Set ``values`` (``__`` for ``.`` in names) as rqt would: one result per parameter, or
        one result for all with ``atomically``."""
        client = AsyncParameterClient(self.node, node_name)
        assert client.wait_for_services(timeout_sec=TIMEOUT), f"no parameter services on {node_name}"
        params = [Parameter(k.replace("__", "."), value=v) for k, v in values.items()]
        future = (client.set_parameters_atomically if atomically else client.set_parameters)(params)
        self.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        assert future.done(), f"{node_name} did not answer set_parameters within {TIMEOUT:g} s"
        result = future.result()
        return [result.result] if atomically else result.results

    def call(self, srv_type, name, request):
        client = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=TIMEOUT), f"no service {name}"
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        assert future.done(), f"{name} did not answer within {TIMEOUT:g} s"
        return future.result()

    def drain(self, quiet=0.3, spins=20):
        """Take every command already delivered: spin until none arrived for ``quiet`` s and
        ``spins`` spins in a row (so a client that got no CPU for a while takes what is waiting)."""
        n, calm, since = len(self.commands), 0, time.monotonic()
        while calm < spins or time.monotonic() - since < quiet:
            self.executor.spin_once(timeout_sec=0.005)
            if len(self.commands) != n:
                n, calm, since = len(self.commands), 0, time.monotonic()
            else:
                calm += 1

    def wait_for(self, predicate, timeout=TIMEOUT):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.spin(0.02)
        return False
