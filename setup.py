"""ament_python package; also installs with pip on a plain Python machine.

ROS 2 itself (rclpy, message packages) is not in install_requires: on a robot
it comes from the ROS distro; on a plain machine the Makefile installs the ROS
2 PyPI wheels pinned in requirements/lock.txt (listed in requirements/base.in).
"""
import sys
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "floating_base_control"

# colcon builds ament_python packages with `setup.py develop|install`; ROS 2
# expects their executables in lib/<package>.  pip builds wheels instead and
# must put them in bin/, so the option is only set for colcon's commands.
COLCON_OPTIONS = {"develop": {"script_dir": f"$base/lib/{PACKAGE}"},
                  "install": {"install_scripts": f"$base/lib/{PACKAGE}"}}

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench", "studies"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*")),
        (f"share/{PACKAGE}/worlds", glob("worlds/*")),
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.24",
        "scipy>=1.10",
        "pin>=3.0",          # Pinocchio (the PyPI package named `pinocchio` is unrelated)
        "transforms3d>=0.4",
        "mujoco>=3.0",
        "matplotlib>=3.6",
    ],
    extras_require={"test": ["pytest>=7"], "campaign": ["dask>=2024.1", "distributed>=2024.1"]},
    zip_safe=True,
    options=COLCON_OPTIONS if {"develop", "install"} & set(sys.argv) else {},
    maintainer="floating_base_control developers",
    maintainer_email="maintainers@users.noreply.a-seed-fa27b238.example",
    description="Reduced Euler-Lagrange dynamics, SE(3) observer and shape control "
                "of floating-base robots.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "fbc = floating_base_control.cli:main",
            "floating_base_controller = floating_base_control.ros.orbital_controller:main",
            "mujoco_sim = floating_base_control.ros.orbital_sim:main",
            "hopper_controller = floating_base_control.ros.hopper_controller:main",
            "hopper_sim = floating_base_control.ros.hopper_sim:main",
        ],
    },
)
