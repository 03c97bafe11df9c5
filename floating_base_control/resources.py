"""Locate the package's data files (urdf/, config/, launch/) however it was installed.

Order: the source tree (a checkout or an editable install), then the install
prefix of a pip install (``<prefix>/share/floating_base_control``), then the
ament index of a colcon install.
"""
import sys
from pathlib import Path

from floating_base_control.validation import InputError

PACKAGE = "floating_base_control"


def _ament_share():
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE))
    except (ImportError, LookupError, OSError):
        return None


def share_file(relpath):
    """Absolute path of ``relpath`` (e.g. ``"urdf/orbital_robot.urdf"``) in the package share."""
    roots = [Path(__file__).resolve().parents[1], Path(sys.prefix) / "share" / PACKAGE]
    for root in roots:
        if (root / relpath).exists():
            return str(root / relpath)
    ament = _ament_share()
    if ament is not None and (ament / relpath).exists():
        return str(ament / relpath)
    raise FileNotFoundError(f"{relpath} not found in {PACKAGE}'s share (looked in "
                            f"{', '.join(map(str, roots))} and the ament index)")


def orbital_robot_urdf():
    """Path of the orbital robot URDF shipped with the package."""
    return share_file("urdf/orbital_robot.urdf")


#: The hoppers of [Feurstein2021] shipped with the package (``urdf/hopper_<robot>.urdf``).
HOPPERS = ("prismatic", "revolute")


def hopper_urdf(robot):
    """Path of the URDF of the ``"prismatic"`` or ``"revolute"`` hopper."""
    if robot not in HOPPERS:
        raise InputError(f"robot must be one of {HOPPERS}, got {robot!r}")
    return share_file(f"urdf/hopper_{robot}.urdf")


#: Distribution whose URDFs make the real-robot test corpus (a test dependency, not a runtime one).
EXAMPLE_ROBOT_DATA = "example-robot-data"


def example_robot_data_urdfs():
    """``{name: path}`` of every URDF installed by ``example-robot-data``, sorted by name.

    Found through the installed distribution's file list (wherever pip put it);
    ``name`` is the path under its ``robots/`` folder, e.g.
    ``"panda_description/urdf/panda.urdf"`` (inside example-robot-data).
    """
    from importlib import metadata
    try:
        dist = metadata.distribution(EXAMPLE_ROBOT_DATA)
    except metadata.PackageNotFoundError:
        raise FileNotFoundError(f"{EXAMPLE_ROBOT_DATA} is not installed "
                                "(pip install -r requirements/lock.txt)") from None
    urdfs = {}
    for f in dist.files or ():
        parts = f.parts
        if f.suffix == ".urdf" and "robots" in parts:
            name = "/".join(parts[parts.index("robots") + 1:])
            urdfs[name] = str(dist.locate_file(f))
    return dict(sorted(urdfs.items()))
