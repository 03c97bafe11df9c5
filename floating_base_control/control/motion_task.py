"""What :class:`~floating_base_control.robots.orbital.controller.OrbitalController` accepts as ``motion``: a
task that gives ``tau_c`` of eq. 45 ([Mishra2023]) in place of eq. 52's set-point law.

The controller evaluates the REL terms (:class:`~floating_base_control.dynamics.rel_fast.RELTerms`) at the
tick's state and the compensation's locked velocity ``mu`` (``[omega; v]``) and asks the task for its torque,
with the :class:`~floating_base_control.control.shape.CompensationLaw` it adds (what the law cancels, the task
need not) and the observer's base pose ``g_hat`` (``None`` before the first pose sample).  Implementations:
:class:`~floating_base_control.control.tracking.JointTask`,
:class:`~floating_base_control.control.end_effector.EndEffectorTask`,
:class:`~floating_base_control.control.handover.Handover` (from one task to another).
"""
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class MotionTask(Protocol):
    """A motion task (module doc)."""

    name: str               #: what a node reports (``"joint"``, ``"end_effector"``)
    error: np.ndarray       #: the task's error at the last tick

    def torque(self, t, q, qdot, terms, mu, compensation, g_hat=None) -> np.ndarray:
        """``tau_c`` at time ``t`` and the tick's state."""
