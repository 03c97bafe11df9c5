"""Fixtures: the orbital robot and random kinematic trees, with random states."""
import os
import sys
import zlib

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
