"""Fixtures: the orbital robot and random kinematic trees, with random states."""
import inspect
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from floating_base_control import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from helpers import MODEL_NAMES, model_urdf


def pytest_configure(config):
    """``FBC_REQUIRE_ROS=1`` (``make test``, CI): the ROS 2 tests must run, not skip."""
    if os.environ.get("FBC_REQUIRE_ROS"):
        try:
            import rclpy  # noqa: F401
            from helpers.ros_harness import Client  # noqa: F401
        except ImportError as exc:
            raise pytest.UsageError(f"FBC_REQUIRE_ROS is set but ROS 2 cannot be imported: {exc}") from exc


#: Folders whose tests need ROS 2, or the simulator, whatever they call.
FOLDER_MARKS = {"ros": "ros", "sim": "sim", "experiments": "sim", "cli": "sim"}
SIMULATOR = ("floating_base_control.sim", "floating_base_control.experiments", "mujoco")


def _uses_simulator(item):
    """Whether the test's code, the test module's functions it calls or its fixtures read a module of
    the simulator."""
    module = item.module.__dict__
    fixtures = item._fixtureinfo.name2fixturedefs
    todo = [item.function] + [d.func for name in item.fixturenames for d in fixtures.get(name, ())]
    seen = set()
    while todo:
        code = getattr(todo.pop(), "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        todo.extend(type("f", (), {"__code__": c})() for c in code.co_consts if inspect.iscode(c))
        for name in code.co_names:
            obj = module.get(name)
            origin = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
            if isinstance(origin, str) and origin.startswith(SIMULATOR):
                return True
            if inspect.isfunction(obj) and obj.__module__ == item.module.__name__:
                todo.append(obj)
    return False


#: Files whose nodes run at real-time priority (SCHED_FIFO, as the shipped configs set it).  Two 1 kHz real-time
#: node pairs at once ask more of two cores than Linux gives real-time tasks (95 %) and are throttled: beside two
#: CPU burners, with three test processes, a lockstep hopper run took minutes and a real-time demo recorded
#: nothing before its time-out.  So one test process runs these files, one after another.
REALTIME_FILES = ("test_ros_hopper.py", "test_ros_demo.py", "test_ros_runtime.py", "test_ros_hardware_launch.py")


def pytest_collection_modifyitems(config, items):
    """Markers by layer (setup.cfg registers them): ``ros`` for test/ros, ``sim`` for the folders that
    run the simulator and for any test whose code reads the simulator's modules (so ``-m "not ros and
    not sim"`` is the core's math alone)."""
    root = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(root).parts[0]
        if folder in FOLDER_MARKS:
            item.add_marker(FOLDER_MARKS[folder])
        elif _uses_simulator(item):
            item.add_marker("sim")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's ``--dist loadfile`` (a file's tests in one process: its module fixtures are built once),
    the :data:`REALTIME_FILES` as one file."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class RealtimeFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid):
            file = super()._split_scope(nodeid)
            return "realtime" if Path(file).name in REALTIME_FILES else file
    return RealtimeFilesTogether(config, log)


@pytest.fixture(scope="module", autouse=True)
def _ros_domains(request):
    """A test module's ROS domains are free again when it ends (ros_harness.domain_for)."""
    yield
    if "helpers.ros_harness" in sys.modules:
        sys.modules["helpers.ros_harness"].release_domains(request.module.__name__)


@pytest.fixture(scope="session")
def orbital():
    return FloatingBaseModel.from_urdf(orbital_robot_urdf())


@pytest.fixture(scope="session", params=MODEL_NAMES)
def model(request):
    """The orbital robot and random trees (branches, prismatic and continuous joints,
    offset and rotated joint frames, merged fixed links)."""
    return FloatingBaseModel.from_urdf_string(model_urdf(request.param), source=request.param)


@pytest.fixture
def rng(request):
    # one stream per test, the same in every run (str hash() is salted per process), named by the test's
    # file and name only, as when the suite was one folder: the streams stay put when a file moves
    return np.random.default_rng(zlib.crc32(f"test/{request.path.name}::{request.node.name}".encode()))
