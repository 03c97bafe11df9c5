"""Actuator limits: every controller's command is brought within them here, in the core."""
import numpy as np


def saturate(tau, limits):
    """``tau`` clipped to ``[-limits, limits]``, and whether any entry was clipped."""
    clipped = clip(tau, limits, -limits)
    return clipped, bool((clipped != tau).any())


def clip(tau, limits, neg_limits):
    """``tau`` clipped to ``[neg_limits, limits]`` (``neg_limits = -limits``, kept by a control loop)."""
    return np.minimum(np.maximum(tau, neg_limits), limits)     # np.clip's wrapper costs more than both
