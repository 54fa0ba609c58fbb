"""ROS 2 nodes of spart_ros (each module has a ``main()`` entry point)."""
