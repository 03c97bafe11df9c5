"""`make bench`: every benchmark of the package, one after the other; JSON in out/bench/."""
import campaign
import ccf
import engine
import headline
import hopper
import orbital
import ros_loop
from common import report, save

BENCHMARKS = [
    ("engine", engine, "[Mishra2023] REL terms and curvature vs Pinocchio (orbital robot)"),
    ("orbital", orbital, "orbital closed loop: controller step and the 30 s scenario"),
    ("ros_loop", ros_loop, "ROS 2: mujoco_sim + floating_base_controller, two processes, 30 s"),
    ("ccf", ccf, "Algorithm 1 CCF map on the LWR 4+ (Theorem 2 vs central differences)"),
    ("hopper", hopper, "[Feurstein2021] controller step and simulation loop (revolute hopper)"),
    ("campaign", campaign, "fbc campaign orbital: rows per minute on 1 and 2 local Dask workers"),
]

if __name__ == "__main__":
    results = {}
    for name, module, title in BENCHMARKS:
        print(f"== {name}: {title}")
        results[name] = module.run()
        getattr(module, "report", report)(results[name])
        save(results[name], name)
    headline.update_doc(results)
