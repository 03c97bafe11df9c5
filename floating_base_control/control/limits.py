"""Actuator limits: every controller's command is brought within them here, in the core."""
import numpy as np


def saturate(tau, limits):
    """``tau`` clipped to ``[-limits, limits]``, and whether any entry was clipped."""
    clipped = np.clip(tau, -limits, limits)
    return clipped, bool((clipped != tau).any())
