"""The node's planner in a worker process (``planning/worker.py``, ROS-free): what it answers, and that a task
waiting on it is never left waiting when the process ends."""
import math
import time

import numpy as np
import pytest

from floating_base_control import FloatingBaseModel
from floating_base_control.planning import execution as ex
from floating_base_control.planning.rotations import rotation_from_axis_angle
from floating_base_control.resources import share_file
from floating_base_control.planning.worker import BackgroundPlanner

#: Wall seconds at most for an answer: a loaded machine must not decide the verdict.
TIMEOUT = 300.0


def answers(planner, count=1):
    """The worker's results, once ``count`` have come (polling, as the tick does)."""
    out, end = [], time.monotonic() + TIMEOUT
    while len(out) < count and time.monotonic() < end:
        out += planner.poll(0.0)
        time.sleep(0.01)
    return out


def request(id, kind, target=np.eye(3), plan_id=-1):
    return ex.PlanRequest(id, kind, 0.0, np.zeros(7), np.eye(3), None, target, plan_id=plan_id, cycle=1,
                          plan_start=0.0)


@pytest.mark.slow
def test_the_worker_answers_and_a_worker_that_ended_refuses_what_it_did_not_answer():
    model = FloatingBaseModel.from_urdf(share_file("urdf/lwr4_free_floating.urdf"))
    planner = BackgroundPlanner(model)
    try:
        planner.submit(request(0, "remainder", plan_id=7))
        (result,) = answers(planner)
        assert result.plan_id == -1 and result.summary["reason"] == "plan 7 is not the planner's (any more)"
        planner.submit(request(1, "plan", rotation_from_axis_angle((0, 0, 1), math.radians(90))))
        planner.worker.process.kill()                # while it plans
        (result,) = answers(planner)
        assert result.request.id == 1 and result.plan_id == -1
        assert result.summary["reason"].startswith("the planner: the background worker ended")
        planner.submit(request(2, "remainder", plan_id=7))      # a new worker
        (result,) = answers(planner)
        assert result.request.id == 2 and "not the planner's" in result.summary["reason"]
    finally:
        planner.close()
    assert planner.worker.process is None               # close() ended it
