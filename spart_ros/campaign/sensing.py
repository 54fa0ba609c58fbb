"""
The plant as the controller knows it: the nominal model, and sensors with noise.

:class:`SensedPlant` wraps a plant for :func:`~spart_ros.sim.closed_loop.simulate`: the
controller is built on its ``robot`` / ``description`` (the nominal robot, when the plant's is
dispersed) and reads its joint states and the base's odometry with white Gaussian noise added
at every reading (``noise:`` in the campaign file, standard deviations)::

    noise:
      joint_positions: 1.0e-5        # rad (one number, or {joint: std})
      joint_velocities: 1.0e-4       # rad/s
      base_position: 1.0e-3          # m, in the world (LVLH) frame (one number or 3)
      base_attitude: 1.0e-4          # rad, a rotation vector in the base link frame
      base_linear_velocity: 1.0e-4   # m/s, in the base link frame
      base_angular_velocity: 1.0e-5  # rad/s

With noise, what really happened (the plant's state at every tick) is kept apart
(:meth:`SensedPlant.truth`): the metrics are computed on it, not on what the controller read.
The noise of a run is drawn from its own stream (seed, index, ``'noise'``).
"""

from dataclasses import dataclass

import numpy as np

from .inertia import rotation_matrix
from ..core.errors import InputError

__all__ = ['Noise', 'noise', 'SensedPlant', 'Truth', 'NOISE_KEYS']

NOISE_KEYS = (
    'joint_positions',
    'joint_velocities',
    'base_position',
    'base_attitude',
    'base_linear_velocity',
    'base_angular_velocity',
)


@dataclass(frozen=True)
class Noise:
    """
    Standard deviations of the readings' noise (each a tuple, or () for none).

    ``joint_positions``, ``joint_velocities``: {joint: std} as a tuple of pairs; the base's (3,)
    each: ``base_position`` (world), ``base_attitude`` (a rotation vector in b),
    ``base_linear_velocity``, ``base_angular_velocity`` (in b).
    """

    joint_positions: tuple = ()
    joint_velocities: tuple = ()
    base_position: tuple = ()
    base_attitude: tuple = ()
    base_linear_velocity: tuple = ()
    base_angular_velocity: tuple = ()

    @property
    def active(self):
        return any(getattr(self, k) for k in NOISE_KEYS)


def _std(where, value, n=None):
    a = np.asarray(value, dtype=float).reshape(-1)
    if not np.all(np.isfinite(a)) or np.any(a < 0) or (n and a.size not in (1, n)):
        raise InputError(
            f'{where}: expected a standard deviation >= 0'
            + (f' or {n} of them' if n else '')
            + f', got {value!r}'
        )
    return tuple(float(v) for v in np.broadcast_to(a, (n,) if n else a.shape))


def noise(spec, joint_names, floating):
    """
    Return the :class:`Noise` of a campaign file's ``noise`` mapping ``spec``.

    ``joint_names``: the joints a joint noise may name (a number applies to each of them);
    ``floating``: whether the base is floating (odometry noise needs one).  InputError naming a
    bad key or value.
    """
    if not spec:
        return Noise()
    if not isinstance(spec, dict):
        raise InputError(f'noise: expected a mapping of {list(NOISE_KEYS)}')
    unknown = sorted(set(spec) - set(NOISE_KEYS))
    if unknown:
        raise InputError(f'noise: unknown keys {unknown} (known: {list(NOISE_KEYS)})')
    out = {}
    for key, value in spec.items():
        where = f'noise.{key}'
        if key.startswith('joint_'):
            if isinstance(value, dict):
                extra = sorted(set(value) - set(joint_names))
                if extra:
                    raise InputError(f'{where}: no joints {extra} (the joints: {joint_names})')
                pairs = [(str(j), _std(f'{where}.{j}', v, 1)[0]) for j, v in value.items()]
            else:
                s = _std(where, value, 1)[0]
                pairs = [(j, s) for j in joint_names]
            out[key] = tuple(pairs)
        else:
            if not floating:
                raise InputError(f'{where}: odometry noise needs a floating base')
            out[key] = _std(where, value, 3)
    return Noise(**out)


@dataclass
class Truth:
    """
    The plant's own state at every control tick (the rows of the run's series).

    ``q``, ``qd`` (k, n) in the run's ``joint_names`` order; ``base_position`` (k, 3),
    ``base_rotation`` (k, 3, 3), ``base_twist`` (k, 6) [v_b; w_b].
    """

    q: np.ndarray
    qd: np.ndarray
    base_position: np.ndarray
    base_rotation: np.ndarray
    base_twist: np.ndarray


class SensedPlant:
    """
    A plant seen through the controller's model and sensors (see the module docstring).

    ``plant``: a MuJoCo or RK4 plant; ``noise``: a :class:`Noise` (None: exact readings);
    ``rng``: the noise's generator; ``robot``, ``description``: what the controller is built on
    (None: the plant's own).  Everything else is the plant's.
    """

    def __init__(self, plant, noise=None, rng=None, robot=None, description=None):
        self._plant = plant
        self._robot, self._description = robot, description
        self._noise = noise if noise is not None and noise.active else None
        self._rng = rng
        self._rows = [] if self._noise is not None else None
        if self._noise is not None:
            names = list(plant.joint_names)
            self._q_std = self._joint_std(names, self._noise.joint_positions)
            self._qd_std = self._joint_std(names, self._noise.joint_velocities)
            n = self._noise
            self._base_std = tuple(
                np.asarray(s, dtype=float) if s else None
                for s in (
                    n.base_position,
                    n.base_attitude,
                    n.base_linear_velocity,
                    n.base_angular_velocity,
                )
            )

    @staticmethod
    def _joint_std(names, pairs):
        if not pairs:
            return None
        std = np.zeros(len(names))
        for joint, s in pairs:
            std[names.index(joint)] = s
        return std

    def __getattr__(self, name):
        if name.startswith('__') or name == '_plant':
            raise AttributeError(name)
        return getattr(self._plant, name)

    @property
    def plant(self):
        return self._plant

    @property
    def robot(self):
        return self._robot if self._robot is not None else self._plant.robot

    @property
    def description(self):
        if self._description is not None:
            return self._description
        return self._plant.description

    def _noisy(self, x, std):
        if std is None:
            return x
        return x + std * self._rng.standard_normal(np.shape(x))

    def joint_positions(self):
        """Return the joint positions (n_plant,) as read (with noise)."""
        q = self._plant.joint_positions()
        return q if self._noise is None else self._noisy(q, self._q_std)

    def joint_velocities(self):
        """Return the joint velocities (n_plant,) as read (with noise)."""
        qd = self._plant.joint_velocities()
        return qd if self._noise is None else self._noisy(qd, self._qd_std)

    def base_link_state(self):
        """Return (R_b, p_b, v_b, w_b) of the base link as the odometry reads it (with noise)."""
        state = self._plant.base_link_state()
        if self._noise is None:
            return state
        R, p, v, w = state
        sp, sa, sv, sw = self._base_std
        if sa is not None:
            R = R @ rotation_matrix(sa * self._rng.standard_normal(3))
        return R, self._noisy(p, sp), self._noisy(v, sv), self._noisy(w, sw)

    def _record(self):
        p = self._plant
        R, pos, v, w = p.base_link_state()
        self._rows.append(
            (
                np.array(p.joint_positions()),
                np.array(p.joint_velocities()),
                np.array(pos),
                np.array(R),
                np.concatenate([v, w]),
            )
        )

    def step(self, steps=1):
        """Step the plant ``steps`` physics steps (keeping the state before them, with noise)."""
        if self._rows is not None:
            self._record()
        self._plant.step(steps)

    def truth(self, joint_names):
        """
        Return the :class:`Truth` of the run (None without noise: the readings are the truth).

        ``joint_names``: the run's joints (their order in the result).  Call once, after the run
        (the state it ended in is the last row).
        """
        if self._rows is None:
            return None
        self._record()
        names = list(self._plant.joint_names)
        read = [names.index(n) for n in joint_names]
        q, qd, pos, R, tw = (np.array(x) for x in zip(*self._rows))
        return Truth(q[:, read], qd[:, read], pos, R, tw)
