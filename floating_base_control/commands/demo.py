"""``fbc demo <robot>``: closed-loop scenarios against MuJoCo, with a report.

``fbc demo orbital [--duration S] [--compensation tau1|tau2|none|truth] [--out DIR]``
runs seed 002's orbital-robot scenario (Sec. V-A) and writes ``summary.json``,
``timeseries.csv`` and PNG plots to ``DIR``.
"""
import json
from pathlib import Path

from ..control.shape import COMPENSATIONS


def register(sub):
    demo = sub.add_parser("demo", help="closed-loop scenarios against MuJoCo, with a report")
    robots = demo.add_subparsers(dest="robot", required=True)
    p = robots.add_parser("orbital", help="orbital robot with momentum: observer + compensating "
                                          "shape controller (seed 002, Sec. V-A)")
    p.add_argument("--duration", type=float, default=30.0, help="simulated seconds (default 30)")
    p.add_argument("--compensation", choices=COMPENSATIONS, default="tau2",
                   help="eq. 45 variant with the observer's mu (tau1, tau2), PD only (none), or "
                        "tau_hat_2 with the simulator's true mu (truth); default tau2")
    p.add_argument("--pose-rate", type=float, default=10.0, help="base pose samples per second")
    p.add_argument("--pose-noise", type=float, default=1.0,
                   help="pose noise as a multiple of 1 mrad / 1 mm (default 1)")
    p.add_argument("--latency", type=float, default=0.02, help="pose latency in seconds")
    p.add_argument("--mass-error", type=float, default=0.0,
                   help="relative error of the spacecraft's mass and inertia in the controller's model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/orbital", help="report directory (default out/orbital)")
    p.add_argument("--ros", action="store_true",
                   help="run as two ROS 2 processes (mujoco_sim + floating_base_controller with "
                        "config/orbital_robot.yaml) over DDS, shared memory only; the sensor options above "
                        "then come from the YAML")
    p.add_argument("--compare", action="store_true",
                   help="with --ros: also run the ROS-free loop of the same scenario and compare")
    p.set_defaults(func=run_orbital)


KEYS = ["final_joint_error_deg", "final_observer_pose_error", "final_observer_velocity_error",
        "momentum_drift_rel", "tau_hat_total_variation_ratio", "status", "converged"]


def run_orbital(args):
    from ..sim import orbital, report

    if args.duration <= 0:
        raise ValueError(f"--duration must be > 0, got {args.duration}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = lambda t: print(f"  t = {t:5.1f} s", flush=True)  # noqa: E731
    if args.ros:
        from ..nodes import demo
        print(f"orbital scenario over ROS 2 (mujoco_sim + floating_base_controller): {args.duration:g} s -> {out}/")
        log, summary = demo.run(args.duration, progress=progress)
    else:
        scenario = orbital.OrbitalScenario(
            duration_s=args.duration, compensation=args.compensation, pose_rate_hz=args.pose_rate,
            pose_rotation_noise=1e-3 * args.pose_noise, pose_position_noise=1e-3 * args.pose_noise,
            pose_latency_s=args.latency, model_mass_error=args.mass_error, seed=args.seed)
        print(f"orbital scenario: {args.duration:g} s, compensation {args.compensation}, "
              f"pose {args.pose_rate:g} Hz -> {out}/")
        log, summary = orbital.run(scenario, progress=progress)
    if args.ros and args.compare:
        print("the same scenario without ROS (one process, synchronous loop):")
        summary["ros_free"] = {k: orbital.run(orbital.OrbitalScenario(duration_s=args.duration))[1][k]
                               for k in KEYS}
    report.write_summary(out, summary)
    report.write_csv(out, log)
    report.plot_orbital(out, log, summary)
    shown = {k: summary[k] for k in KEYS}
    if "ros_free" in summary:
        shown = {"ros": shown, "ros_free": summary["ros_free"]}
    print(json.dumps(shown, indent=2))
