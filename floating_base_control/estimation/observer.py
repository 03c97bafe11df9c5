"""Base state observer of the orbital robot: [Mishra2023] Sec. V-A1-2 (eqs. 37-42, 51).

Inputs: joint positions and velocities at the control rate, and base pose
samples at a slow rate (with a time stamp; they may arrive late).  Outputs: the
estimate ``g_hat`` of the base pose and ``mu_hat`` of the locked velocity; the
controller uses ``mu_hat_o = Ad_eta^-1 mu_hat``, the estimate of ``mu``
expressed in the base frame {1} (the paper's transport operator).

The equations are ``observer_equations.py`` (with the choices the paper leaves open), the prediction
of the measurement and its history ``prediction.py``, the health checks ``health.py``.  Here is the
observer that runs them: its state is one record (:data:`OBSERVER`: the estimate, the prediction and
its odometry, the rates of the last tick, the gains, the counts) that the compiled kernels update in
place, with one record of scratch for the tick (:data:`SCRATCH`).  The control tick calls
:meth:`MomentumObserver.advance`, :meth:`MomentumObserver.take` once per pose sample (once without one)
and :meth:`MomentumObserver.update_rates` with the REL kernel's buffers.

A pose sample's path is one way, in one compiled call (:func:`take_pose_sample`): the gate's verdict on
the estimate (``health.state_verdict``), the sample carried forward to now and measured against the
prediction (``prediction.carry_sample``), the gate's verdict on it (``health.sample_verdict``), the
sample consumed if admitted (:func:`consume_sample`), the observer's error.  The call's path is the same
with or without a sample: a pose tick costs about what any tick does.  The controller then passes the
verdict to ``health.EstimatorHealth`` (the counts, a re-initialization) and restarts or re-initializes
the observer if it says so.

Lemma 11 requires ``tr(eta(0)) != -1``.  The observer is initialized from the first sample
(``eta(0) = I``); an explicit initial pose with a rotation error of pi is rejected, and a sample that would
give one later resets the pose estimate onto the sample (counted in ``resets``, as are restarts after a
diverged estimate, :meth:`reset`).

Inside, the observer works in Pinocchio's order (twists ``[v; omega]``, wrenches ``[force; moment]``);
its public attributes and :meth:`MomentumObserver.estimate` are in the paper's notation (4x4 poses,
``[omega; v]``).
"""
import math

import numpy as np
import pinocchio as pin

from floating_base_control.compiled import B, F, R1, R2, RI1, W1, kernel, records
from floating_base_control.conventions import swap_halves, swap_rows_and_columns
from floating_base_control.estimation.health import (ADMITTED, IMPLAUSIBLE, LENGTH, NO_SAMPLE, PLAUSIBLE,
                                                     innovation_size, sample_verdict, state_verdict)
from floating_base_control.estimation.observer_equations import (Error, Estimate, ObserverGains, estimate_norms,
                                                                 fold_sample, lemma_11_holds, observer_advance,
                                                                 observer_error, observer_rates)
from floating_base_control.estimation.prediction import ROWS, PredictionHistory, carry_sample
from floating_base_control.lie import rotation_trace_between, se3
from floating_base_control.validation import InputError

#: The observer's state: the estimate ``g_hat``, ``mu_hat``; the prediction ``g_pred`` of the measurement
#: and its odometry ``D`` now; the ``rates = [V_hat; mu_hat_dot]`` of the last tick (eqs. 37, 42); the gains
#: ``L`` (its diagonal) and ``-k``; the length of the history; the samples used and the resets.
OBSERVER = np.dtype([("g_hat", "f8", (4, 4)), ("g_pred", "f8", (4, 4)), ("D", "f8", (4, 4)), ("mu_hat", "f8", (6,)),
                     ("rates", "f8", (2, 6)), ("L", "f8", (6,)), ("minus_k", "f8", (6,)), ("history_s", "f8"),
                     ("samples", "i8"), ("resets", "i8")])
#: A tick's scratch: the observer's errors ``eta``, ``eps``, ``J = H(eps)``, ``H^T L eps``, the last sample
#: carried forward, and 2x6 for :func:`~.observer_equations.observer_rates`.
SCRATCH = np.dtype([("eta", "f8", (4, 4)), ("eps", "f8", (6,)), ("J", "f8", (6, 6)), ("H_T_L_eps", "f8", (6,)),
                    ("carried", "f8", (4, 4)), ("rates", "f8", (2, 6))])
STATE, TICK = records(OBSERVER), records(SCRATCH)


@kernel(STATE, TICK, W1)
def estimate_error(state, scratch, mu_hat_o):
    """:func:`~.observer_equations.observer_error` of the state into the scratch (``mu_hat_o``: its own array)."""
    s, x = state[0], scratch[0]
    observer_error(s["g_hat"], s["g_pred"], s["mu_hat"], s["L"], x["eta"], x["eps"], x["J"], x["H_T_L_eps"],
                   mu_hat_o)


@kernel(STATE, R2, F, F)
def consume_sample(state, carried, distance, eta_trace):
    """An admitted sample, carried forward to now, replaces the prediction
    (:func:`~.observer_equations.fold_sample`) and is counted; with ``tr`` of ``g_hat^-1 carried`` at a
    rotation error of pi (Lemma 11) the pose estimate restarts on it (counted)."""
    s = state[0]
    fold_sample(s["g_pred"], carried, distance)
    s["samples"] += 1
    if not lemma_11_holds(eta_trace):
        s["g_hat"][:, :] = s["g_pred"]
        s["resets"] += 1


@kernel(ROWS, RI1, STATE, TICK, R2, F, F, B, B, R1, W1)
def take_pose_sample(rows, span, state, scratch, g_meas, t_meas, t_now, has_sample, check_state, limits, mu_hat_o):
    """A tick's pose sample ``g_meas`` taken at ``t_meas`` (if ``has_sample``) through the health gate into the
    observer, and the observer's error (module doc).  Returns the gate's verdict: on the estimate if
    ``check_state`` and it is not plausible (then nothing changed, no error: the observer restarts), else on
    the sample (``NO_SAMPLE`` without one); ``rows``, ``span``: the prediction's history.

    A tick without a sample does the sample's work too, on ``g_meas`` as if taken in the middle of the newest
    increment, and discards it: a constant-time tick, as real-time code is written, whose usual case is its
    worst.  Run on 1 % of the ticks only, that code is out of the caches when a sample comes: the sample's part
    of the call then took 4-8 us instead of about 1 (measured in the orbital scenario's loop)."""
    s, x = state[0], scratch[0]
    if check_state:
        total, omega2, v2 = estimate_norms(s["g_hat"], s["mu_hat"])
        verdict = state_verdict(total, omega2, v2, limits)
        if verdict != PLAUSIBLE:
            return verdict
    head, tail = span[0], span[1]
    if not has_sample and tail > head:
        t_meas = rows[tail - 1]["start"] + 0.5 * rows[tail - 1]["dt"]
    theta, distance, eta_trace = carry_sample(rows, span, s["D"], t_meas, g_meas, s["g_pred"], s["g_hat"],
                                              x["carried"])
    size = innovation_size(theta, distance, limits[LENGTH])
    verdict = sample_verdict(t_now - t_meas, s["history_s"], size, limits) if has_sample else NO_SAMPLE
    if verdict == ADMITTED:
        consume_sample(state, x["carried"], distance, eta_trace)
    estimate_error(state, scratch, mu_hat_o)
    return verdict


@kernel(STATE, TICK, R1, R1, R2, R2, R1, W1)
def estimate_rates(state, scratch, A_qdot, base_mu_mu, M_b, M_b_chol, mu_hat_o, V1_hat):
    """:func:`~.observer_equations.observer_rates` at the state and the errors in the scratch, into the
    state's ``rates``, and ``V1_hat``."""
    s, x = state[0], scratch[0]
    observer_rates(x["eps"], s["minus_k"], A_qdot, x["H_T_L_eps"], base_mu_mu, M_b, M_b_chol, x["eta"], s["mu_hat"],
                   mu_hat_o, s["rates"], V1_hat, x["rates"])


@kernel(F, STATE, R1)
def advance_estimate(dt, state, V1_hat):
    """:func:`~.observer_equations.observer_advance` of the state by ``dt``."""
    s = state[0]
    observer_advance(dt, s["rates"], V1_hat, s["g_hat"], s["g_pred"], s["D"], s["mu_hat"])


_NO_SAMPLE = (0.0, np.eye(4))           # what a tick without a sample carries forward, and discards
_NO_SAMPLE[1].flags.writeable = False


def _pose(g):
    """A 4x4 float array of a pose given as an array or a ``pin.SE3``."""
    return g.homogeneous if isinstance(g, pin.SE3) else np.asarray(g, dtype=float)


class MomentumObserver:
    """SE(3) group observer (eq. 37) and Euler-Poincare observer (eq. 42) of [Mishra2023].

    At every tick: :meth:`advance` to the current time (with the rates of the
    previous tick), :meth:`take` for each new sample (the health gate's verdicts; or
    :meth:`add_pose` without them), read :meth:`error` (or :meth:`estimate`), then
    :meth:`update_rates` with the REL terms at ``(q, qdot, mu_hat_o)``.
    """

    def __init__(self, gains=None, history_s=2.0):
        self._state, self._scratch = np.zeros(1, OBSERVER), np.zeros(1, SCRATCH)
        s, x = self._state, self._scratch
        self._g_hat, self._g_pred, self._odometry, self._mu_hat = (s[name][0] for name in ("g_hat", "g_pred", "D",
                                                                                          "mu_hat"))
        for g in (self._g_hat, self._g_pred, self._odometry, x["eta"][0], x["carried"][0]):
            g[:] = np.eye(4)
        self._error_buffers, self._carried = (x["eta"][0], x["eps"][0], x["H_T_L_eps"][0]), x["carried"][0]
        self.gains = gains or ObserverGains()
        self.history_s = history_s
        # rows for twice the history of a 1 kHz loop: there, the rows never grow and the live ones move to
        # the front once per history_s
        self._intervals = PredictionHistory(max(64, math.ceil(2000 * history_s)))
        self._initialized = self._predicting = False       # g_hat and g_pred set
        self._V1_hat = None                 # the last tick's twist, with its rates (None: no rates)
        self.t = None

    # -- the paper's notation at the edge -------------------------------------------

    @property
    def gains(self):
        return self._gains

    @gains.setter
    def gains(self, gains):
        self._gains = gains
        self._state["L"][0], self._state["minus_k"][0] = gains.L_pin, gains.minus_k

    @property
    def history_s(self):
        """How far back a sample may have been taken (s): the prediction's history."""
        return self._history_s

    @history_s.setter
    def history_s(self, seconds):
        self._history_s = self._state["history_s"][0] = seconds

    @property
    def samples(self):
        """Pose samples used."""
        return int(self._state["samples"][0])

    @property
    def resets(self):
        """Pose estimates reset onto a sample (Lemma 11) and restarts (:meth:`reset`)."""
        return int(self._state["resets"][0])

    @property
    def g_hat(self):
        """Estimated base pose (4x4, a copy), ``None`` before the first sample."""
        return self._g_hat.copy() if self._initialized else None

    @g_hat.setter
    def g_hat(self, g):
        self._initialized = g is not None
        if g is not None:
            self._g_hat[:] = _pose(g)

    @property
    def g_hat_se3(self):
        """``g_hat`` as a ``pin.SE3`` (a new one at each call)."""
        return se3(self._g_hat)

    @property
    def g_pred(self):
        """Prediction of the measured pose at the current time (4x4, a copy)."""
        return self._g_pred.copy() if self._predicting else None

    @g_pred.setter
    def g_pred(self, g):
        self._predicting = g is not None
        if g is not None:
            self._g_pred[:] = _pose(g)

    @property
    def mu_hat(self):
        """Estimated locked velocity ``[omega; v]`` (a copy)."""
        return swap_halves(self._mu_hat)

    @mu_hat.setter
    def mu_hat(self, mu):
        self._mu_hat[:] = swap_halves(np.array(mu, dtype=float))

    @property
    def history(self):
        """The prediction's increments ``(t, dt, V1_hat [omega; v])`` within ``history_s``."""
        return [(float(row["start"]), float(row["dt"]), swap_halves(row["V1"])) for row in self._intervals.live]

    @property
    def initialized(self):
        return self._initialized

    def initialize(self, g_hat, mu_hat, t):
        """Start from an explicit estimate (the first sample is then the measurement).

        Rejects ``g_hat`` if its rotation differs from the prediction's by pi.
        """
        g_hat = _pose(g_hat)
        if self._predicting and not lemma_11_holds(rotation_trace_between(g_hat, self._g_pred)):
            raise InputError("initial pose estimate is at a rotation error of pi from the measurement: "
                             "tr(eta(0)) = -1 is excluded by Lemma 11")
        self.g_hat, self.mu_hat, self.t = g_hat, mu_hat, t
        if not self._predicting:
            self.g_pred = g_hat

    def estimate(self):
        """:class:`~.observer_equations.Estimate` at the current time (observer must be initialized)."""
        e = self.error()
        return Estimate(e.eta.copy(), swap_halves(e.eps), swap_rows_and_columns(self._scratch["J"][0]),
                        swap_halves(e.mu_hat_o))

    # -- a pose sample ------------------------------------------------------------------

    def take(self, sample, t_now, limits, check_state):
        """``(verdict, error)`` of :func:`take_pose_sample` at ``t_now`` with the sample ``(t_taken, g_meas)``
        (or ``None``) and the health gate's ``limits`` (``HealthConfig.limits``); ``error``: the
        :class:`~.observer_equations.Error` after it (``None`` if the estimate was not plausible).  The
        observer must be initialized."""
        t_meas, g_meas = sample or _NO_SAMPLE
        h, mu_hat_o, g_meas = self._intervals, np.empty(6), _pose(g_meas)    # mu_hat_o: the tick's output keeps it
        verdict = take_pose_sample(h.rows, h.span, self._state, self._scratch, g_meas, t_meas, t_now,
                                   sample is not None, check_state, limits, mu_hat_o)
        return verdict, (None if verdict in IMPLAUSIBLE else Error(*self._error_buffers, mu_hat_o))

    def start(self, sample, t_now, limits):
        """``(verdict, error)`` of the first sample ``(t_taken, g_meas)`` (or the first after :meth:`reset`):
        the gate's verdict on its age and, if admitted, the estimate starts from it (``error``: ``None`` if
        not)."""
        t_meas, g_meas = sample
        verdict = sample_verdict(t_now - t_meas, self.history_s, 0.0, limits)
        if verdict == ADMITTED:
            self._start_from(g_meas, t_now)
        return verdict, (self.error() if self._initialized else None)

    def add_pose(self, g_meas, t_meas, t_now):
        """A base pose sample taken at ``t_meas`` (older than ``t_now`` by the sensor latency), without the
        health gate: it starts the estimate, or is carried forward and consumed (:func:`consume_sample`).

        A sample with a NaN translation is attitude only (e.g. a star tracker): only its rotation
        replaces the prediction's, so only the attitude is an innovation (compensation needs only the
        angular part of mu: ``control/shape.py``).
        """
        if not self._initialized:
            self._start_from(g_meas, t_now)
            return
        h = self._intervals
        _, distance, eta_trace = carry_sample(h.rows, h.span, self._odometry, t_meas, _pose(g_meas), self._g_pred,
                                              self._g_hat, self._carried)
        consume_sample(self._state, self._carried, distance, eta_trace)

    def _start_from(self, g_meas, t_now):
        """The estimate starts at the sample ``g_meas`` (an attitude-only one at the origin), at rest relative to
        the current ``mu_hat``."""
        self._state["samples"][0] += 1
        g0 = np.array(_pose(g_meas))
        if not all(map(math.isfinite, g0[:3, 3].tolist())):
            g0[:3, 3] = 0.0
        self.g_pred = g0
        self.initialize(g0, self.mu_hat, t_now)

    def reinitialize(self, t_now):
        """The pose estimate and the prediction restart on the last sample taken, carried forward to now (the
        health gate's call after a run of consistent rejections); ``mu_hat`` is kept.  Returns the error."""
        self.g_pred = self._carried
        self.initialize(self._carried, self.mu_hat, t_now)
        self.resync(t_now)
        return self.error()

    # -- the control tick (Pinocchio's order) -----------------------------------------

    def error(self):
        """:class:`~.observer_equations.Error` at the current time (observer must be initialized).  ``eta``,
        ``eps`` and ``H_T_L_eps`` are the observer's buffers: valid until the next call."""
        mu_hat_o = np.empty(6)                    # a new array: the tick's output keeps it
        estimate_error(self._state, self._scratch, mu_hat_o)
        return Error(*self._error_buffers, mu_hat_o)

    def update_rates(self, error, ws, A_qdot, base_mu_mu):
        """Rates of eqs. 37, 42 and of the prediction (eq. 9) at the current state and its ``error`` (the
        last one :meth:`take` or :meth:`error` gave), stored for the next :meth:`advance`.  ``ws`` holds the
        factor of ``M_b`` (``rel_fast.locked_inertia_factor`` at the current shape); ``A_qdot`` and
        ``base_mu_mu`` are REL terms at ``(q, qdot, mu_hat_o)``, all in Pinocchio's order.  Returns the
        estimated base twist ``V1_hat`` (eq. 9)."""
        V1_hat = np.empty(6)                      # a new array: the tick's output keeps it
        estimate_rates(self._state, self._scratch, A_qdot, base_mu_mu, ws.M_b, ws.M_b_chol, error.mu_hat_o, V1_hat)
        self._V1_hat = V1_hat
        return V1_hat

    def resync(self, t):
        """Resume at ``t`` without integrating the gap (inputs were unusable until now)."""
        if self._initialized:
            self.t, self._V1_hat = t, None

    def reset(self):
        """Forget the estimate (e.g. after it diverged): the next pose sample initializes again."""
        self._intervals.clear()
        self._initialized = self._predicting = False
        self.t = self._V1_hat = None
        self._mu_hat[:] = 0.0
        self._state["resets"][0] += 1

    def healthy(self):
        """The estimate is finite (an uninitialized observer is healthy)."""
        return not self._initialized or bool(np.isfinite(self._g_hat).all() and np.isfinite(self._mu_hat).all())

    def advance(self, t):
        """Integrate from the last time to ``t`` with the stored rates (Lie-Euler step).

        Without rates (just initialized or resynchronized) or with a clock that went back,
        the observer only moves its time to ``t``: it never integrates an interval with
        rates from outside it.
        """
        dt = t - self.t
        if self._V1_hat is None or dt <= 0:
            self.t = t
            return
        self._intervals.record(self.t, dt, self._V1_hat, self._odometry, t - self.history_s)
        advance_estimate(dt, self._state, self._V1_hat)
        self.t = t
