"""Input checks and the safe command of a torque controller (ROS-free, used by the nodes).

A controller node must never die on a message and never command a non-finite
or out-of-limit torque.  Every tick it asks :class:`Watchdog` whether its
inputs are usable; if not, it sends :func:`safe_torque` instead of the control
law, reports the reasons, and resumes when good input returns.
"""
from dataclasses import dataclass

import numpy as np

from floating_base_control.validation import InputError
from floating_base_control.control.limits import saturate

SAFE_MODES = ("zero", "damping")


@dataclass
class WatchdogConfig:
    """Limits on input age (per input stream) and what to command when inputs are unusable."""

    max_ages: dict                       #: input name -> s since its last valid message
    safe_mode: str = "damping"           #: "zero" torque, or "damping" -safe_damping * qdot
    safe_damping: float = 1.0            #: N m s/rad

    def __post_init__(self):
        if self.safe_mode not in SAFE_MODES:
            raise InputError(f"safe_mode must be one of {SAFE_MODES}, got {self.safe_mode!r}")
        for name, value in [*self.max_ages.items(), ("safe_damping", self.safe_damping)]:
            if not (np.isfinite(value) and value >= 0):
                raise InputError(f"{name} limit must be finite and >= 0, got {value}")


class Watchdog:
    """Tracks the freshness and validity of each input stream (e.g. "joint state", "base pose")."""

    def __init__(self, config):
        self.config = config
        self.time = {}        # name -> receive time of the last valid message
        self.error = {}       # name -> why the last message was rejected

    def received(self, name, t, error=None):
        """Record a message of input ``name`` received at ``t`` (``error``: why it was rejected)."""
        self.error[name] = error
        if error is None:
            self.time[name] = t

    def fresh(self, name, t):
        """Whether the last message of ``name`` is valid and not stale at ``t``."""
        return (self.error.get(name) is None and name in self.time
                and t - self.time[name] <= self.config.max_ages[name])

    def age(self, name, t):
        return t - self.time[name] if name in self.time else None

    def reasons(self, t):
        """Why the inputs cannot be used at ``t`` (empty if they can)."""
        out = []
        for name, max_age in self.config.max_ages.items():
            if self.error.get(name):
                out.append(self.error[name])
            if name not in self.time:
                out.append(f"no {name} yet")
            elif t - self.time[name] > max_age:
                out.append(f"{name} stale (none for {max_age:g} s)")       # no running age: a stable text
        return out


def safe_torque(config, qdot, limits):
    """The safe command: zero, or joint damping ``-safe_damping * qdot`` when ``qdot`` is finite;
    always finite and within ``limits``."""
    if config.safe_mode == "damping" and qdot is not None and np.isfinite(qdot).all():
        return saturate(-config.safe_damping * qdot, limits)[0]
    return np.zeros_like(limits, dtype=float)
