"""
The distributions a campaign draws from, and the random stream of each draw.

A draw depends only on (campaign seed, run index, parameter name): :func:`stream` gives the
generator of one parameter of one run (numpy's ``SeedSequence`` keyed by all three), so a run's
values are the same whichever worker runs it, in whatever order, and adding a dispersion to a
campaign leaves the others' values as they were.

Distributions (:func:`distribution` reads one from a campaign file's mapping):

- ``uniform``: ``low``, ``high``;
- ``normal``: ``mean``, ``std``;
- ``truncated_normal``: ``mean``, ``std``, ``low``, ``high`` (the normal restricted to
  [low, high], drawn by inverting its CDF: no rejection, so one uniform number per value).

Each parameter is a number or a list with one number per element of the value drawn (a vector:
a centre of mass, a joint vector); a number applies to every element.
"""

from dataclasses import dataclass
import hashlib

import numpy as np

from ..core.errors import InputError

__all__ = ['Distribution', 'distribution', 'stream', 'DISTRIBUTIONS']

#: the distributions and their parameters (all required, except ``mean``: see :func:`distribution`)
DISTRIBUTIONS = {
    'uniform': ('low', 'high'),
    'normal': ('mean', 'std'),
    'truncated_normal': ('mean', 'std', 'low', 'high'),
}


def stream(seed, index, name):
    """
    Return the random generator of parameter ``name`` in run ``index`` of a campaign of ``seed``.

    ``seed``, ``index``: integers >= 0; ``name``: the parameter's full name (a string).  The
    generator depends on the three only (PCG64 on a ``SeedSequence``).
    """
    key = int.from_bytes(hashlib.sha256(name.encode('utf-8')).digest()[:8], 'little')
    sequence = np.random.SeedSequence(entropy=int(seed), spawn_key=(int(index), key))
    return np.random.Generator(np.random.PCG64(sequence))


@dataclass(frozen=True)
class Distribution:
    """
    One distribution of values (see the module docstring).

    ``kind``: a key of :data:`DISTRIBUTIONS`; ``params``: {name: float or tuple of floats}.
    """

    kind: str
    params: tuple

    def param(self, name, shape):
        """Return parameter ``name`` broadcast to ``shape`` (InputError: a length mismatch)."""
        value = np.asarray(dict(self.params)[name], dtype=float)
        try:
            return np.broadcast_to(value, shape)
        except ValueError:
            raise InputError(
                f'{self.kind} {name}: expected a number or {int(np.prod(shape))} numbers (one per '
                f'element), got {value.size}'
            ) from None

    def sample(self, rng, shape=()):
        """
        Return values of shape ``shape`` drawn with the generator ``rng``.

        ``rng``: a ``numpy.random.Generator`` (:func:`stream`); ``shape``: a tuple.
        """
        shape = tuple(shape)
        if self.kind == 'uniform':
            low, high = self.param('low', shape), self.param('high', shape)
            return low + (high - low) * rng.random(shape)
        mean, std = self.param('mean', shape), self.param('std', shape)
        if self.kind == 'normal':
            return mean + std * rng.standard_normal(shape)
        return _truncated(
            rng.random(shape), mean, std, self.param('low', shape), self.param('high', shape)
        )

    def moments(self, shape=()):
        """
        Return (mean, variance) of the distribution, elementwise, of shape ``shape``.

        The exact values (the statistical tests compare samples with them).
        """
        if self.kind == 'uniform':
            low, high = self.param('low', shape), self.param('high', shape)
            return (low + high) / 2, (high - low) ** 2 / 12
        mean, std = self.param('mean', shape), self.param('std', shape)
        if self.kind == 'normal':
            return mean + 0 * std, std**2 + 0 * mean
        from scipy import stats

        a = (self.param('low', shape) - mean) / std
        b = (self.param('high', shape) - mean) / std
        m, v = stats.truncnorm.stats(a, b, loc=mean, scale=std, moments='mv')
        return np.asarray(m, dtype=float), np.asarray(v, dtype=float)

    def describe(self):
        """Return the distribution in words, e.g. ``normal(mean=0, std=0.01)``."""

        def fmt(v):
            return f'{v:g}' if isinstance(v, float) else '[' + ', '.join(f'{x:g}' for x in v) + ']'

        return f'{self.kind}(' + ', '.join(f'{k}={fmt(v)}' for k, v in self.params) + ')'


def _truncated(u, mean, std, low, high):
    """Inverse CDF of the normal(mean, std) truncated to [low, high] at the uniform numbers u."""
    from scipy.special import ndtr, ndtri

    a, b = (low - mean) / std, (high - mean) / std
    # in the upper tail the CDF is close to 1 and loses digits: mirror the interval there
    flip = a > -b
    a, b = np.where(flip, -b, a), np.where(flip, -a, b)
    pa, pb = ndtr(a), ndtr(b)
    x = ndtri(pa + u * (pb - pa))
    x = np.clip(x, a, b)  # rounding at the ends
    return mean + std * np.where(flip, -x, x)


def _number_or_list(where, name, value):
    if isinstance(value, (list, tuple)):
        if not value:
            raise InputError(f'{where}: {name} is an empty list')
        items = value
    else:
        items = [value]
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise InputError(
                f'{where}: {name} must be a finite number or a list of them, got {v!r}'
            )
        out.append(float(v))
    return tuple(out) if isinstance(value, (list, tuple)) else out[0]


def distribution(where, spec, default_mean=0.0):
    """
    Return the :class:`Distribution` of a campaign file's mapping ``spec``.

    ``spec``: ``{'distribution': kind, <its parameters>}`` (extra keys are the caller's: they are
    not read here); ``where``: the key it was read from, for messages; ``default_mean``: the mean
    of a normal or truncated normal that gives none.  InputError naming a missing or bad
    parameter (a negative std, low >= high, a truncation interval of zero probability).
    """
    kind = spec.get('distribution')
    if kind not in DISTRIBUTIONS:
        raise InputError(
            f'{where}: distribution must be one of {sorted(DISTRIBUTIONS)}, got {kind!r}'
        )
    params = {}
    for name in DISTRIBUTIONS[kind]:
        if name not in spec:
            if name == 'mean':
                params[name] = float(default_mean)
                continue
            raise InputError(f'{where}: {kind} needs {name!r} ({", ".join(DISTRIBUTIONS[kind])})')
        params[name] = _number_or_list(where, name, spec[name])
    arrays = {k: np.asarray(v, dtype=float) for k, v in params.items()}
    try:
        np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        raise InputError(
            f'{where}: the lists of {sorted(k for k, a in arrays.items() if a.ndim)} have '
            'different lengths'
        ) from None
    if 'std' in arrays and np.any(arrays['std'] < 0):
        raise InputError(f'{where}: std must be >= 0, got {params["std"]}')
    if 'low' in arrays and np.any(arrays['low'] >= arrays['high']):
        raise InputError(
            f'{where}: low must be below high, got low {params["low"]}, high {params["high"]}'
        )
    if kind == 'truncated_normal':
        if np.any(arrays['std'] <= 0):
            raise InputError(f'{where}: a truncated normal needs std > 0, got {params["std"]}')
        from scipy.special import ndtr

        a = (arrays['low'] - arrays['mean']) / arrays['std']
        b = (arrays['high'] - arrays['mean']) / arrays['std']
        if np.any(ndtr(np.minimum(b, -a)) - ndtr(np.minimum(a, -b)) <= 0):
            raise InputError(
                f'{where}: [low, high] lies too far in the tail of the normal (more than 37 std '
                'from the mean): no value can be drawn'
            )
    return Distribution(kind, tuple(params.items()))
