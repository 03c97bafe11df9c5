"""The observer's prediction of the measured base pose and its history: latency compensation for slow,
delayed pose samples ([Mishra2023] eq. 9; the observer is ``observer.py``).

Between samples the observer predicts the measurement ``g1_pred`` with its estimated base twist
``V1_hat = mu_hat_o - A_l qdot`` (eq. 9), one Lie-Euler increment per tick, and keeps the odometry ``D``
of the prediction: the product of its increments, never reset.  A sample ``g_meas`` taken at ``t_s`` is
carried forward to now as ``g_meas D(t_s)^-1 D(now)``: one lookup, whatever the latency.

:class:`PredictionHistory` is the history as one structure: a record array of the increments
(:data:`INCREMENT`) and the span of its live rows.  Its kernels read and append rows; the twists are in
the observer's kernels' order (Pinocchio's, ``[v; omega]``).
"""
import math

import numpy as np

from floating_base_control.compiled import F, R1, R2, RI1, W2, WI1, kernel, records
from floating_base_control.lie import (exp6_parts, rotation_angle, rotation_trace_between, se3_between, se3_compose,
                                       se3_right_multiply)

#: One increment of the prediction: its ``start`` time, duration ``dt``, the estimated twist ``V1``
#: (eq. 9) and the odometry ``D`` at its start (4x4).
INCREMENT = np.dtype([("start", "f8"), ("dt", "f8"), ("V1", "f8", (6,)), ("D", "f8", (4, 4))])
ROWS, WROWS = records(INCREMENT, readonly=True), records(INCREMENT)


@kernel(ROWS, RI1, R2, F, W2)
def odometry_at(rows, span, now, t, out):
    """``D(t)`` into ``out``: the prediction's odometry at ``t`` from the increments ``rows[head:tail]``
    (``span = [head, tail]``; an older ``t`` counts as their start, a later one as ``now``)."""
    head, tail = span[0], span[1]
    lo, hi = head, tail                     # the first row starting after t
    while lo < hi:
        mid = (lo + hi) // 2
        if rows[mid]["start"] <= t:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    if i < head and tail > head:
        out[:] = rows[head]["D"]
    elif i < head:
        out[:] = now
    elif t - rows[i]["start"] == 0.0:       # samples taken on a tick
        out[:] = rows[i]["D"]
    elif t - rows[i]["start"] < rows[i]["dt"]:
        out[:] = rows[i]["D"]
        R, p = exp6_parts(rows[i]["V1"], t - rows[i]["start"])
        se3_right_multiply(out, R, p)
    elif i + 1 < tail:
        out[:] = rows[i + 1]["D"]
    else:
        out[:] = now
    return out


@kernel(ROWS, RI1, R2, F, R2, R2, R2, W2)
def carry_sample(rows, span, now, t_meas, g_meas, g_pred, g_hat, carried):
    """A sample ``g_meas`` taken at ``t_meas`` carried forward to now, ``g_meas D(t_meas)^-1 D(now)``, into
    ``carried``.  Returns what the health gate and the observer need of it: of the residual
    ``g_pred^-1 carried``, the angle of its rotation and the length of its translation (the innovation),
    and ``tr`` of the rotation of ``g_hat^-1 carried`` (Lemma 11's condition)."""
    odometry_at(rows, span, now, t_meas, carried)
    se3_between(carried, now, carried)
    se3_compose(g_meas, carried, carried)
    d0, d1, d2 = carried[0, 3] - g_pred[0, 3], carried[1, 3] - g_pred[1, 3], carried[2, 3] - g_pred[2, 3]
    return (rotation_angle(rotation_trace_between(g_pred, carried)), math.sqrt(d0 * d0 + d1 * d1 + d2 * d2),
            rotation_trace_between(g_hat, carried))


@kernel(WROWS, WI1, F, F, F, R1, R2)
def record_increment(rows, span, horizon, start, dt, V1, D):
    """:meth:`PredictionHistory.record` on its rows (room for one more); ``span`` is updated in place."""
    head, tail = span[0], span[1]
    while head < tail and rows[head]["start"] < horizon:
        head += 1
    if start >= horizon:                    # (after a gap beyond the history: none kept)
        row = rows[tail]
        row["start"], row["dt"] = start, dt
        row["V1"][:] = V1
        row["D"][:] = D
        tail += 1
    span[0], span[1] = head, tail


class PredictionHistory:
    """The prediction's increments within the observer's history, oldest first: ``rows[head:tail]`` of a
    preallocated record array (a tick writes one row and allocates nothing; the array grows, rarely, when the
    history outgrows half of it, and the live rows move to the front when they reach its end)."""

    def __init__(self, capacity=1024):
        self.rows = np.zeros(capacity, INCREMENT)
        self.span = np.zeros(2, dtype=np.int64)         # [head, tail]: the kernels move them

    def __len__(self):
        return int(self.span[1] - self.span[0])

    @property
    def live(self):
        """The live rows (a view)."""
        return self.rows[self.span[0]:self.span[1]]

    def record(self, start, dt, V1, D, horizon):
        """Forget the increments that start before ``horizon``, then append one (``D``: 4x4, copied) unless
        it starts before ``horizon`` too."""
        if self.span[1] == len(self.rows):
            self._make_room()
        record_increment(self.rows, self.span, horizon, start, dt, V1, D)

    def clear(self):
        self.span[:] = 0

    def _make_room(self):
        """Move the live rows to the front, into an array twice as long if they fill half of this one."""
        live = self.live.copy()
        if 2 * len(live) > len(self.rows):
            self.rows = np.zeros(2 * len(self.rows), INCREMENT)
        self.rows[:len(live)] = live
        self.span[:] = 0, len(live)
