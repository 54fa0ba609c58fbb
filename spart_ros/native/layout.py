"""
The memory layout the compiled kernels share with Python: array columns, error codes, tolerances.

Plain constants (no numba), so that the Python side reads them without loading the compiler.

A robot's constant model (Pinocchio's Model) is two arrays:

- ``mi`` (int64): ``[n, n_q, (parent link id, joint type, joint-variable index or -1) for links
  1..n,
  joint dynamics flag]`` (the flag, ``mi[2 + 3 n]``: 1 when the kernels add the joints'
  damping, friction and armature, 0 for the rigid-body model);
- ``mf`` (float64, (n + 1, MF_COLS)): one row per body (0 = base, i = link i): mass, inertia about
  the CoM in the CoM frame (row-major 3x3), joint frame in the parent CoM frame (rotation,
  row-major,
  + translation), CoM frame in the joint frame (rotation + translation), joint axis, two flags
  (1.0 where a rotation is exactly the identity), and joint i's damping, Coulomb friction, armature
  and friction smoothing velocity (read only when the joint dynamics flag is 1).

A caller's workspace (Pinocchio's Data) is ``W`` (float64, (n + 2, WS_COLS)): one row per body
(row n + 1 is scratch) holding the state-dependent quantities at the column offsets below; only the
kernels read it.  Results go to output arrays the caller owns.
"""

# --- workspace columns (per body row of W) ------------------------------------------------
R, X, IW, S, XJ, V, A, F, IC, PA, U, DINV, UU, C, E, G, RJ = (
    0,
    9,
    12,
    21,
    27,
    30,
    36,
    42,
    48,
    84,
    90,
    96,
    97,
    98,
    104,
    107,
    110,
)
WS_COLS = 119

# --- model columns (per body row of mf) ---------------------------------------------------
MASS, IBODY, TJR, TJP, TLR, TLP, AXIS = 0, 1, 10, 19, 22, 31, 34
# 1.0 where the joint / CoM frame rotation is exactly the identity (rpy 0 0 0, the common case):
# forward kinematics then copies instead of multiplying
TJR_IDENTITY, TLR_IDENTITY = 37, 38
# joint i's viscous damping, Coulomb friction, rotor inertia and the velocity v of the smoothed
# sign tanh(qd / v) (spart_ros.core.joint_friction)
DAMPING, FRICTION, ARMATURE, FRICTION_VELOCITY = 39, 40, 41, 42
MF_COLS = 43

# joint types (as spart_ros.core.model numbers them)
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2

# error codes returned by the entry kernels (+ index into ARGUMENT_NAMES); 0 = ok
ARGUMENT_NAMES = (
    '',
    'R0',
    'r0',
    'qm',
    'u0',
    'um',
    'u0dot',
    'umdot',
    'wF0',
    'wFm',
    'gravity',
    'taum',
    'tau0',
    'offset',
    'link',
)
BAD_SHAPE, NOT_FINITE, SINGULAR, NOT_ROTATION, OVERFLOW = 100, 200, 300, 400, 500

# A rotation matrix R is accepted when every entry of R'R - I is at most ROTATION_TOL in
# magnitude and det R > 0.  Inside: a float32 round trip (~1e-7), the intermediate stages of an
# explicit integrator (R + h R [w]x is (h |w|)^2 off: RK4 at 5 ms and 1 rad/s, ~6e-6; up to
# h |w| ~ 0.03); outside: a scale, shear or reflection of 0.1 % or more.  Used as given, not
# re-orthonormalized.  spart_ros.core.checks uses the same test and constant.
ROTATION_TOL = 1e-3
