"""The reorientation planner's loops for any axis: the fastest loop about an axis (first guesses from
curvature, the search, clear of the base), searched on demand and cached, and the loops landing on a rotation
in a number of cycles (steps 1-3 of ``reorientation.py``'s module doc)."""
import math

import numpy as np

from ..validation import InputError
from .loops import CLEARANCE_SAMPLES, LANDING_TOLERANCE, SELECTION_ITERATIONS, _LoopFamily, _stokes_form

#: Bisection steps shrinking a loop that touches the base.
SHRINK_BISECTIONS = 10
#: A loop grown beyond the fastest one (:meth:`_AxisLoops.land`): at most this many times its rotation per cycle,
#: at least this fraction of its rate.  Its clearance constraint is on the samples the check uses
#: (``CLEARANCE_SAMPLES``): a large loop sweeps the arm past the base between 64 samples (~2 cm closer than they
#: say on the orbital robot), and between 256 by enough to fail the check.
GROWTH, GROWN_RATE = 2.5, 0.8
#: The most cycles of the fastest loop from which one cycle fewer, of a grown loop, is tried: from 3 to 2 cycles
#: each turns 1.5x as much; from 7 to 6 only 1.17x, for seconds more of planning (90 deg about z: 6.7 s of CPU
#: against 2 s).
GROWN_CYCLES = 3
#: The numbers of cycles a landing tries (from the fewest).
LANDING_ATTEMPTS = 8


class _LoopSearch:
    """The fastest loops for any axis (searched on demand, cached) and the loops landing on a rotation."""

    def __init__(self, model, q0, allowed, limits, harmonics, loop_joints, max_cycles, clearance):
        self.model, self.q0, self.allowed, self.limits = model, q0, allowed, limits
        self.harmonics, self.loop_joints, self.max_cycles = harmonics, loop_joints, max_cycles
        self.clearance = clearance          #: (BaseClearance, metres) or None
        self.ws = model.create_data()

    def for_axis(self, theta):
        return _AxisLoops(self, theta / np.linalg.norm(theta))

    def land(self, theta, cycles=None):
        """``(loop, cycles, phi)`` turning the base by ``exp(theta)`` at zero momentum (``(None, 0, 0)`` for
        no rotation)."""
        if np.linalg.norm(theta) < LANDING_TOLERANCE:
            return None, 0, np.zeros(3)
        return self.for_axis(theta).land(theta, cycles)


class _AxisLoops:
    """The fastest loop about ``axis`` (first guesses from curvature, then the search of
    ``reorientation.py``'s module doc)."""

    def __init__(self, loops, axis):
        self.loops, self.axis = loops, axis
        model, q0, limits = loops.model, loops.q0, loops.limits
        self.joints = _loop_joints(model, q0, axis, loops.allowed, limits, loops.loop_joints)
        self.family, self.best = self._search()
        if not self.family.clear(self.best.x[:-1]):
            self.family, self.best = self._clear_of_the_base()

    def _search(self):
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, 1, loops.limits, self.axis, loops.clearance)
        best = max((family.fastest(x0, iterations=SELECTION_ITERATIONS) for x0 in family.stokes_guesses()),
                   key=lambda r: r.rate)
        for harmonics in range(2, loops.harmonics + 1):       # one more harmonic at a time, never worse
            family = _LoopFamily(loops.model, loops.q0, self.joints, harmonics, loops.limits, self.axis,
                                 loops.clearance)
            start = best._replace(x=family.padded(best))
            best = max(family.fastest(start.x), start, key=lambda r: r.rate)
        return family, best

    def _clear_of_the_base(self):
        """The fastest loop touches the base: shrink it towards ``q0`` until it is clear (bisection), then
        search again from there with the clearance as a constraint."""
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, loops.harmonics, loops.limits, self.axis,
                             loops.clearance, avoid_base=True)
        lo, hi = 0.0, 1.0
        for _ in range(SHRINK_BISECTIONS):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if family.clear(mid * self.best.x[:-1]) else (lo, mid)
        start = family.evaluated(lo * self.best.x)
        found = family.fastest(start.x)
        return family, found if found.rate > start.rate and family.clear(found.x[:-1]) else start

    @property
    def per_cycle(self):
        return float(self.best.phi @ self.axis)

    def _grown(self, phi_target):
        """Coefficients of a cycle turning the base by exactly ``phi_target``, more than the fastest loop turns, or
        ``None``: the fastest loop grown until it turns that much about the axis (:meth:`_LoopFamily.grown`), the
        shortest such cycle from there (:meth:`_LoopFamily.fastest`), landed; kept if its rate at constant path speed
        is at least ``GROWN_RATE`` times the fastest's (fewer, larger cycles, not a much slower plan)."""
        loops = self.loops
        family = _LoopFamily(loops.model, loops.q0, self.joints, self.family.shape[0] // 2, loops.limits, self.axis,
                             loops.clearance, avoid_base=True, clearance_samples=CLEARANCE_SAMPLES)
        grown = family.grown(self.best.x, np.linalg.norm(phi_target))
        if grown is None:
            return None
        shortest = family.fastest(grown.x, phi_target)
        c = family.landed(self.best, phi_target, start=shortest.x[:-1])
        if c is None or family.evaluated(np.append(c, 1.0)).rate < GROWN_RATE * self.best.rate:
            return None
        return c

    def land(self, theta, cycles=None, start=None, grow=True):
        """``(loop, cycles, phi)``: ``cycles`` cycles of ``loop`` turn the base by ``exp(theta)``, ``phi =
        theta / cycles`` each (zero momentum); ``cycles`` is the number the fastest loop needs rounded down less
        one (a loop grown for it, :meth:`_grown`, if within ``GROWTH`` and ``GROWN_CYCLES``), rounded down (a
        larger loop may do with one fewer: fewer, larger cycles are faster than more, smaller ones) or up, or at
        least the given number.
        ``start``: a loop of the family to land from (continuation); ``grow``: whether to try the grown loop (the
        momentum plan's screening of end times lands many targets: without)."""
        max_cycles = self.loops.max_cycles
        names = [self.loops.model.joint_names[j] for j in self.joints]
        needed = np.linalg.norm(theta) / max(self.per_cycle, 1e-300)
        if self.per_cycle <= 0 or needed > max_cycles:
            raise InputError(f"the joints {names} cannot turn the base about {np.round(self.axis, 4).tolist()} "
                             f"within the limits: the best loop turns {math.degrees(self.per_cycle):.3g} deg per "
                             f"cycle about it (and {math.degrees(self.best.off_axis):.3g} deg about other axes); "
                             f"{math.degrees(np.linalg.norm(theta)):.4g} deg would need {needed:.4g} cycles "
                             f"(max_cycles {max_cycles})")
        first = cycles or max(1, math.floor(needed))   # the needed number rounded down may land on a larger loop
        if (grow and cycles is None and start is None and 1 < first <= GROWN_CYCLES
                and needed / (first - 1) <= GROWTH):
            c = self._grown(theta / (first - 1))      # one cycle fewer still, of a loop grown for it
            if c is not None:
                return self.family.loop(c, first - 1), first - 1, theta / (first - 1)
        last = min(first + LANDING_ATTEMPTS - 1, max_cycles)
        for n in range(first, last + 1):
            c = self.family.landed(self.best, theta / n, None if start is None or n != first else start.coefficients)
            if c is not None:
                return self.family.loop(c, n), n, theta / n
        raise InputError(f"no loop of the joints {names} lands on the target within the limits in {first} to "
                         f"{last} cycles")


def _loop_joints(model, q0, axis, allowed, limits, count):
    """The ``count`` allowed joints with the largest weight in the best Stokes plane for ``axis`` (see
    :meth:`_LoopFamily.stokes_guesses`)."""
    if len(allowed) <= count:
        return allowed
    U, _, Vt = np.linalg.svd(_stokes_form(model, q0, axis, allowed, limits))
    weight = U[:, 0] ** 2 + Vt[0] ** 2
    return np.sort(allowed[np.argsort(weight)[::-1][:count]])
