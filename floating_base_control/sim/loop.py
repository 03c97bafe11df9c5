"""The control loop as a robot runs it: each command reaches the plant a loop delay after the state it was
computed from.

ros2_control reads the hardware, updates the controllers, then writes the commands: the command computed from
the state read at tick ``i`` acts from tick ``i + 1`` (a Franka arm at 1 kHz has the same one-cycle delay), and
over DDS the simulator applies a command when it arrives.  :class:`CommandDelay` is that path at the plant's
step resolution: a command sent at plant step ``s`` arrives at step ``s + delay (+ jitter)`` and acts until the
next one arrives; a dropped command never arrives (the plant keeps the previous one, as an effort interface
keeps its last command).  Arrivals keep their order (one DDS writer's samples are delivered in order).  Before
the first command arrives the plant gets ``initial`` (zero torque).  With zero delay, no jitter and no drops a
command acts over the very step it was sent at: the loop of the papers' simulations.
"""
from collections import deque

import numpy as np

from floating_base_control.validation import InputError


def loop_delay_steps(delay_s, step_s, control_period_s):
    """The loop delay in plant steps: ``delay_s`` (``None``: one control period) rounded to the plant step."""
    delay_s = control_period_s if delay_s is None else float(delay_s)
    if not (np.isfinite(delay_s) and delay_s >= 0):
        raise InputError(f"loop delay must be >= 0 s (None: one control period), got {delay_s}")
    return int(round(delay_s / step_s))


class CommandDelay:
    """Commands on their way to the plant (module doc).  ``delay``: plant steps; ``jitter``: a further delay
    per command, uniform in ``[0, jitter]`` plant steps; ``drop``: probability that a command is lost."""

    def __init__(self, delay, initial, jitter=0, drop=0.0, seed=0):
        if delay < 0 or jitter < 0 or not 0.0 <= drop < 1.0:
            raise InputError(f"command delay needs delay, jitter >= 0 steps and 0 <= drop < 1, got {delay}, "
                             f"{jitter}, {drop}")
        self.delay, self.jitter, self.drop = int(delay), int(jitter), float(drop)
        self.rng = np.random.default_rng(seed) if (self.jitter or self.drop) else None
        self.current = initial
        self.pending = deque()         # (arrival step, command), arrival steps non-decreasing
        self.sent = self.dropped = 0

    def send(self, step, command):
        """The command computed at plant step ``step``."""
        self.sent += 1
        arrival, pending = step + self.delay, self.pending
        if self.rng is not None:
            if self.drop and self.rng.random() < self.drop:
                self.dropped += 1
                return
            if self.jitter:
                arrival += int(self.rng.integers(0, self.jitter + 1))
        if pending and pending[-1][0] > arrival:
            arrival = pending[-1][0]
        pending.append((arrival, command))

    def at(self, step):
        """The command the plant applies at its step ``step`` (a loop that steps the plant one step at a time)."""
        while self.pending and self.pending[0][0] <= step:
            self.current = self.pending.popleft()[1]
        return self.current

    def segments(self, step, nstep):
        """``[(command, steps), ...]``: what the plant applies over its steps ``step .. step + nstep - 1``."""
        command, end = self.at(step), step + nstep
        if not self.pending or self.pending[0][0] >= end:     # the usual span: no command arrives within it
            return [(command, nstep)]
        out = []
        while step < end:
            command = self.at(step)
            until = min(self.pending[0][0], end) if self.pending else end
            out.append((command, until - step))
            step = until
        return out


def measured_loop(ros_loop, control_rate_hz=1000.0):
    """``(loop_jitter_s, loop_drop)`` of a ROS loop that ``bench/ros_loop.py`` measured (its JSON, as a dict):
    the further delay up to the joint state's largest age at the tick beyond its median, plus the step's p99
    compute time; lost, the share of periods without a tick (the simulator keeps the last command)."""
    jitter_ms = ros_loop["joint_state_age_max_ms"] - ros_loop["joint_state_age_p50_ms"] + ros_loop["compute_p99_ms"]
    return 1e-3 * max(jitter_ms, 0.0), max(0.0, 1.0 - ros_loop["control_rate_hz"] / control_rate_hz)
