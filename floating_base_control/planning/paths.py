"""Geometric joint paths ``q(s)`` of a reorientation plan: closed Fourier loops and straight lines.

Each path gives ``(q, q', q'')`` at an array of ``s`` (:meth:`derivatives`) and ends at
``s = length``; the timing (``timing.py``) turns ``s`` into time.
"""
import numpy as np

from .. import validation as check


class FourierLoop:
    """A closed loop in the joints ``joints``, based at ``q_base``, traversed ``cycles`` times:

    ``q(s) = q_base + sum_k a_k (cos(k s) - 1) + b_k sin(k s)``, ``k = 1..K``, ``0 <= s <= 2 pi cycles``

    (a truncated Fourier series, the loop family of [Fernandes1994]).  ``coefficients`` is
    ``(2K, len(joints))``: rows ``a_1..a_K`` then ``b_1..b_K``.  ``q(0) = q(2 pi) = q_base`` whatever
    the coefficients, so a loop always starts and ends where it was based.
    """

    def __init__(self, q_base, joints, coefficients, cycles=1):
        self.q_base = np.array(q_base, dtype=float)
        self.joints = np.array(joints, dtype=int)
        c = np.asarray(coefficients, dtype=float)
        if c.ndim != 2 or c.shape[1] != len(self.joints) or c.shape[0] % 2 or c.shape[0] == 0:
            raise check.InputError(f"coefficients must be (2K, {len(self.joints)}), got {c.shape}")
        self.coefficients = check.array("coefficients", c, c.shape)
        self.cycles = cycles
        for a in (self.q_base, self.joints, self.coefficients):
            a.setflags(write=False)

    @property
    def harmonics(self):
        return self.coefficients.shape[0] // 2

    @property
    def length(self):
        return 2 * np.pi * self.cycles

    def with_coefficients(self, coefficients, cycles=None):
        """The same family with other coefficients (and cycles)."""
        return FourierLoop(self.q_base, self.joints, coefficients, self.cycles if cycles is None else cycles)

    def basis(self, s):
        """``(B, B', B'')`` at ``s`` (each ``(len(s), 2K)``): the loop's joint offsets are ``B @ coefficients``."""
        s = np.asarray(s, dtype=float)
        k = np.arange(1, self.harmonics + 1)
        ks = np.outer(s, k)
        c, sn = np.cos(ks), np.sin(ks)
        return (np.hstack([c - 1, sn]), np.hstack([-sn * k, c * k]), np.hstack([-c * k**2, -sn * k**2]))

    def derivatives(self, s):
        """``(q, q', q'')`` at ``s`` (each ``(len(s), n)``)."""
        B, dB, ddB = self.basis(s)
        n = len(self.q_base)
        q, dq, ddq = np.tile(self.q_base, (len(B), 1)), np.zeros((len(B), n)), np.zeros((len(B), n))
        q[:, self.joints] += B @ self.coefficients
        dq[:, self.joints] = dB @ self.coefficients
        ddq[:, self.joints] = ddB @ self.coefficients
        return q, dq, ddq


class LinePath:
    """The straight joint path from ``q_a`` to ``q_b``: ``q(s) = q_a + s (q_b - q_a)``, ``0 <= s <= 1``."""

    length = 1.0

    def __init__(self, q_a, q_b):
        self.q_a, self.q_b = np.array(q_a, dtype=float), np.array(q_b, dtype=float)

    def derivatives(self, s):
        s = np.asarray(s, dtype=float)[:, None]
        d = self.q_b - self.q_a
        return self.q_a + s * d, np.broadcast_to(d, (len(s), len(d))).copy(), np.zeros((len(s), len(d)))
