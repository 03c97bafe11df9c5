"""The hoppers of [Feurstein2021] ch. 4: the controller's model and the thesis'
planar coordinates.

The URDFs (``urdf/hopper_<robot>.urdf``, paths from :func:`~floating_base_control.resources.hopper_urdf`)
put the sagittal plane in the world's x-z plane: the thesis' planar x-y with y up is the
world's x-z, and its angles turn about world -y.  The base frame's x-z plane is the sagittal plane
too, so the plane normal is the same vector in the world and in the base frame.

:class:`HopperMeasurements` is what a hopper's sensors give its controller (the plant fills it,
the controller reads it).
"""
import math
from dataclasses import dataclass

import numpy as np

from floating_base_control.conventions import pose
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import hopper_urdf

#: World axes of the sagittal plane: forward, up, and the normal about which the
#: thesis' angles are positive (its out-of-plane z axis is world -y).
FORWARD = np.array([1.0, 0.0, 0.0])
UP = np.array([0.0, 0.0, 1.0])
PLANE_NORMAL = np.array([0.0, -1.0, 0.0])


@dataclass
class HopperMeasurements:
    """What the controller reads each tick: never the simulator's state.

    ``g1`` and ``V1`` come from odometry (base pose in the inertial frame, base body
    twist ``[omega; v]``), ``q``/``qdot`` from the joint encoders, ``foot_force`` is the
    normal ground reaction measured at the foot (N, >= 0).
    """

    t: float
    q: np.ndarray
    qdot: np.ndarray
    g1: np.ndarray
    V1: np.ndarray
    foot_force: float


def hopper_model(robot, g=9.81):
    """The controller's :class:`FloatingBaseModel` of a hopper, gravity ``-g`` along world z."""
    return FloatingBaseModel.from_urdf(hopper_urdf(robot), gravity=(0.0, 0.0, -float(g)))


def planar_pose(x, y, theta):
    """Base pose ``g1`` of the thesis' planar ``(o^x_ib, o^y_ib, theta_ib)``: the thesis' y is
    world z and its angles turn about world -y (the URDFs' out-of-plane axis)."""
    c, s = np.cos(theta), np.sin(theta)
    return pose(np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]]), [x, 0.0, y])


def planar_twist(vx, vy, omega):
    """Base body twist ``[omega; v]`` of the thesis' body velocity ``(v^x_b, v^y_b, omega_ib)``
    (its simulation state uses the body-frame linear velocity, Appendix A.2)."""
    return np.array([0.0, -omega, 0.0, vx, 0.0, vy])


def base_pitch(R):
    """``theta_ib``: angle from the world forward axis to the base x axis (``R``'s first column)
    about ``PLANE_NORMAL``."""
    return math.atan2(R[2][0], R[0][0])
