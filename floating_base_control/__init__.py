"""floating_base_control: geometric dynamics, estimation and control of floating-base robots.

The core (this package minus ``nodes``) does not import ROS.  Start with
:class:`FloatingBaseModel`; the notation is that of Mishra et al. [Mishra2023].
"""
from floating_base_control.model import FloatingBaseModel
from floating_base_control.validation import FloatingBaseError, InputError, ModelError

__all__ = ["FloatingBaseModel", "FloatingBaseError", "InputError", "ModelError"]
__version__ = "0.1.0"
