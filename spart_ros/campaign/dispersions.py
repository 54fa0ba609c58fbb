"""
A campaign's dispersions: which parameters, from which distributions, and each run's draws.

In the campaign file, ``dispersions`` maps a parameter name (or a pattern of names, ``*`` and
``?`` as in file names: ``thrusters.*.direction``; each parameter it matches is drawn on its
own) to a distribution (:mod:`.distributions`) and how the draw changes the nominal value::

    dispersions:
      links.Spacecraft.inertia: {distribution: normal, std: 0.05, apply: scale, axes_std: 0.01}
      links.Spacecraft.com: {distribution: uniform, low: -0.01, high: 0.01}
      thrusters.*.direction: {distribution: truncated_normal, std: 0.005, low: 0, high: 0.015}
      settings.kp: {distribution: uniform, low: 0.9, high: 1.1, apply: scale}

``apply``: ``add`` (default: nominal + draw), ``scale`` (nominal * draw; a normal's mean is then
1 unless given) or ``set`` (the draw is the value; a normal needs its mean).  By kind
(:mod:`.parameters`):

- a value: drawn elementwise (a vector's parameters: one number for all, or one per element);
- an inertia: the draw (3,) applies to the principal moments, ``axes_std`` [rad] turns the
  principal axes (the std of each component of a rotation vector); kept valid
  (:func:`~spart_ros.campaign.inertia.disperse_inertia`);
- a direction: the draw is the misalignment angle [rad] (``add`` only), about an axis at a
  uniform azimuth (:func:`~spart_ros.campaign.inertia.misalign`);
- a rotation (``initial.base_attitude``): the draw (3,) is a rotation vector [rad] (``add``).

Each run's draws depend on (seed, run index, parameter name) only (:func:`.distributions.stream`).
"""

from dataclasses import dataclass
import fnmatch
import math

import numpy as np

from .distributions import distribution, stream
from .inertia import disperse_inertia, misalign
from ..core.errors import InputError

__all__ = ['Dispersion', 'dispersions', 'draw', 'columns', 'APPLY']

APPLY = ('add', 'scale', 'set')
_KEYS = {'distribution', 'apply', 'axes_std', 'low', 'high', 'mean', 'std'}
_INERTIA_COLUMNS = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')


@dataclass(frozen=True)
class Dispersion:
    """
    One parameter's dispersion.

    ``parameter``: the :class:`~spart_ros.campaign.parameters.Parameter`; ``distribution``: a
    :class:`~spart_ros.campaign.distributions.Distribution`; ``apply``: one of :data:`APPLY`;
    ``axes_std``: an inertia's principal axes dispersion [rad]; ``pattern``: the campaign file's
    key it came from.
    """

    parameter: object
    distribution: object
    apply: str = 'add'
    axes_std: float = 0.0
    pattern: str = ''

    @property
    def name(self):
        return self.parameter.name

    def draw(self, seed, index):
        """
        Return (value, columns) of run ``index`` of a campaign of ``seed``.

        ``value``: the dispersed parameter (its nominal's shape); ``columns``: {table column:
        float}, what the table records of it.
        """
        p, rng = self.parameter, stream(seed, index, self.name)
        kind = p.kind
        if kind == 'inertia':
            value = disperse_inertia(
                p.nominal,
                lambda r: self.distribution.sample(r, (3,)),
                self.axes_std,
                rng,
                self.apply,
                self.name,
            )
            return value, _inertia_columns(self.name, value)
        if kind == 'direction':
            angle = float(self.distribution.sample(rng, ()))
            azimuth = 2.0 * math.pi * float(rng.random())
            value = misalign(p.nominal, angle, azimuth)
            return value, {f'{self.name}.angle': angle, f'{self.name}.azimuth': azimuth}
        x = self.distribution.sample(rng, p.nominal.shape)
        if kind == 'rotation':
            return x, _vector_columns(self.name, x, p.labels)
        value = (
            p.nominal + x if self.apply == 'add' else p.nominal * x if self.apply == 'scale' else x
        )
        return np.asarray(value, dtype=float), _vector_columns(self.name, value, p.labels)


def _vector_columns(name, value, labels):
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return {name: float(a)}
    return {f'{name}[{label}]': float(v) for label, v in zip(labels, a.reshape(-1))}


def _inertia_columns(name, inertia):
    index = {
        'ixx': (0, 0),
        'iyy': (1, 1),
        'izz': (2, 2),
        'ixy': (0, 1),
        'ixz': (0, 2),
        'iyz': (1, 2),
    }
    return {f'{name}.{k}': float(inertia[index[k]]) for k in _INERTIA_COLUMNS}


def columns(dispersion_list):
    """Return the table's columns of the draws of ``dispersion_list``, in order."""
    out = []
    for d in dispersion_list:
        p = d.parameter
        if p.kind == 'inertia':
            out += [f'{p.name}.{k}' for k in _INERTIA_COLUMNS]
        elif p.kind == 'direction':
            out += [f'{p.name}.angle', f'{p.name}.azimuth']
        elif p.nominal.ndim == 0:
            out.append(p.name)
        else:
            out += [f'{p.name}[{label}]' for label in p.labels]
    return out


def _suggest(pattern, names):
    head = pattern.split('.', 1)[0]
    near = sorted(
        {
            n.rsplit('.', 1)[0] + '.*' if n.count('.') > 1 else n
            for n in names
            if n.startswith(head + '.')
        }
    )
    return near[:12] or sorted({n.split('.', 1)[0] + '.' for n in names})


def dispersions(spec, params):
    """
    Return the :class:`Dispersion` list of a campaign file's ``dispersions`` mapping ``spec``.

    ``params``: {name: Parameter} of the scenario (:func:`~spart_ros.campaign.parameters.
    parameters`).  In the order of ``params``; InputError naming a pattern that matches no
    parameter (with names that exist), a parameter two patterns match, or a bad distribution.
    """
    if spec is None:
        return []
    if not isinstance(spec, dict):
        raise InputError('dispersions: expected a mapping {parameter: {distribution: ...}}')
    chosen = {}
    for pattern, item in spec.items():
        where = f'dispersions.{pattern}'
        if not isinstance(item, dict):
            raise InputError(f'{where}: expected a mapping {{distribution: ..., ...}}')
        unknown = sorted(set(item) - _KEYS)
        if unknown:
            raise InputError(f'{where}: unknown keys {unknown} (known: {sorted(_KEYS)})')
        matched = [n for n in params if fnmatch.fnmatchcase(n, str(pattern))]
        if not matched:
            raise InputError(
                f'{where}: no parameter of this scenario is called so; some that are: '
                f'{_suggest(str(pattern), list(params))}'
            )
        apply = item.get('apply', 'add')
        if apply not in APPLY:
            raise InputError(f'{where}: apply must be one of {list(APPLY)}, got {apply!r}')
        if apply == 'set' and item.get('distribution') != 'uniform' and 'mean' not in item:
            raise InputError(f'{where}: apply: set needs the mean of the value')
        dist = distribution(where, item, default_mean=1.0 if apply == 'scale' else 0.0)
        axes_std = float(item.get('axes_std', 0.0))
        if not math.isfinite(axes_std) or axes_std < 0:
            raise InputError(f'{where}: axes_std must be a number of radians >= 0')
        for name in matched:
            p = params[name]
            if name in chosen:
                raise InputError(
                    f'{name} is dispersed twice (by {chosen[name].pattern!r} and {pattern!r})'
                )
            if p.kind in ('direction', 'rotation') and apply != 'add':
                raise InputError(
                    f'{where}: {name} is a {p.kind}: its draw is an angle [rad] added to the '
                    'nominal (apply: add)'
                )
            if 'axes_std' in item and p.kind != 'inertia':
                raise InputError(f'{where}: axes_std is for an inertia, {name} is not one')
            shape = (3,) if p.kind in ('inertia', 'rotation') else ()
            shape = shape if p.kind != 'value' else p.nominal.shape
            for key, value in dist.params:
                dist.param(key, shape)  # InputError: a list of the wrong length
            chosen[name] = Dispersion(p, dist, apply, axes_std, str(pattern))
    return [chosen[n] for n in params if n in chosen]


def draw(dispersion_list, seed, index):
    """
    Return (values, columns) of run ``index``: the dispersed parameters and the table's record.

    ``dispersion_list``: :class:`Dispersion` list; ``seed``: the campaign's.  ``values``:
    {parameter name: value}; ``columns``: {column: float}, in :func:`columns`' order.
    """
    values, cols = {}, {}
    for d in dispersion_list:
        values[d.name], c = d.draw(seed, index)
        cols.update(c)
    return values, cols
