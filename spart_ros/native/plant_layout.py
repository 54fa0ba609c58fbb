"""
The memory layout the plants' compiled kernels share with Python (:mod:`.plant_kernels`).

Plain constants (no numba), so that the plants read them without loading the compiler.

An orbit is one float64 row ``orbit`` (:data:`ORBIT_COLS`): ``[on, mean motion n [rad/s], mu
[m^3/s^2], radius a [m], model]`` (``on`` 0: no orbit; ``model`` :data:`LINEAR` or
:data:`NONLINEAR`, :mod:`spart_ros.core.orbit`'s two tidal models).
"""

ORBIT_ON, ORBIT_N, ORBIT_MU, ORBIT_RADIUS, ORBIT_MODEL = 0, 1, 2, 3, 4
ORBIT_COLS = 5
LINEAR, NONLINEAR = 0.0, 1.0

#: rows of the RK4 step's scratch (``work``): k1..k4, the stage's state, the next state
RK4_ROWS = 6
#: length of the RK4 step's small scratch (``small``): R0 (9), tau0 (6), spare
RK4_SMALL = 32

#: rows of the dissipation step's scratch (``work``, N x N each): see plant_kernels
DISSIPATION_MATRICES = 6
#: rows of its vector scratch (``vectors``, N each)
DISSIPATION_VECTORS = 16
#: Newton iterations before the implicit velocity gives up (joint_dissipation.MAX_ITERATIONS)
MAX_ITERATIONS = 60
