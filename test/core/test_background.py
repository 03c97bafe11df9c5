"""The background worker (floating_base_control/background.py): jobs off the control loop, in a process of
their own."""
import os
import subprocess
import sys
import time

import pytest

from floating_base_control.background import Worker, WorkerError
from floating_base_control.validation import InputError

TIMEOUT = 60.0          # a predicate's longest wait: the worker imports the package first


def wait(job):
    end = time.monotonic() + TIMEOUT
    while not job.done():
        assert time.monotonic() < end, "the job did not finish"
        time.sleep(0.01)
    return job


@pytest.fixture(scope="module")
def worker():
    """One worker for the module, started (if permitted) as a real-time loop would start it."""
    w = Worker("builtins:dict", {"answer": 42})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        w.fifo_parent = True
    except PermissionError:
        w.fifo_parent = False
    try:
        w.start()
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    yield w
    w.close()


def test_jobs_run_in_order_with_the_context_and_give_their_values(worker):
    jobs = [worker.submit("math:hypot", 3.0, 4.0), worker.submit("operator:getitem", "answer", context=True),
            worker.submit("math:fsum", [0.1] * 10)]
    assert [wait(job).result() for job in jobs] == [5.0, 42, 1.0]
    assert worker.busy == 0


def test_a_refusal_comes_back_as_itself_and_a_failure_names_the_job_and_the_worker_goes_on(worker):
    refused = worker.submit("floating_base_control.validation:vector", "q", [1.0, 2.0], 3)
    failed = worker.submit("math:sqrt", -1.0)
    fine = worker.submit("math:sqrt", 4.0)
    with pytest.raises(InputError, match="q"):
        wait(refused).result()
    with pytest.raises(WorkerError, match="math:sqrt failed: ValueError"):
        wait(failed).result()
    assert wait(fine).result() == 2.0


def test_the_worker_runs_at_ordinary_scheduling_beside_a_real_time_loop(worker):
    """A node at real-time priority starts its worker: the worker's jobs must not compete with the loop."""
    if not worker.fifo_parent:
        pytest.skip("SCHED_FIFO not permitted here")
    pid = wait(worker.submit("os:getpid")).result()
    assert os.sched_getscheduler(pid) == os.SCHED_OTHER


def test_a_worker_given_a_real_time_priority_runs_its_jobs_there_below_the_loop(worker):
    """The node's check worker (realtime_priority one below the loop's): its jobs run SCHED_FIFO at that priority,
    so that ordinary processes on a loaded machine do not delay a command's check."""
    if not worker.fifo_parent:
        pytest.skip("SCHED_FIFO not permitted here")
    w = Worker("builtins:dict", realtime_priority=9)
    try:
        pid = wait(w.submit("os:getpid")).result()
        assert os.sched_getscheduler(pid) == os.SCHED_FIFO and os.sched_getparam(pid).sched_priority == 9
    finally:
        w.close()


def test_the_worker_ends_with_its_parent_killed_or_not():
    parent = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from floating_base_control.background import Worker\n"
                               "w = Worker()\n"
                               "print(w.submit('os:getpid') and w.process.pid, flush=True)\n"
                               "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    end = time.monotonic() + TIMEOUT
    while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z":
        assert time.monotonic() < end, "the worker outlived its parent"
        time.sleep(0.05)


def test_a_worker_that_ended_fails_its_jobs_and_the_next_job_starts_another(worker):
    assert wait(worker.submit("os:getpid")).result() == worker.process.pid
    first = worker.process.pid
    job = worker.submit("time:sleep", 30.0)
    worker.process.kill()
    with pytest.raises(WorkerError, match="ended"):
        wait(job).result()
    assert wait(worker.submit("os:getpid")).result() != first


def test_until_it_is_up_a_worker_with_a_context_here_runs_the_jobs_in_this_process_with_it():
    """The node's checks before its worker has imported the package (a minute on a loaded machine): at once,
    in the node, as before the worker existed."""
    w = Worker("time:sleep", 2.0, here={"where": "here"})
    try:
        first = w.submit("operator:getitem", "where", context=True)
        assert first.done() and first.result() == "here"
        assert w.submit("os:getpid").result() == os.getpid()
        end = time.monotonic() + TIMEOUT
        while not w.up:
            assert time.monotonic() < end, "the worker did not come up"
            w.collect()
            time.sleep(0.01)
        assert wait(w.submit("os:getpid")).result() == w.process.pid
    finally:
        w.close()
