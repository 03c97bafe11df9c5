"""Fixtures: the orbital robot and random kinematic trees, with random states."""
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from random_tree import random_tree_urdf  # noqa: E402

from floating_base_control import FloatingBaseModel  # noqa: E402
from floating_base_control.resources import orbital_robot_urdf  # noqa: E402

TREE_SEEDS = (1, 2, 3)


def pytest_configure(config):
    """``FBC_REQUIRE_ROS=1`` (``make test``, CI): the ROS 2 tests must run, not skip."""
    if os.environ.get("FBC_REQUIRE_ROS"):
        try:
            import rclpy  # noqa: F401
            from ros_harness import Client  # noqa: F401
        except ImportError as exc:
            raise pytest.UsageError(f"FBC_REQUIRE_ROS is set but ROS 2 cannot be imported: {exc}") from exc


@pytest.fixture(scope="module", autouse=True)
def _ros_domains(request):
    """A test module's ROS domains are free again when it ends (ros_harness.domain_for)."""
    yield
    if "ros_harness" in sys.modules:
        sys.modules["ros_harness"].release_domains(request.module.__name__)


@pytest.fixture(scope="session")
def orbital():
    return FloatingBaseModel.from_urdf(orbital_robot_urdf())


MODEL_NAMES = ["orbital"] + [f"tree{s}" for s in TREE_SEEDS]


def model_urdf(name):
    """URDF text of a test model: the orbital robot or random tree ``tree<seed>``."""
    if name == "orbital":
        with open(orbital_robot_urdf()) as f:
            return f.read()
    return random_tree_urdf(int(name[4:]))


@pytest.fixture(scope="session", params=MODEL_NAMES)
def model(request):
    """The orbital robot and random trees (branches, prismatic and continuous joints,
    offset and rotated joint frames, merged fixed links)."""
    return FloatingBaseModel.from_urdf_string(model_urdf(request.param), source=request.param)


@pytest.fixture
def rng(request):
    # one stream per test, the same in every run (str hash() is salted per process)
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def random_state(model, rng):
    """``(q, qdot, V1, mu)``: a random shape inside the joint limits and random velocities."""
    lo, hi = model.position_limits.T
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    q = rng.uniform(lo, hi)
    qdot = rng.normal(size=model.n)
    V1 = rng.normal(size=6) * 0.5
    return q, qdot, V1, rng.normal(size=6) * 0.5


def assert_close(actual, expected, tol=1e-9, what=""):
    """``max|actual - expected| <= tol * max(1, max|expected|)``."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    err = float(np.abs(actual - expected).max(initial=0.0))
    assert err <= tol * scale, f"{what}: error {err:.3e} > {tol:g} * {scale:.3g}"


def node_sections(config_path):
    """A ROS 2 parameter file as ``{node name: its parameters}`` (keys are ``/**/<node>``)."""
    import yaml
    sections = yaml.safe_load(Path(config_path).read_text())
    assert all(key.startswith("/**/") for key in sections), f"{config_path}: keys must be /**/<node>"
    return {key.removeprefix("/**/"): section["ros__parameters"] for key, section in sections.items()}
