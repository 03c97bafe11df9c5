"""``fbc campaign orbital``: Monte Carlo campaign of the orbital scenario on Dask distributed.

Why Dask distributed: the runs are independent Python tasks of tens of seconds
each that need the package and MuJoCo in the worker; Dask runs the same code on
a pool of local worker processes or on a user's cluster (``--scheduler``) with
no change, streams results back as they finish (``as_completed``), and is a
plain PyPI dependency with no server to install.  (Ray does the same with a
heavier runtime; a home-made pool would not reach a cluster.)

The default cluster is local: ``W`` worker processes of one thread, every
socket bound to 127.0.0.1 (scheduler, workers and nannies), no dashboard.
"""
import sys
import time
from pathlib import Path

from floating_base_control.cli._options import count, positive, positive_count, writable_dir
from floating_base_control.cli._table import refuse


def register(sub):
    from floating_base_control.control.setpoint import CONTROLLERS
    from floating_base_control.experiments.orbital.campaign import SCENARIOS

    p = sub.add_parser("campaign", help="Monte Carlo campaign of dispersed runs on Dask distributed "
                                        "(local loopback workers or --scheduler)")
    p.add_argument("robot", choices=["orbital"])
    p.add_argument("--scenario", choices=SCENARIOS, default="realistic")
    p.add_argument("--runs", type=positive_count, default=20, help="dispersed runs per controller (default 20)")
    p.add_argument("--seed", type=count, default=0, help="campaign seed; run i uses a seed drawn from (seed, i)")
    p.add_argument("--controllers", default="pd,pdi,tau2,tau2i",
                   help=f"comma-separated, of {', '.join(CONTROLLERS)} (default pd,pdi,tau2,tau2i)")
    p.add_argument("--duration", type=positive, help="simulated seconds per run (default: the scenario's)")
    p.add_argument("--pose-position", action="store_true",
                   help="realistic: the pose source gives position too (default: attitude only)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_count, default=2, help="local worker processes (default 2)")
    where.add_argument("--scheduler", help="address of a running Dask scheduler (e.g. tcp://127.0.0.1:8786)")
    p.add_argument("--out", default="out/campaign", type=writable_dir,
                   help="directory (default out/campaign); an interrupted campaign in it resumes")
    p.set_defaults(func=run)


def local_cluster(workers):
    """A Dask cluster on this machine only: loopback, no dashboard, one thread per worker process."""
    from distributed import LocalCluster
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=None)


CHECKS = {"pose_position": ("--pose-position", lambda a: None if a.scenario == "realistic" else
                            "applies to the realistic scenario (the ideal one's pose source gives the position)",
                            False)}


def run(args):
    from distributed import Client, as_completed
    refuse(CHECKS, args)

    from floating_base_control.experiments.orbital import campaign as mc
    from floating_base_control.results import write_json
    from floating_base_control.control.setpoint import controller_options

    controllers = [c for c in args.controllers.split(",") if c]
    for c in controllers:
        controller_options(c)
    pose_position = True if args.pose_position else None
    config = {"scenario": args.scenario, "seed": args.seed, "duration_s": args.duration,
              "pose_position": pose_position}
    store = mc.RowStore(args.out, config)
    done = store.done()
    todo = [(i, c) for i in range(args.runs) for c in controllers if (i, c) not in done]
    print(f"campaign: {args.scenario}, {args.runs} runs x {len(controllers)} controllers, seed {args.seed}; "
          f"{len(todo)} to run ({len(done)} already in {args.out})", flush=True)
    start = time.perf_counter()
    if todo:
        cluster = None if args.scheduler else local_cluster(args.workers)
        with Client(args.scheduler or cluster) as client:
            futures = [client.submit(mc.campaign_row, args.scenario, i, mc.run_seed(args.seed, i), c,
                                     args.duration, pose_position, pure=False, key=f"run-{i}-{c}-{args.seed}")
                       for i, c in todo]
            bar = ProgressBar(len(todo))
            for future in as_completed(futures):
                row, timing = future.result()
                store.append(row, timing)
                bar.update(f"run {row['run']} {row['controller']}: {row['final_joint_error_deg']:.3g} deg")
        if cluster is not None:
            cluster.close()
    wall = time.perf_counter() - start
    rows = [r for r in store.rows() if r["run"] < args.runs and r["controller"] in controllers]
    summary = mc.summarize_campaign(rows, args.runs, args.scenario, args.seed, controllers)
    summary["wall_time_s"] = wall
    summary["runs_this_session"] = len(todo)
    summary["per_run_mean"] = store.mean_timing()
    summary["duration_s"] = args.duration
    write_json(Path(args.out) / "campaign.json", summary)
    table = mc.markdown_table(summary)
    (Path(args.out) / "table.md").write_text(table)
    mc.plot_cdfs(args.out, rows, controllers)
    print(table)
    print(f"wall time {wall:.1f} s for {len(todo)} runs; rows in {args.out}/runs.jsonl, campaign.json, cdf_*.png")


class ProgressBar:
    """A one-line text progress bar on stderr."""

    def __init__(self, total, width=30):
        self.total, self.width, self.count, self.start = total, width, 0, time.perf_counter()

    def update(self, note=""):
        self.count += 1
        filled = self.width * self.count // self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.count * (self.total - self.count)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.count}/{self.total} "
                         f"{elapsed:.0f} s, ~{eta:.0f} s left  {note[:50]:<50}")
        if self.count == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()
