"""A tick's base pose samples, from the sensor to the observer: the one place where the health gate
(``health.py``) and the observer (``observer.py``) meet.

Each sample takes one way.  The observer's compiled call (``observer.take_pose_sample``) measures the
sample against its prediction, applies the gate's verdicts (the estimate plausible, the sample within the
history and the innovation gate) and consumes what they admit; the gate then counts the verdict and says
whether a run of rejections calls for a re-initialization; the observer restarts or re-initializes if told
so.  Neither calls the other.
"""
from floating_base_control.estimation.health import IMPLAUSIBLE, NO_SAMPLE


def observe(observer, health, t, samples):
    """The observer's :class:`~.observer_equations.Error` at ``t`` after the pose samples
    ``[(t_taken, g_meas), ...]`` (``None`` before it starts); the estimate is judged once, first.  A tick
    without a sample takes the same path (as ``observer.take_pose_sample`` does): code run at 1 % of the
    ticks only would be out of the caches when a sample comes."""
    check_state, error, verdict = observer.initialized, None, NO_SAMPLE
    limits = health.config.limits
    for sample in samples or (None,):
        if observer.initialized:
            verdict, error = observer.take(sample, t, limits, check_state)
            if verdict in IMPLAUSIBLE:
                health.restarted(verdict)
                observer.reset()
        check_state = False
        if not observer.initialized and sample is not None:
            verdict, error = observer.start(sample, t, limits)
        if health.judged(verdict, sample, observer.history_s):
            error = observer.reinitialize(t)
    return error
