"""Print the pinned requirement set of the current environment (used by `make lock`).

The ROS 2 PyPI wheels carry their ROS packages' own egg-info metadata (rclpy,
std_msgs, ...); those are not installable distributions and are left out.
"""
from importlib.metadata import distributions

pins = sorted({f"{d.metadata['Name']}=={d.version}" for d in distributions()
               if not str(d._path).endswith(".egg-info")
               and d.metadata["Name"] not in ("pip", "floating_base_control")},
              key=str.lower)
print("# Generated from requirements/base.in by `make lock` (Python 3.11, x86_64 Linux).")
print("\n".join(pins))
