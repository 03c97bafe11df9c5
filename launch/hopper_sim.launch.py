"""A [Feurstein2021] hopper in simulation: hopper_sim (MuJoCo, viscoelastic floor) + hopper_controller.

    ros2 launch floating_base_control hopper_sim.launch.py [config:=FILE] [namespace:=NS]

config/hopper.yaml holds the thesis' Exp VI (revolute hopper, forward gait).
The gains are live parameters of hopper_controller (rqt_reconfigure).  DDS
settings are left to the user's environment.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "floating_base_control"


def generate_launch_description():
    config = LaunchConfiguration("config")
    namespace = LaunchConfiguration("namespace")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution(
            [FindPackageShare(PACKAGE), "config", "hopper.yaml"]),
            description="parameters of hopper_sim and hopper_controller"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of both nodes"),
        Node(package=PACKAGE, executable="hopper_sim", name="hopper_sim", namespace=namespace,
             parameters=[config], output="screen"),
        Node(package=PACKAGE, executable="hopper_controller", name="hopper_controller", namespace=namespace,
             parameters=[config], output="screen"),
    ])
