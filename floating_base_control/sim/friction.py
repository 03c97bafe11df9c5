"""Joint friction of the simulated arm: the identified model of the Franka Emika Panda.

C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic
Identification of the Franka Emika Panda Robot With Retrieval of Feasible
Parameters Using Penalty-Based Optimization", IEEE RA-L 4(4), 2019, eq. 25
(the source of the URDF's inertial parameters too)::

    tau_f,j(qdot_j) = phi1_j / (1 + exp(-phi2_j (qdot_j + phi3_j))) - phi1_j / (1 + exp(-phi2_j phi3_j))

with the identified ``phi1`` (N m), ``phi2`` (s/rad), ``phi3`` (rad/s) below, as
published with the paper's supplementary material and the authors' model
repository (FrankaEmikaPandaDynModel, friction function).  The sigmoid is zero
at rest, viscous near rest (slope ``phi1 phi2 s (1 - s)``, ``s`` the sigmoid at
``phi2 phi3``: 0.7-2.0 N m s/rad) and Coulomb-like above about 0.5 rad/s (it
spans ``phi1`` = 0.30-1.28 N m between large negative and positive speeds).
The joints' torque is ``tau - tau_f(qdot)``: friction opposes the motion.
"""
from dataclasses import dataclass

import numpy as np

from floating_base_control.compiled import R1, W1, kernel

#: Gaz et al. 2019, identified friction of the Panda's joints 1-7.
PANDA_PHI1 = (0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489)
PANDA_PHI2 = (5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336)
PANDA_PHI3 = (0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526)


@dataclass(frozen=True)
class SigmoidFriction:
    """Eq. 25 of Gaz et al. 2019, one entry per joint (``scale`` multiplies ``phi1``: a dispersion)."""

    phi1: tuple = PANDA_PHI1
    phi2: tuple = PANDA_PHI2
    phi3: tuple = PANDA_PHI3
    scale: tuple = (1.0,) * 7

    def __post_init__(self):
        # the per-joint constants, once: the plant evaluates the torque at every physics step
        phi1 = np.multiply(self.phi1, self.scale)
        phi2, phi3 = np.asarray(self.phi2, dtype=float), np.asarray(self.phi3, dtype=float)
        constants = {"_phi1": phi1, "_minus_phi2": -phi2, "_phi3": phi3,
                     "_at_rest": phi1 / (1.0 + np.exp(-phi2 * phi3)), "_buffer": np.zeros(phi1.shape)}
        for name, value in constants.items():
            object.__setattr__(self, name, value)

    def torque(self, qdot, out=None):
        """Friction torque ``tau_f(qdot)`` (in the direction of the motion: subtract it), into ``out``
        if given."""
        return np.subtract(self._sigmoid(qdot), self._at_rest, out=out)

    def opposing_torque(self, qdot, out=None):
        """``-tau_f(qdot)``, what acts on the joints, into ``out`` if given (``a - b`` is exactly
        ``-(b - a)`` in floating point: the same numbers as negating :meth:`torque`).  The plant's step
        calls it at every physics step: two compiled kernels around numpy's ``exp`` (whose results the
        compiled ``exp`` of the C library does not reproduce to the last bit)."""
        out = np.empty(self._buffer.shape) if out is None else out
        x = self._buffer
        sigmoid_exponent(qdot, self._phi3, self._minus_phi2, x)
        np.exp(x, out=x)
        at_rest_minus_sigmoid(self._at_rest, self._phi1, x, out)
        return out

    def _sigmoid(self, qdot):
        x = self._buffer
        sigmoid_exponent(qdot, self._phi3, self._minus_phi2, x)
        np.exp(x, out=x)
        x += 1.0
        return np.divide(self._phi1, x, out=x)


@kernel(R1, R1, R1, W1)
def sigmoid_exponent(qdot, phi3, minus_phi2, out):
    """The exponent ``-phi2 (qdot + phi3)`` of eq. 25's sigmoid, into ``out``."""
    for j in range(len(out)):
        out[j] = minus_phi2[j] * (qdot[j] + phi3[j])


@kernel(R1, R1, R1, W1)
def at_rest_minus_sigmoid(at_rest, phi1, exponential, out):
    """``tau_f(0) - phi1 / (1 + exp(.))`` of eq. 25 from the sigmoid's ``exponential``, into ``out``: the
    opposing torque (``out`` may be ``exponential``)."""
    for j in range(len(out)):
        out[j] = at_rest[j] - phi1[j] / (exponential[j] + 1.0)
