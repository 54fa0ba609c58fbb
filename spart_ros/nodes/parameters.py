"""
Declarative node parameters.

One table per node, from which it declares, validates, documents and changes its parameters
(ros2_controllers' generate_parameter_library, in Python).

A table is a dict name -> :class:`Param` (name, type, default, range or choices, description,
run-time or structural).  From it:

- :func:`declare` declares every parameter on a node (with its description, range and
  read-only flag in the ParameterDescriptor, so ``ros2 param describe`` shows them) and returns
  the validated values; an invalid value is a :class:`~.config.ConfigError` naming the
  parameter (the node exits with code 2 and that one line);
- :func:`watch` validates ``ros2 param set``: a run-time parameter is checked and handed to the
  node (applied between two ticks: rclpy runs the callback between two callbacks of the
  node), a bad value is refused with the reason; a structural one is refused unless the node
  says it may change now (e.g. a lifecycle node while unconfigured: read at configure);
- :mod:`.parameter_docs` writes the node's reference page of the documentation site from it,
  and test/test_parameters.py checks config/*.yaml against the tables.

Numbers are declared with dynamic typing and converted here: ``kp: 400`` in a YAML file is
400.0 (rclpy would refuse an integer for a double).  Types: 'bool', 'integer', 'double',
'string', their '_array's, and 'number_or_list' (one number, or one per joint).
"""

import array
from dataclasses import dataclass
import difflib
import math
import traceback

from .config import ConfigError
from .parameter_names import NAMES

__all__ = ['Param', 'table', 'validate', 'declare', 'values', 'watch', 'constraints', 'TYPES']

TYPES = (
    'bool',
    'integer',
    'double',
    'string',
    'bool_array',
    'integer_array',
    'double_array',
    'string_array',
    'number_or_list',
)


@dataclass(frozen=True)
class Param:
    """
    One parameter.

    ``default`` None: declared without a value (unset; the description says what unset means).
    ``low``/``high``: inclusive bounds of a number or of each element (``open_low``: low excluded);
    ``finite``: numbers must be finite (else +-inf is allowed within the bounds); ``choices``:
    allowed values (of each element for arrays); ``length``: exact array length; ``dynamic``:
    changeable at run time; ``example``: shown in YAML comments and docs for an unset parameter.
    """

    name: str
    default: object
    description: str
    type: str = ''
    low: float = None
    high: float = None
    open_low: bool = False
    finite: bool = True
    choices: tuple = ()
    length: int = None
    dynamic: bool = False
    example: object = None

    def __post_init__(self):
        if not self.type:
            object.__setattr__(self, 'type', _infer(self.name, self.default))
        if self.type not in TYPES:
            raise ValueError(f'{self.name}: unknown parameter type {self.type!r}')

    @property
    def is_array(self):
        return self.type.endswith('_array')


def _infer(name, default):
    if isinstance(default, bool):
        return 'bool'
    if isinstance(default, int):
        return 'integer'
    if isinstance(default, float):
        return 'double'
    if isinstance(default, str):
        return 'string'
    if isinstance(default, (list, tuple)) and default:
        return _infer(name, default[0]) + '_array'
    raise ValueError(
        f'{name}: give the type of a parameter without a default (or with an empty list)'
    )


def table(*params, overrides=None):
    """
    Return a node's table: name -> :class:`Param`.

    ``overrides``: {name: default} of this node.
    """
    out = {}
    for p in params:
        if p.name in out:
            raise ValueError(f'parameter {p.name} twice in a table')
        out[p.name] = p
    for name, default in (overrides or {}).items():
        from dataclasses import replace

        out[name] = replace(out[name], default=default)
    return out


def _number(p, x, integer=False):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ConfigError(f'{p.name} must be a{"n integer" if integer else " number"}, got {x!r}')
    if integer and not isinstance(x, int):
        raise ConfigError(f'{p.name} must be an integer, got {x!r}')
    x = int(x) if integer else float(x)
    bad = math.isnan(x) or (p.finite and math.isinf(x))
    if p.low is not None and (x < p.low or (p.open_low and x == p.low)):
        bad = True
    if p.high is not None and x > p.high:
        bad = True
    if bad:
        raise ConfigError(f'{p.name} must be a {_range_text(p)}, got {x!r}')
    return x


def _range_text(p):
    kind = 'finite number' if p.finite else 'number'
    parts = []
    if p.low is not None:
        parts.append(f'{">" if p.open_low else ">="} {p.low:g}')
    if p.high is not None:
        parts.append(f'<= {p.high:g}')
    return kind + (' ' + ' and '.join(parts) if parts else '')


_SEQUENCES = (list, tuple, array.array)


def validate(p, value):
    """
    ``value`` checked against ``p`` and normalized (ints to floats for doubles, tuples to lists).

    None for an unset parameter. ConfigError naming the parameter.
    """
    if value is None:
        if p.default is not None:
            raise ConfigError(f'{p.name} must be set (it has no "unset" meaning)')
        return None
    t = p.type
    sequence = isinstance(value, _SEQUENCES)
    if sequence:
        value = list(value)  # rclpy gives arrays of numbers as array.array
    if t == 'number_or_list':
        items = value if sequence else [value]
        if not items:
            raise ConfigError(
                f'{p.name} must be a number or a non-empty list of numbers, got {value!r}'
            )
        out = [_number(p, x) for x in items]
        return out if sequence else out[0]
    if p.is_array:
        if not sequence:
            raise ConfigError(f'{p.name} must be a list ({t}), got {value!r}')
        items = [_scalar(p, t[: -len('_array')], x) for x in value]
        if p.length is not None and len(items) != p.length:
            raise ConfigError(
                f'{p.name} must hold {p.length} values, got {len(items)}: {list(value)}'
            )
        return items
    return _scalar(p, t, value)


def _scalar(p, t, x):
    if t == 'bool':
        if not isinstance(x, bool):
            raise ConfigError(f'{p.name} must be true or false, got {x!r}')
    elif t == 'string':
        if not isinstance(x, str):
            raise ConfigError(f'{p.name} must be a string, got {x!r}')
    else:
        x = _number(p, x, integer=t == 'integer')
    if p.choices and x not in p.choices:
        raise ConfigError(f'{p.name} must be one of {tuple(p.choices)}, got {x!r}')
    return x


def _descriptor(p, read_only):
    from rcl_interfaces.msg import ParameterDescriptor

    return ParameterDescriptor(
        description=p.description,
        read_only=read_only and not p.dynamic,
        dynamic_typing=True,
        additional_constraints=constraints(p),
    )


def constraints(p):
    """Return the range of ``p`` in words (the descriptor's ``additional_constraints``)."""
    parts = []
    if p.choices:
        parts.append('one of ' + ', '.join(str(c) for c in p.choices))
    if p.low is not None or p.high is not None:
        parts.append(_range_text(p))
    if p.length is not None:
        parts.append(f'{p.length} values')
    return '; '.join(parts)


def declare(node, params, structural_read_only=True, renamed=None):
    """
    Declare every parameter of the table ``params`` on ``node``.

    Returns {name: validated value} (None for unset ones). ConfigError naming the first invalid
    value.  The structural parameters are read-only (ROS refuses to set them) unless
    ``structural_read_only`` is False (a lifecycle node reads them at configure: :func:`watch`
    decides when they may change).

    What the node was given (parameter files, ``-p``) is checked too, where ROS would ignore it
    silently: ``renamed`` {old name: new name}: an old name given (and not the new one) is taken
    as the new one, warned (both given: ConfigError); a name that no spart_ros node has
    (:mod:`.parameter_names`; another node's is fine, a ``/**`` file is shared) is warned as
    ignored, with the nearest names of this node.
    """
    from rclpy.exceptions import ParameterUninitializedException

    given = _given(node)
    defaults = _renamed(node, params, renamed or {}, given)
    values = {}
    for name, p in params.items():
        node.declare_parameter(
            name, defaults.get(name, _ros_default(p)), _descriptor(p, structural_read_only)
        )
        try:
            raw = node.get_parameter(name).value
        except ParameterUninitializedException:
            raw = None
        values[name] = validate(p, raw)
    _warn_unknown(node, params, set(given) - set(params) - set(renamed or ()))
    return values


def _given(node):
    """
    {name: value} of the parameters given to ``node``.

    Parameter files, ``-p``: rclpy's overrides, what ``declare_parameter`` takes its values from.
    """
    return {name: p.value for name, p in getattr(node, '_parameter_overrides', {}).items()}


def _renamed(node, params, renamed, given):
    """
    Return {new name: value} of the old names given for renamed parameters (warned).

    ConfigError when both names are given.
    """
    out = {}
    for old, new in renamed.items():
        if old not in given:
            continue
        if new in given:
            raise ConfigError(f'{old} was renamed {new}: give {new} only (both given)')
        value = given[old]
        out[new] = list(value) if isinstance(value, (tuple, array.array)) else value
        node.get_logger().warning(
            f'parameter {old} is now {new}: {old}: {value!r} taken as {new}: {value!r}; rename '
            'it in your parameter file'
        )
    return out


def _warn_unknown(node, params, names):
    """
    Warn about the parameters given to ``node`` that no spart_ros node has.

    ROS ignores them.
    """
    unknown = sorted(
        n
        for n in names
        if n not in NAMES and not node.has_parameter(n) and not n.startswith('qos_overrides.')
    )
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = [
            p for p in params if name.startswith(p + '_') or p.startswith(name)
        ]  # kp_gain: kp
        close += [
            p
            for p in difflib.get_close_matches(name, list(params), n=2, cutoff=0.7)
            if p not in close
        ]
        close = close[:2]
        hints.append(name + (f' (did you mean {" or ".join(close)}?)' if close else ''))
    node.get_logger().warning(f'parameters of no spart_ros node, ignored: {", ".join(hints)}')


def _ros_default(p):
    d = p.default
    return list(d) if isinstance(d, tuple) else d


def values(node, params):
    """Return the current (validated) values of the table's parameters on ``node``."""
    return {name: validate(p, node.get_parameter(name).value) for name, p in params.items()}


def watch(node, params, apply, structural_ok=lambda: False):
    """
    Validate ``ros2 param set`` on ``node`` for the parameters of ``params``.

    A bad value is refused with the reason; a structural one unless ``structural_ok()``; the valid
    run-time ones go to ``apply({name: value})``, which may raise a SpartError (refused with its
    text: e.g. a value no law can use; any other exception is refused too, logged with its
    traceback: the node keeps running). Parameters not in the table are left to other callbacks.
    """
    from rcl_interfaces.msg import SetParametersResult

    from ..core.errors import SpartError

    def on_set(changed):
        updates = {}
        for param in changed:
            p = params.get(param.name)
            if p is None:
                continue
            try:
                value = validate(p, param.value)
            except ConfigError as err:
                return SetParametersResult(successful=False, reason=str(err))
            if p.dynamic:
                updates[p.name] = value
            elif not structural_ok():
                return SetParametersResult(
                    successful=False,
                    reason=(
                        f'{p.name} is structural: it takes a reconfigure (deactivate, cleanup, '
                        'set it, configure, activate)'
                        if hasattr(node, 'trigger_configure')
                        else f'{p.name} is structural: set it at start'
                    ),
                )
        if updates:
            try:
                apply(updates)
            except SpartError as err:
                return SetParametersResult(successful=False, reason=str(err))
            except Exception as err:  # noqa: BLE001 - a parameter change must never kill the node
                node.get_logger().error(
                    f'parameters {sorted(updates)} refused: unexpected {type(err).__name__}: {err}'
                    f'\n{traceback.format_exc()}'
                )
                return SetParametersResult(
                    successful=False, reason=f'unexpected {type(err).__name__}: {err}'
                )
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set)
    return on_set
