"""The hoppers of seed 003 (Feurstein 2021, ch. 4): the controller's model and the thesis'
planar coordinates.

The URDFs (``urdf/hopper_<robot>.urdf``, paths from :func:`~floating_base_control.resources.hopper_urdf`)
put the sagittal plane in the world's x-z plane: the thesis' planar x-y with y up is the
world's x-z, and its angles turn about world -y.
"""
import numpy as np

from ..conventions import pose
from ..model import FloatingBaseModel
from ..resources import hopper_urdf


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
