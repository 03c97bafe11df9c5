"""The reorientation planner off the control tick (ROS-free): :class:`BackgroundPlanner`.

It has the interface of ``planning/execution.py``'s planners (``submit(request)``, ``poll(t)``) and runs a
:class:`~floating_base_control.planning.execution.Planner` in a :class:`~floating_base_control.background.Worker`
process, on the node's model rebuilt there from its URDF.  Why a process and not a thread: planning holds the
interpreter lock for seconds (Pinocchio, SciPy's SLSQP, NumPy in Python loops), which in a thread would delay the
control ticks.  The worker runs at a lower priority (:data:`WORKER_NICENESS`), so that on a loaded machine the
control loop keeps its share of the CPU; a request the worker cannot answer (it failed, or its process ended) is
refused with the reason, so a task never waits on a dead process; the next request starts a new worker.
"""
from floating_base_control.background import Worker, WorkerError
from floating_base_control.planning.execution import refusal
from floating_base_control.validation import FloatingBaseError

#: Niceness added to the worker process (lower priority than the control loop).
WORKER_NICENESS = 10


def planner_from_urdf(urdf_xml, options, control_period):
    """The worker's :class:`~floating_base_control.planning.execution.Planner`, on the model of ``urdf_xml``."""
    from floating_base_control.model import FloatingBaseModel
    from floating_base_control.planning.execution import Planner
    return Planner(FloatingBaseModel.from_urdf_string(urdf_xml, source="planner worker"), options, control_period)


class BackgroundPlanner:
    """``submit`` and ``poll`` of a :class:`~floating_base_control.planning.execution.Planner` running in a worker
    process (module doc) on ``model`` (its URDF description), with the planner's ``options`` and
    ``control_period``.  The worker starts at once: importing the package takes it seconds."""

    def __init__(self, model, options=None, control_period=1e-3):
        self.worker = Worker(f"{__name__}:planner_from_urdf", model.description.urdf, options or {}, control_period,
                             niceness=WORKER_NICENESS)
        self._jobs = {}                   # request id -> (request, job), until its result comes
        self.worker.start()

    def submit(self, request):
        """Queue ``request`` for the worker (never waits)."""
        job = self.worker.submit("floating_base_control.planning.execution:Planner.solve", request, context=True)
        self._jobs[request.id] = (request, job)

    def poll(self, t):
        """The results that arrived (whatever ``t``), in the order of their requests; a request the worker failed
        or could not answer is refused with the reason's first line."""
        out = []
        for ident, (request, job) in list(self._jobs.items()):
            if job.done():
                del self._jobs[ident]
                try:
                    out.append(job.result())
                except (FloatingBaseError, WorkerError) as exc:
                    out.append(refusal(request, f"the planner: {str(exc).splitlines()[0]}"))
        return out

    def close(self):
        """End the worker."""
        self.worker.close()
