"""
spart_ros.tools: helpers of the demo and the benchmarks (recording, plots).

Not on any control path.
"""
