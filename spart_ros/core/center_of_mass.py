"""Centre of mass of the whole system (SPART: Center_of_Mass)."""

from . import _checks as chk
from .errors import SingularModelError


@chk.checked
def center_of_mass(r0, rL, robot):
    """
    Mass-weighted mean of the base and link CoM vectors.

    (SPART: Center_of_Mass)

    ``r0`` (3,) and ``rL`` (3, n), inertial frame.  Pass positions for the
    system CoM, CoM velocities (t0[3:6], tL[3:6]) for its velocity, or CoM
    accelerations for its acceleration.  Returns (3,).
    """
    m0 = robot.base_link.mass
    total = m0 + sum(robot.masses)
    if not robot.symbolic and float(total) <= 0:
        raise SingularModelError(
            f'robot {robot.name!r} has zero total mass: its centre of mass is undefined'
        )
    return (r0 * m0 + rL @ robot.masses) / total
