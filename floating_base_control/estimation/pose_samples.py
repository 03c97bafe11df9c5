"""A tick's base pose samples, from the sensor to the observer: the one place where the health gate
(``health.py``) and the observer (``observer.py``) meet.

Each sample takes one way.  The observer's compiled call (``observer.take_pose_sample``) measures the
sample against its prediction, applies the gate's verdicts (the estimate plausible, the sample within the
history and the innovation gate) and consumes what they admit; the gate then counts the verdict and says
whether a run of rejections calls for a re-initialization; the observer restarts or re-initializes if told
so.  Neither calls the other.
"""
from floating_base_control.estimation.health import IMPLAUSIBLE


def observe(observer, health, t, samples):
    """The observer's :class:`~.observer_equations.Error` at ``t`` after the pose samples
    ``[(t_taken, g_meas), ...]`` (``None`` before it starts); the estimate is judged once, first."""
    check_state, error = observer.initialized, None
    limits = health.config.limits
    for sample in samples or (None,):
        if observer.initialized:
            verdict, error = observer.take(sample, t, limits, check_state)
            if verdict in IMPLAUSIBLE:
                health.restarted(verdict)
                observer.reset()
        check_state = False
        if sample is None:
            continue
        if not observer.initialized:
            verdict, error = observer.start(sample, t, limits)
        if health.judged(verdict, sample[1], observer.history_s):
            error = observer.reinitialize(t)
    return error
