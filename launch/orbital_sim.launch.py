"""The orbital robot in simulation: mujoco_sim (simulated hardware) + floating_base_controller.

    ros2 launch floating_base_control orbital_sim.launch.py [config:=FILE] [namespace:=NS] [use_sim_time:=true]

With use_sim_time:=true, mujoco_sim publishes its simulated time on /clock (publish_clock) and
the controller runs on it.

DDS settings are left to the user's environment (the package's Makefile and
tests keep traffic on the machine with FASTDDS_BUILTIN_TRANSPORTS=SHM).
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
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution(
            [FindPackageShare(PACKAGE), "config", "orbital_robot.yaml"]),
            description="parameters of mujoco_sim and floating_base_controller"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of both nodes"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="the controller runs on the simulated time, which mujoco_sim "
                              "publishes on /clock"),
        Node(package=PACKAGE, executable="mujoco_sim", name="mujoco_sim", namespace=namespace,
             parameters=[config, {"publish_clock": use_sim_time}], output="screen"),
        Node(package=PACKAGE, executable="floating_base_controller", name="floating_base_controller",
             namespace=namespace, parameters=[config, {"use_sim_time": use_sim_time}], output="screen"),
    ])
