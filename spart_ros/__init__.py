"""
spart_ros: SPART spacecraft-robotics dynamics for ROS 2.

This module only carries the version: importing ``spart_ros`` must stay
cheap (no rclpy, no numba), so that tools and tests can import it anywhere.
"""

__version__ = '0.1.0'
