"""floating_base_controller alone, for a real robot (or any simulator) behind standard topics.

    ros2 launch floating_base_control orbital_hardware.launch.py \
        joint_states:=/my_robot/joint_states base_pose:=/mocap/spacecraft/pose \
        commands:=/effort_controller/commands [base_pose_type:=odometry] [config:=FILE] [namespace:=NS]

Efforts go to ros2_control's forward_command_controller (effort interface) in
the order of the ``joints`` parameter.  Topic names without a leading slash are
resolved in the namespace.  DDS settings are the user's.

On activation the controller holds the measured joint positions, whatever the
parameter file says (``hold_on_activate:=false`` to use its set-points), and the
default parameter file, config/orbital_hardware.yaml, gives no set-point and no
task: the arm moves only when commanded.  (config/orbital_robot.yaml is the
simulated demo's: its set-points are the demo's goal.)
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "floating_base_control"


def generate_launch_description():
    arg = LaunchConfiguration
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution(
            [FindPackageShare(PACKAGE), "config", "orbital_hardware.yaml"]),
            description="parameters of floating_base_controller"),
        DeclareLaunchArgument("hold_on_activate", default_value="true",
                              description="hold the measured joint positions on activation (false: move to the "
                              "parameter file's set-points at once)"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the controller"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="run on /clock (a simulator must publish it)"),
        DeclareLaunchArgument("joint_states", default_value="joint_states",
                              description="sensor_msgs/JointState topic (joint_state_broadcaster)"),
        DeclareLaunchArgument("base_pose", default_value="base_pose",
                              description="base pose topic: geometry_msgs/PoseStamped or nav_msgs/Odometry"),
        DeclareLaunchArgument("base_pose_type", default_value="pose", description="pose | odometry"),
        DeclareLaunchArgument("commands", default_value="effort_controller/commands",
                              description="std_msgs/Float64MultiArray effort topic (forward_command_controller)"),
        Node(package=PACKAGE, executable="floating_base_controller", name="floating_base_controller",
             namespace=arg("namespace"), output="screen",
             parameters=[arg("config"), {"use_sim_time": arg("use_sim_time"),
                                         "base_pose_type": arg("base_pose_type"),
                                         "hold_on_activate": arg("hold_on_activate")}],
             remappings=[("joint_states", arg("joint_states")), ("base_pose", arg("base_pose")),
                         ("effort_controller/commands", arg("commands"))]),
    ])
