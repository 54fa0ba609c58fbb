"""spart_ros.tools: helpers of the demo and the benchmarks (recording, plots); not on any control path."""
