"""``theta_bc(q)``: the orientation of the CoM frame aligned with the locked velocity, relative to the
base ([Feurstein2021] eqs. 3.70-3.76), which controller III's polar spring acts on (``alpha_c``)."""
import math

import numpy as np

from floating_base_control.kinematics import inertia_blocks
from floating_base_control.robots.hopper.model import PLANE_NORMAL
from floating_base_control.validation import InputError, ModelError


class LockedFrameAngle:
    """``theta_bc(q)`` of the CoM frame aligned with the locked velocity ([Feurstein2021] eqs. 3.70-3.76).

    Its rate is the locked angular velocity relative to the base, ``omega_bc = T_omega(q) qdot``
    with ``T_omega = n . A_omega``.  For one joint the integrability condition (3.73) holds
    trivially and ``theta_bc(q) = int_q_lo^q T_omega(s) ds``, tabulated once here on
    ``samples`` points (trapezoid rule with its end correction, error ~1e-10 rad) and
    interpolated by cubic Hermite polynomials through the values and the exact rates, so that
    ``d theta_bc / dq`` is ``T_omega`` to ~1e-9.  Several joints are refused: there (3.72)
    generally fails and the angle is path dependent.  ``periodic`` (a revolute joint without
    limits, tabulated over ``[q_lo, q_lo + 2 pi]``): beyond the table, each turn adds the
    angle of one full turn, since ``T_omega`` has period 2 pi.
    """

    def __init__(self, model, q_lo, q_hi, samples=2001, periodic=False):
        if model.n != 1:
            raise ModelError(f"controller III needs a path-independent theta_bc(q): implemented "
                             f"for one joint ([Feurstein2021] eq. 3.73), the model has {model.n}")
        ws = model.create_data()
        self.q = np.linspace(q_lo, q_hi, samples)
        self.h = self.q[1] - self.q[0]
        T = np.empty(samples)
        for i, qi in enumerate(self.q):
            ws.q_pin[7:] = qi
            T[i] = PLANE_NORMAL @ inertia_blocks(model, ws)[3][:3, 0]
        dT = np.gradient(T, self.h, edge_order=2)
        steps = 0.5 * self.h * (T[1:] + T[:-1]) + self.h ** 2 / 12.0 * (dT[:-1] - dT[1:])
        self.T = T
        self.theta = np.concatenate([[0.0], np.cumsum(steps)])
        if periodic and not math.isclose(q_hi - q_lo, 2.0 * math.pi):
            raise InputError(f"a periodic theta_bc is tabulated over one turn, got [{q_lo}, {q_hi}]")
        self.periodic = periodic

    def __call__(self, q):
        """``theta_bc(q)`` relative to ``theta_bc(q_lo) = 0``, rad."""
        q = float(np.asarray(q).reshape(-1)[0])
        if self.periodic:
            turns = math.floor((q - self.q[0]) / (2.0 * math.pi))
            return self(q - 2.0 * math.pi * turns) + turns * self.theta[-1] if turns else self._table(q)
        return self._table(q)

    def _table(self, q):
        if not self.q[0] <= q <= self.q[-1]:
            raise InputError(f"q = {q} is outside the tabulated range [{self.q[0]}, {self.q[-1]}] "
                             "of theta_bc")
        i = min(int((q - self.q[0]) / self.h), len(self.q) - 2)
        s = (q - self.q[i]) / self.h
        h00, h10, h01, h11 = (2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s,
                              -2 * s ** 3 + 3 * s ** 2, s ** 3 - s ** 2)
        return float(h00 * self.theta[i] + h10 * self.h * self.T[i]
                     + h01 * self.theta[i + 1] + h11 * self.h * self.T[i + 1])
