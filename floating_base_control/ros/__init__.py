"""ROS 2 layer: thin nodes that convert messages, hold parameters and call the core.

The only package that imports rclpy and ROS message types.
"""
