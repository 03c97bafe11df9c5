"""The orbital robot in gz sim (zero gravity) with gz_ros2_control, and floating_base_controller.

    ros2 launch floating_base_control orbital_gazebo.launch.py [headless:=true] [config:=FILE]

Starts gz sim with worlds/zero_gravity.sdf, spawns urdf/orbital_robot.urdf
(its <ros2_control> block uses gz_ros2_control/GazeboSimSystem), loads the
joint_state_broadcaster and an effort forward_command_controller
(config/gz_controllers.yaml), bridges the base odometry of gz's
OdometryPublisher to /base_pose, and runs the controller with
base_pose_type:=odometry.  The arm starts at mujoco_sim's q0 (the
``initial_value`` of each joint in the URDF's <ros2_control> block); headless:=true
runs gz sim without its GUI (server only).  Needs ros_gz_sim, ros_gz_bridge, gz_ros2_control
and the ros2_controllers; DDS settings are the user's.
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "floating_base_control"


def _robot(context):
    share = FindPackageShare(PACKAGE).perform(context)
    with open(os.path.join(share, "urdf", "orbital_robot.urdf")) as f:
        urdf = f.read().replace("@CONTROLLERS_YAML@", os.path.join(share, "config", "gz_controllers.yaml"))
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": urdf, "use_sim_time": True}]),
        Node(package="ros_gz_sim", executable="create", output="screen",
             arguments=["-topic", "robot_description", "-name", "orbital_robot"]),
    ]


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    server_only = PythonExpression(["'-s ' if '", LaunchConfiguration("headless"), "'.lower() == 'true' else ''"])
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution([share, "config", "orbital_robot.yaml"]),
                              description="parameters of floating_base_controller"),
        DeclareLaunchArgument("headless", default_value="false",
                              description="true: gz sim without its GUI (a machine without a display)"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare("ros_gz_sim"), "launch",
                                                                "gz_sim.launch.py"])),
            launch_arguments={"gz_args": ["-r ", server_only,
                                          PathJoinSubstitution([share, "worlds", "zero_gravity.sdf"])]}.items()),
        OpaqueFunction(function=_robot),
        Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
             arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock",
                        "/model/orbital_robot/odometry@nav_msgs/msg/Odometry[gz.msgs.Odometry"],
             remappings=[("/model/orbital_robot/odometry", "/base_pose")]),
        Node(package="controller_manager", executable="spawner", output="screen",
             arguments=["joint_state_broadcaster", "effort_controller"]),
        Node(package=PACKAGE, executable="floating_base_controller", name="floating_base_controller",
             output="screen", parameters=[LaunchConfiguration("config"),
                                          {"use_sim_time": True, "base_pose_type": "odometry",
                                           "hold_on_activate": True}]),
    ])
