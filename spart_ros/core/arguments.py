"""
SPART's standard argument names: what each one is, its shape and its frame.

The SPART-named functions (:mod:`spart_ros.spart` and the core modules under them) and the fast
path take the same arrays under the same names; a docstring that does not describe one of these
names means this (the reference shows the table; test/test_docstrings.py accepts these names as
documented).  ``n`` is ``robot.n_links_joints`` (links and joints, fixed ones included), ``n_q``
``robot.n_q`` (the joint variables); the inertial frame is the world; per-link arrays are
stacked on their last axis, link id ``k`` at index ``k - 1`` (see docs/conventions.md).
"""

__all__ = ['ARGUMENTS']

#: name -> (shape, meaning)
ARGUMENTS = {
    'robot': ('', 'the robot model, a :class:`~spart_ros.core.model.Robot`'),
    'R0': (
        '(3, 3)',
        "rotation of the base CoM frame (the base link's ``<inertial>`` frame) "
        'into the inertial frame',
    ),
    'r0': ('(3,)', 'position of the base CoM, inertial frame'),
    'qm': ('(n_q,)', 'joint positions (rad or m), ``robot.coordinates`` order'),
    'u0': (
        '(6,)',
        'base velocity: [angular velocity in the base CoM frame; velocity of the base '
        'CoM in the inertial frame]',
    ),
    'um': ('(n_q,)', 'joint velocities'),
    'u0dot': ('(6,)', 'base acceleration, the time derivative of ``u0``'),
    'umdot': ('(n_q,)', 'joint accelerations'),
    'RJ': ('(3, 3, n)', 'rotations of the joint frames into the inertial frame'),
    'RL': ('(3, 3, n)', 'rotations of the link CoM frames into the inertial frame'),
    'rJ': ('(3, n)', 'positions of the joint frames, inertial frame'),
    'rL': ('(3, n)', 'positions of the link CoMs, inertial frame'),
    'e': ('(3, n)', 'joint axes, inertial frame'),
    'g': ('(3, n)', "from each joint frame's origin to its link's CoM, inertial frame"),
    'Bij': ('(6, 6, n, n)', 'twist-propagation matrices between links'),
    'Bi0': ('(6, 6, n)', 'twist-propagation matrices from the base to each link'),
    'P0': ('(6, 6)', 'base twist-propagation matrix: ``t0 = P0 u0``'),
    'pm': ('(6, n)', 'joint twist-propagation vectors (zero columns for fixed joints)'),
    't0': ('(6,)', 'base twist [angular; CoM velocity], inertial frame'),
    'tL': ('(6, n)', 'link twists [angular; CoM velocity], inertial frame'),
    't0dot': ('(6,)', 'base twist rate'),
    'tLdot': ('(6, n)', 'link twist rates'),
    'I0': ('(3, 3)', 'base inertia about its CoM, inertial frame'),
    'Im': ('(3, 3, n)', 'link inertias about their CoMs, inertial frame'),
    'M0_tilde': ('(6, 6)', 'composite-body mass matrix of the base'),
    'Mm_tilde': ('(6, 6, n)', 'composite-body mass matrices of the links'),
    'H0': ('(6, 6)', 'base block of the generalized inertia matrix H'),
    'H0m': ('(6, n_q)', 'base-joint coupling block of H'),
    'Hm': ('(n_q, n_q)', 'joint block of H'),
    'C0': ('(6, 6)', 'base block of the convective inertia matrix C'),
    'C0m': ('(6, n_q)', 'base-joint block of C'),
    'Cm0': ('(n_q, 6)', 'joint-base block of C'),
    'Cm': ('(n_q, n_q)', 'joint block of C'),
    'wF0': ('(6,)', 'external wrench [torque; force] on the base at its CoM, inertial frame'),
    'wFm': (
        '(6, n)',
        'external wrenches [torque; force] on the links at their CoMs, inertial frame',
    ),
    'tau0': (
        '(6,)',
        'base generalized force: [torque in the base CoM frame; force in the inertial frame]',
    ),
    'taum': ('(n_q,)', 'joint efforts (N m or N)'),
    'gravity': (
        '(3,)',
        'gravity acceleration in the inertial frame (m/s^2), e.g. [0, 0, -9.81]; '
        'None or zero: none (SPART has no gravity term)',
    ),
}
