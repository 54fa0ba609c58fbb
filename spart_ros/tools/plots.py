"""
PNG plots of a closed-loop run (matplotlib, Agg backend: no display needed).

Every function takes time series as numpy arrays (time in seconds of simulated time, one row per
sample) and writes one PNG; nothing here knows ROS.
"""

import numpy as np

__all__ = [
    'joint_tracking',
    'efforts',
    'base_motion',
    'relative_orbit',
    'reaction_wheels',
    'thrusters',
    'capture_progress',
    'grasp_impulse',
    'capture_rates',
]

#: a capture's phases and their colours in the plots
PHASE_COLOURS = {
    'approach': 'tab:blue',
    'synchronise': 'tab:orange',
    'grasp': 'tab:red',
    'detumble': 'tab:green',
    'done': 'tab:gray',
    'aborted': 'black',
}


def _figure(rows, title, height=2.0):
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, 1, figsize=(9, 1.2 + height * rows), sharex=True, squeeze=False)
    fig.suptitle(title)
    return plt, fig, axes[:, 0]


def _save(plt, fig, axes, path):
    axes[-1].set_xlabel('simulated time [s]')
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def joint_tracking(path, title, names, t, q, t_ref, q_ref, t_err, err):
    """
    Measured positions ``q`` (len(t), n) and reference ``q_ref`` (len(t_ref), n) per joint.

    The tracking error ``err`` (len(t_err), n) [rad or m].
    """
    plt, fig, axes = _figure(len(names) + 1, title, height=1.6)
    for k, name in enumerate(names):
        axes[k].plot(t, q[:, k], label='measured')
        axes[k].plot(t_ref, q_ref[:, k], '--', label='reference')
        axes[k].set_ylabel(name, fontsize=8)
    axes[0].legend(loc='upper right', fontsize=8)
    for k, name in enumerate(names):
        axes[-1].plot(t_err, err[:, k], label=name)
    axes[-1].set_ylabel('error [rad]')
    axes[-1].legend(loc='upper right', fontsize=7, ncol=4)
    _save(plt, fig, axes, path)


def efforts(path, title, names, t, tau):
    """Commanded efforts ``tau`` (len(t), n) [N m or N]."""
    plt, fig, axes = _figure(1, title, height=3.0)
    for k, name in enumerate(names):
        axes[0].plot(t, tau[:, k], label=name)
    axes[0].set_ylabel('effort [N m]')
    axes[0].legend(loc='upper right', fontsize=7, ncol=4)
    _save(plt, fig, axes, path)


def base_motion(path, title, t, rpy_deg, t_momentum=None, momentum=None):
    """
    Plot the base attitude and, when given, the change of the system momentum to ``path``.

    Base attitude: roll, pitch, yaw in degrees, (len(t), 3). The change of the system momentum [L
    about the origin; p] since the start: (len(t_momentum), 6).
    """
    rows = 1 if momentum is None else 3
    plt, fig, axes = _figure(rows, title, height=2.2)
    for k, label in enumerate(('roll', 'pitch', 'yaw')):
        axes[0].plot(t, rpy_deg[:, k], label=label)
    axes[0].set_ylabel('base attitude [deg]')
    axes[0].legend(loc='upper right', fontsize=8)
    if momentum is not None:
        d = np.asarray(momentum) - np.asarray(momentum)[0]
        for k, label in enumerate(('x', 'y', 'z')):
            axes[1].plot(t_momentum, d[:, k], label=f'L{label}')
            axes[2].plot(t_momentum, d[:, 3 + k], label=f'p{label}')
        axes[1].set_ylabel('dL about origin\n[N m s]')
        axes[2].set_ylabel('dp [N s]')
        axes[1].legend(loc='upper right', fontsize=8)
        axes[2].legend(loc='upper right', fontsize=8)
    _save(plt, fig, axes, path)


def relative_orbit(path, title, t, position, t_free, free, target=(0.0, 0.0, 0.0)):
    """
    Plot the base's path in the LVLH frame beside the free drift (Clohessy-Wiltshire) to ``path``.

    ``position`` (len(t), 3) and ``free`` (len(t_free), 3): LVLH positions [m] (Hill's axes: x
    radial, y along-track, z orbit normal) of the controlled base and of the same start drifting
    freely; ``target`` (3,): the station-keeping point.  Top: the orbit plane (along-track
    horizontal, radial up, the convention of relative-orbit plots); below: the distance to the
    target over time.
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    target = np.asarray(target, dtype=float)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 7.5), gridspec_kw={'height_ratios': [3, 2]})
    fig.suptitle(title)
    ax.plot(free[:, 1], free[:, 0], '--', color='tab:gray', label='free drift (CW, no thrust)')
    ax.plot(position[:, 1], position[:, 0], color='tab:blue', label='station keeping')
    ax.plot([target[1]], [target[0]], 'x', color='tab:red', markersize=10, label='target')
    ax.plot([position[0, 1]], [position[0, 0]], 'o', color='tab:blue', markersize=4)
    ax.set_xlabel('along-track y [m]')
    ax.set_ylabel('radial x [m]')
    ax.set_aspect('equal', adjustable='datalim')
    ax.legend(loc='best', fontsize=8)
    ax.grid(True, alpha=0.3)
    ax2.plot(t, np.linalg.norm(position - target, axis=1) * 100, label='station keeping')
    ax2.plot(
        t_free,
        np.linalg.norm(free - target, axis=1) * 100,
        '--',
        color='tab:gray',
        label='free drift',
    )
    ax2.set_ylabel('distance to the target [cm]')
    ax2.set_xlabel('simulated time [s]')
    ax2.set_yscale('log')
    ax2.legend(loc='best', fontsize=8)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def reaction_wheels(path, title, names, t, speeds, momentum):
    """
    Plot the wheels' speeds (len(t), n_w) [rad/s] and their momentum (len(t), 3) [N m s].

    The momentum relative to the base, in the base link frame.
    """
    plt, fig, axes = _figure(2, title, height=2.4)
    for k, name in enumerate(names):
        axes[0].plot(t, speeds[:, k], label=name)
    axes[0].set_ylabel('wheel speed [rad/s]')
    axes[0].legend(loc='upper right', fontsize=7, ncol=4)
    for k, label in enumerate('xyz'):
        axes[1].plot(t, momentum[:, k], label=f'h{label}')
    axes[1].plot(t, np.linalg.norm(momentum, axis=1), 'k--', label='|h|')
    axes[1].set_ylabel('wheel momentum\n[N m s]')
    axes[1].legend(loc='upper right', fontsize=7, ncol=4)
    _save(plt, fig, axes, path)


def thrusters(path, title, names, t, forces, propellant):
    """
    Plot the thrusters' firings (len(t), n_t) [N] as a raster and the propellant used [kg].

    ``propellant`` (len(t),): cumulative.
    """
    plt, fig, axes = _figure(2, title, height=2.6)
    forces = np.asarray(forces)
    for k in range(forces.shape[1]):
        on = forces[:, k] > 0
        axes[0].fill_between(t, k - 0.4, k + 0.4, where=on, step='post', color='tab:orange')
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names, fontsize=6)
    axes[0].set_ylabel('firing')
    axes[1].plot(t, np.asarray(propellant) * 1e3)
    axes[1].set_ylabel('propellant used [g]')
    _save(plt, fig, axes, path)


def _phases(ax, t, phases):
    """Shade the phases of a capture (``phases`` (len(t),) names) on ``ax``."""
    phases = list(phases)
    k = 0
    while k < len(t):
        j = k
        while j + 1 < len(t) and phases[j + 1] == phases[k]:
            j += 1
        colour = PHASE_COLOURS.get(phases[k])
        if colour is not None:
            ax.axvspan(t[k], t[j], color=colour, alpha=0.08, lw=0)
        k = j + 1


def capture_progress(path, title, t, phases, distance, angle, linear, angular, tolerances=None):
    """
    Plot a capture's approach: distance and angle to the grasp, relative twist, per phase.

    ``t`` (k,) [s]; ``phases`` (k,); ``distance`` [m], ``angle`` [rad], ``linear`` [m/s],
    ``angular`` [rad/s] (k,) each (not drawn in the phases that hold the target: detumble, done);
    ``tolerances``: (position, orientation, linear, angular) drawn as dashed lines, or None.
    """
    plt, fig, axes = _figure(2, title, height=2.4)
    phases = np.asarray(phases)
    held = np.isin(phases, ('detumble', 'done'))  # the target held: nothing to approach
    for name, colour in PHASE_COLOURS.items():
        sel = (phases == name) & ~held
        if sel.any():
            axes[0].semilogy(
                t[sel], np.maximum(distance[sel], 1e-6), '.', ms=2, color=colour, label=name
            )
            axes[1].semilogy(t[sel], np.maximum(linear[sel], 1e-7), '.', ms=2, color=colour)
    axes[0].semilogy(
        t[~held],
        np.maximum(angle[~held], 1e-6),
        ':',
        color='tab:purple',
        lw=1,
        label='angle [rad]',
    )
    axes[1].semilogy(
        t[~held],
        np.maximum(angular[~held], 1e-7),
        ':',
        color='tab:purple',
        lw=1,
        label='angular [rad/s]',
    )
    if tolerances is not None:
        axes[0].axhline(tolerances[0], ls='--', color='k', lw=0.8, label='tolerance')
        axes[1].axhline(tolerances[2], ls='--', color='k', lw=0.8)
    for ax in axes:
        _phases(ax, t, phases)
    axes[0].set_ylabel('to the grasp [m]')
    axes[1].set_ylabel('relative speed [m/s]')
    axes[0].legend(loc='upper right', fontsize=7, ncol=4)
    axes[1].legend(loc='upper right', fontsize=7)
    _save(plt, fig, axes, path)


def grasp_impulse(path, title, t, linear, angular, t_grasp, impulse=None):
    """
    Plot the target's momentum around the grasp: ``linear`` [N s], ``angular`` [N m s] (k, 3).

    ``t_grasp`` [s]: the weld; ``impulse`` (6,) [angular; linear] the plant reports, or None.
    """
    plt, fig, axes = _figure(2, title, height=2.2)
    for ax, values, unit in ((axes[0], linear, 'N s'), (axes[1], angular, 'N m s')):
        for k, axis in enumerate('xyz'):
            ax.plot(t, values[:, k], label=axis)
        ax.axvline(t_grasp, color='tab:red', ls='--', lw=1, label='weld')
        ax.set_ylabel(f'momentum [{unit}]')
    if impulse is not None:
        axes[0].set_title(
            f'impulse at the grasp: {np.linalg.norm(impulse[3:6]):.3g} N s, '
            f"{np.linalg.norm(impulse[0:3]):.3g} N m s (the plant's)",
            fontsize=9,
        )
    axes[0].legend(loc='upper right', fontsize=7, ncol=4)
    _save(plt, fig, axes, path)


def capture_rates(
    path, title, t_base, base_rate, t_target, target_rate, t_joints, joint_rate, t_grasp=None
):
    """
    Plot the combined system's rates: the base's, the target's, the largest joint rate.

    All [deg/s] against their own times [s]; ``t_grasp``: the weld (a dashed line), or None.
    """
    plt, fig, axes = _figure(2, title, height=2.2)
    axes[0].plot(t_base, base_rate, label='base')
    axes[0].plot(t_target, target_rate, label='target')
    axes[0].set_ylabel('angular rate [deg/s]')
    axes[1].plot(t_joints, joint_rate, color='tab:purple')
    axes[1].set_ylabel('largest joint rate [deg/s]')
    for ax in axes:
        if t_grasp is not None:
            ax.axvline(t_grasp, color='tab:red', ls='--', lw=1)
    axes[0].legend(loc='upper right', fontsize=8)
    _save(plt, fig, axes, path)
