"""What is specific to one kind of robot: its controller assembled from the core, and its model.

The simulated robots are in :mod:`floating_base_control.sim`, the experiments run on them in
:mod:`floating_base_control.experiments`, their ROS 2 nodes in :mod:`floating_base_control.ros`.
"""
