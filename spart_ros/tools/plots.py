"""
PNG plots of a closed-loop run (matplotlib, Agg backend: no display needed).

Every function takes time series as numpy arrays (time in seconds of simulated time, one row per
sample) and writes one PNG; nothing here knows ROS.
"""

import numpy as np

__all__ = ['joint_tracking', 'efforts', 'base_motion']


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
