"""
The compiled kernels of spart_ros: O(n) rigid-body algorithms and entry checks (numba source).

The lowest layer of the package: it imports nothing of spart_ros but itself.
:mod:`.layout` holds the memory layout shared with Python (array columns, error codes),
:mod:`.kernels` the numba source.  The core packs robots for it
(:mod:`spart_ros.core.compiled_model`) and calls it through
:class:`spart_ros.core.fast.FastDynamics` and the SPART-named functions.
"""
