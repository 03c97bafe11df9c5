"""Throughput of ``fbc campaign orbital`` on local Dask workers: rows per minute with one and two worker
processes (the whole command as a user runs it: the cluster's start, the runs, the summary), the speed-up
of the second worker, and whether the two campaigns' rows are identical (they must be: a row depends only
on its run's seed and controller, not on the worker or the scheduler that computed it).  Realistic
scenario, :data:`RUNS` dispersed runs x :data:`CONTROLLERS`, :data:`DURATION_S` simulated seconds each.
"""
import json
import os
import tempfile
import time
from pathlib import Path

from floating_base_control.cli import main

RUNS, CONTROLLERS, DURATION_S = 4, "pd,tau2", 20.0


def campaign(workers, out):
    """Wall time (s) of the campaign on ``workers`` local workers, and its rows (sorted)."""
    start = time.perf_counter()
    main(["campaign", "orbital", "--scenario", "realistic", "--runs", str(RUNS), "--controllers", CONTROLLERS,
          "--duration", str(DURATION_S), "--workers", str(workers), "--out", str(out)])
    wall = time.perf_counter() - start
    rows = sorted((json.loads(line) for line in (Path(out) / "runs.jsonl").read_text().splitlines()),
                  key=lambda r: (r["run"], r["controller"]))
    return wall, rows


def run():
    with tempfile.TemporaryDirectory(prefix="fbc_bench_campaign_") as tmp:
        one, rows_one = campaign(1, Path(tmp) / "one")
        two, rows_two = campaign(2, Path(tmp) / "two")
    n = len(rows_one)
    return {"campaign_rows": n, "campaign_run_duration_s": DURATION_S,
            "campaign_rows_per_minute_1_worker": round(60.0 * n / one, 2),
            "campaign_rows_per_minute_2_workers": round(60.0 * n / two, 2),
            "campaign_speedup_2_over_1_workers": round(one / two, 2),
            "campaign_rows_identical_1_and_2_workers": rows_one == rows_two,
            "cpu_count": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2)}


if __name__ == "__main__":
    from common import report, save
    res = run()
    report(res)
    save(res, "campaign")
