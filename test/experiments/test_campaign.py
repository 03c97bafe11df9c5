"""Monte Carlo campaigns on Dask distributed (fbc campaign): a local cluster of two workers bound to
loopback, rows re-runnable alone from their seed, resuming, and the same rows through a separately
started scheduler."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from floating_base_control.cli import main
from floating_base_control.cli import campaign as command
from floating_base_control.experiments.orbital.campaign import campaign_row, run_seed
from floating_base_control.processes import die_with_parent

ARGS = ["campaign", "orbital", "--scenario", "realistic", "--runs", "2", "--seed", "7", "--controllers",
        "pd,tau2i", "--duration", "0.3"]


def listening(processes):
    """Addresses on which these processes listen (TCP)."""
    return {c.laddr for p in processes for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}


def wait_until(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def rows(out):
    return sorted((json.loads(line) for line in (Path(out) / "runs.jsonl").read_text().splitlines()),
                  key=lambda r: (r["run"], r["controller"]))


@pytest.fixture(scope="module")
def local_campaign(tmp_path_factory):
    """The small campaign on the default local cluster (two worker processes), with its sockets seen just
    after the cluster started."""
    out = tmp_path_factory.mktemp("local")
    seen = {}
    original = command.local_cluster

    def watched(workers):
        cluster = original(workers)
        me = psutil.Process()
        seen["workers"] = len(cluster.workers)
        seen["listening"] = listening([me, *me.children(recursive=True)])
        return cluster

    command.local_cluster = watched
    try:
        main([*ARGS, "--workers", "2", "--out", str(out)])
    finally:
        command.local_cluster = original
    return out, seen


def test_local_cluster_is_loopback_only_and_writes_the_campaign(local_campaign):
    out, seen = local_campaign
    assert seen["workers"] == 2 and seen["listening"]
    assert all(addr.ip == "127.0.0.1" for addr in seen["listening"]), seen["listening"]
    campaign = json.loads((out / "campaign.json").read_text())
    assert (campaign["runs"], campaign["scenario"], campaign["seed"]) == (2, "realistic", 7)
    assert set(campaign["controllers"]) == {"pd", "tau2i"}
    c = campaign["controllers"]["tau2i"]
    assert c["runs"] == 2 and 0.0 <= c["converged_fraction"] <= 1.0
    assert set(c["final_joint_error_deg"]) == set(c["observer_attitude_error_rad"]) == {"p50", "p90", "p99", "max"}
    assert set(c["limit_overrun"]) == {"position_rad_max", "velocity_rad_s_max"}
    assert c["limit_overrun"] == {"position_rad_max": 0.0, "velocity_rad_s_max": 0.0}
    for name in ("cdf_final_joint_error.png", "cdf_pd.png", "cdf_tau2i.png"):
        assert (out / name).stat().st_size > 5_000


def test_a_run_re_executed_alone_from_its_seed_reproduces_its_row(local_campaign):
    out, _ = local_campaign
    row = next(r for r in rows(out) if r["run"] == 1 and r["controller"] == "tau2i")
    assert row["seed"] == run_seed(7, 1)
    alone, _ = campaign_row("realistic", 1, row["seed"], "tau2i", 0.3)
    assert alone == row


def test_a_separate_loopback_scheduler_gives_identical_rows_and_an_interrupted_campaign_resumes(
        local_campaign, tmp_path):
    out, _ = local_campaign
    local = rows(out)
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    (resumed / "config.json").write_text((out / "config.json").read_text())
    (resumed / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in local[:2]))   # interrupted after 2
    dask = Path(sys.executable).with_name("dask")
    # --no-dashboard alone still serves HTTP on 0.0.0.0:8787 (distributed 2026.8): bind it to loopback too
    loopback = ["--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    scheduler_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", *loopback, "--port", "0", "--scheduler-file", scheduler_file],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent())]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", scheduler_file, *loopback,
                                       "--nthreads", "1", "--nworkers", "1"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, preexec_fn=die_with_parent()))
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        from distributed import Client
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
            sockets = listening([psutil.Process(p.pid) for p in procs]
                                + [c for p in procs for c in psutil.Process(p.pid).children(recursive=True)])
        assert sockets and all(addr.ip == "127.0.0.1" for addr in sockets), sockets
        main([*ARGS, "--scheduler", address, "--out", str(resumed)])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
    assert rows(resumed) == local
    timing = (resumed / "timing.jsonl").read_text().splitlines()
    assert len(timing) == 2                                        # only the two missing runs ran


@pytest.fixture
def thread_cluster():
    """A scheduler and one worker thread in this process, on loopback: quick to start, and the test can take the
    worker away."""
    from distributed import LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                           dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False})
    me = psutil.Process()
    assert all(addr.ip == "127.0.0.1" for addr in listening([me]))
    yield cluster
    import dask
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):    # a scheduler closed by the test
        cluster.close()


def free_loopback_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_failure(capfd, argv, status):
    """``main(argv)``'s exit status is ``status`` and its last line on stderr (after the progress bar) the one line
    it returns; nothing of Dask's on the terminal."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == status
    err = capfd.readouterr().err
    assert "Traceback" not in err and "distributed." not in err, err
    return err.rstrip("\n").split("\n")[-1]


def test_no_scheduler_answering_exits_in_one_line_naming_it(tmp_path, capfd):
    address = f"tcp://127.0.0.1:{free_loopback_port()}"
    line = one_line_failure(capfd, [*ARGS, "--scheduler", address, "--worker-timeout", "0.5",
                                    "--out", str(tmp_path)], 2)
    assert line.startswith("fbc campaign: error: no Dask scheduler answers at " + address + " ")


def test_no_worker_for_the_timeout_exits_in_one_line_and_keeps_the_rows(thread_cluster, tmp_path, capfd,
                                                                        monkeypatch):
    """At the start (no worker yet) and in the middle (the last worker retired after the first row)."""
    address = thread_cluster.scheduler_address
    thread_cluster.scale(0)
    wait_until(lambda: not thread_cluster.workers)
    line = one_line_failure(capfd, [*ARGS, "--scheduler", address, "--worker-timeout", "0.5",
                                    "--out", str(tmp_path / "none")], 2)
    assert line.startswith(f"fbc campaign: error: no Dask worker is available at the scheduler {address} ")
    thread_cluster.scale(1)
    wait_until(lambda: len(thread_cluster.scheduler.workers) == 1)
    original = command.ProgressBar.update

    def retire_after_first_row(self, note=""):
        original(self, note)
        thread_cluster.scale(0)
        wait_until(lambda: not thread_cluster.scheduler.workers)

    monkeypatch.setattr(command.ProgressBar, "update", retire_after_first_row)
    out = tmp_path / "gone"
    line = one_line_failure(capfd, [*ARGS, "--scheduler", address, "--worker-timeout", "0.5", "--out", str(out)], 2)
    assert line.startswith(f"fbc campaign: error: the Dask scheduler at {address} no longer has a worker ")
    assert len(rows(out)) >= 1


def test_ctrl_c_says_in_one_line_how_to_resume_and_the_same_command_resumes(thread_cluster, tmp_path, capfd,
                                                                            monkeypatch):
    argv = [*ARGS, "--scheduler", thread_cluster.scheduler_address, "--out", str(tmp_path)]
    original = command.ProgressBar.update

    def interrupt_after_first_row(self, note=""):
        original(self, note)
        signal.raise_signal(signal.SIGINT)          # as Ctrl-C: the signal, to this process

    # Ctrl-C as a terminal's foreground command gets it, whatever this process inherited (a shell starts a
    # background job with SIGINT ignored, and Python then keeps it ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with monkeypatch.context() as m:
            m.setattr(command.ProgressBar, "update", interrupt_after_first_row)
            line = one_line_failure(capfd, argv, 130)
    finally:
        signal.signal(signal.SIGINT, previous)
    kept = rows(tmp_path)
    assert len(kept) == 1
    assert line == f"fbc campaign: interrupted: 1 row kept in {tmp_path / 'runs.jsonl'}; the same command resumes"
    main(argv)
    assert len(rows(tmp_path)) == 4 and kept[0] in rows(tmp_path)
    assert len((tmp_path / "timing.jsonl").read_text().splitlines()) == 4    # each run once


def test_a_scheduler_gone_in_the_middle_exits_in_one_line_and_keeps_the_rows(thread_cluster, tmp_path, capfd,
                                                                            monkeypatch):
    address = thread_cluster.scheduler_address
    original = command.ProgressBar.update

    def stop_scheduler_after_first_row(self, note=""):
        original(self, note)
        thread_cluster.sync(thread_cluster.scheduler.close)

    monkeypatch.setattr(command.ProgressBar, "update", stop_scheduler_after_first_row)
    line = one_line_failure(capfd, [*ARGS, "--scheduler", address, "--worker-timeout", "0.5",
                                    "--out", str(tmp_path)], 2)
    assert line.startswith(f"fbc campaign: error: the Dask scheduler at {address} stopped answering")
    assert len(rows(tmp_path)) == 1
