"""``fbc campaign orbital``: Monte Carlo campaign of the orbital scenario on Dask distributed.

Why Dask distributed: the runs are independent Python tasks of tens of seconds
each that need the package and MuJoCo in the worker; Dask runs the same code on
a pool of local worker processes or on a user's cluster (``--scheduler``) with
no change, streams results back as they finish, and is a
plain PyPI dependency with no server to install.  (Ray does the same with a
heavier runtime; a home-made pool would not reach a cluster.)

The default cluster is local: ``W`` worker processes of one thread, every
socket bound to 127.0.0.1 (scheduler, workers and nannies), no dashboard.

Failures end in one line: a scheduler that does not answer at ``--scheduler`` within
``--worker-timeout`` seconds, or no worker available for that long (at the start, or all of them
gone later), exits with the scheduler's address; Ctrl-C exits with how many rows are kept and that
the same command resumes.  Dask's own messages go to ``<out>/dask.log`` (this process's and the local
workers'), not the terminal, where the progress bar is.
"""
import contextlib
import logging
import logging.config
import os
import signal
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
    p.add_argument("--worker-timeout", type=positive, default=60.0, metavar="SECONDS",
                   help="give up (exit 2) when the scheduler does not answer, or no worker is available, for "
                        "this long (default 60)")
    p.set_defaults(func=run)


def local_cluster(workers):
    """A Dask cluster on this machine only: loopback, no dashboard, one thread per worker process.  The
    worker processes start with SIGINT ignored (a process keeps an ignored signal across ``exec``): Ctrl-C,
    which the terminal sends to every process of the command, stops this one alone, which stops them (a
    Ctrl-C during the few seconds of their start is ignored)."""
    from distributed import LocalCluster
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                            dashboard_address=None)
    finally:
        signal.signal(signal.SIGINT, previous)


def connect(address, timeout):
    """A Dask client of the scheduler at ``address`` with a worker available, or :class:`ConnectionError`
    naming the address after ``timeout`` seconds."""
    from distributed import Client
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError):
        raise ConnectionError(f"no Dask scheduler answers at {address} (waited {timeout:g} s; "
                              "--worker-timeout sets how long)") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ConnectionError(f"no Dask worker is available at the scheduler {address} (waited {timeout:g} s; "
                              "--worker-timeout sets how long)") from None
    return client


def finished(client, futures, timeout, poll_s=1.0):
    """The futures' results as they finish; :class:`ConnectionError` when the scheduler has not answered, or has
    had no worker, for ``timeout`` seconds."""
    from concurrent.futures import CancelledError
    from distributed import wait
    pending, address, stalled_since = set(futures), client.scheduler.address, None
    lost = (f"the Dask scheduler at {address} stopped answering; the rows finished are kept, the same command "
            "resumes")
    while pending:
        try:
            done, pending = wait(pending, timeout=poll_s, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        except CancelledError:          # the client cancels every future when it loses the scheduler
            raise ConnectionError(lost) from None
        for future in done:
            try:
                result = future.result()
            except CancelledError:
                raise ConnectionError(lost) from None
            yield result
        if done:
            stalled_since = None
            continue
        answering = client.status == "running"
        if answering and client.scheduler_info(n_workers=0).get("n_workers", 0) > 0:
            stalled_since = None
            continue
        stalled_since = stalled_since or time.monotonic()
        if client.status == "closed" or time.monotonic() - stalled_since > timeout:
            what = "no longer has a worker" if answering else "stopped answering"
            raise ConnectionError(f"the Dask scheduler at {address} {what} (for {timeout:g} s; --worker-timeout "
                                  "sets how long); the rows finished are kept, the same command resumes")


@contextlib.contextmanager
def dask_messages_to(path):
    """Dask's log messages and warnings into ``path``, not the terminal: here, and in the local workers started
    meanwhile (through the environment, which they read when they import Dask)."""
    config = {"version": 1, "disable_existing_loggers": False,
              "handlers": {"file": {"class": "logging.FileHandler", "filename": str(path), "mode": "a"}},
              "loggers": {name: {"handlers": ["file"], "propagate": False, "level": "INFO"}
                          for name in ("distributed", "tornado", "py.warnings")}}
    loggers = {name: logging.getLogger(name) for name in config["loggers"]}
    saved = {name: (lg.handlers[:], lg.propagate, lg.level) for name, lg in loggers.items()}
    env = os.environ.get("DASK_LOGGING")
    os.environ["DASK_LOGGING"] = repr(config)
    logging.config.dictConfig(config)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for name, lg in loggers.items():
            for handler in lg.handlers:
                handler.close()
            lg.handlers[:], lg.propagate, lg.level = saved[name]
        if env is None:
            os.environ.pop("DASK_LOGGING", None)
        else:
            os.environ["DASK_LOGGING"] = env


def compute(args, store, todo, pose_position):
    """Run ``todo`` on the cluster, appending each row to ``store`` as it finishes."""
    from floating_base_control.experiments.orbital import campaign as mc

    cluster = None if args.scheduler else local_cluster(args.workers)
    client, bar = None, ProgressBar(len(todo))
    try:
        client = connect(args.scheduler or cluster.scheduler_address, args.worker_timeout)
        futures = [client.submit(mc.campaign_row, args.scenario, i, mc.run_seed(args.seed, i), c,
                                 args.duration, pose_position, pure=False, key=f"run-{i}-{c}-{args.seed}")
                   for i, c in todo]
        for row, timing in finished(client, futures, args.worker_timeout):
            store.append(row, timing)
            bar.update(f"run {row['run']} {row['controller']}: {row['final_joint_error_deg']:.3g} deg")
    except KeyboardInterrupt:
        kept = len(store.rows())
        raise KeyboardInterrupt(f"{kept} row{'' if kept == 1 else 's'} kept in {store.runs}; the same command "
                                "resumes") from None
    finally:
        bar.end()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C: the workers still stop
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            signal.signal(signal.SIGINT, previous)


CHECKS = {"pose_position": ("--pose-position", lambda a: None if a.scenario == "realistic" else
                            "applies to the realistic scenario (the ideal one's pose source gives the position)",
                            False)}


def run(args):
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
        with dask_messages_to(Path(args.out) / "dask.log"):
            compute(args, store, todo, pose_position)
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
        self.ended = False

    def update(self, note=""):
        self.count += 1
        filled = self.width * self.count // self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.count * (self.total - self.count)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.count}/{self.total} "
                         f"{elapsed:.0f} s, ~{eta:.0f} s left  {note[:50]:<50}")
        if self.count == self.total:
            self.end()
        sys.stderr.flush()

    def end(self):
        """End the bar's line (once), complete or not: what follows starts on a line of its own."""
        if self.count and not self.ended:
            sys.stderr.write("\n")
            self.ended = True
