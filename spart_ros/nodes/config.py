"""
Node configuration shared by the spart_ros nodes (pure Python, no rclpy).

:class:`ConfigError` is raised for a parameter with an invalid value (the message names the
parameter); :class:`ModelConfig` holds the parameters that shape a :class:`~.model.Model`.
"""

from dataclasses import dataclass, field

from ..core.checks import nonnegative
from ..core.errors import InputError, SpartError

__all__ = [
    'ConfigError',
    'package_path',
    'seconds_parameter',
    'ModelConfig',
    'BASE_MODES',
    'POINT_FRAMES',
    'BASE_COLUMNS',
]

BASE_MODES = ('fixed', 'floating')
POINT_FRAMES = ('link', 'com')
BASE_COLUMNS = ('ros', 'spart')


class ConfigError(SpartError, ValueError):
    """A node parameter with an invalid value (the message names the parameter)."""


def package_path(name, value):
    """
    Return a file parameter's path: ``package://<package>/<path>`` resolved in its share folder.

    Other values are returned as they are ('' included); ConfigError naming the parameter when the
    package is not installed.
    """
    prefix = 'package://'
    if not isinstance(value, str) or not value.startswith(prefix):
        return value
    package, _, rest = value[len(prefix) :].partition('/')
    from ament_index_python.packages import get_package_share_directory, PackageNotFoundError

    try:
        share = get_package_share_directory(package)
    except PackageNotFoundError:
        raise ConfigError(f'{name}: package {package!r} of {value!r} is not installed') from None
    import os

    return os.path.join(share, rest)


def seconds_parameter(name, value, infinite=False, note=''):
    """
    Return the node parameter ``name``, a duration in seconds >= 0 (finite unless ``infinite``).

    As a float; ConfigError naming it (and ``note``, e.g. what 0 means) for anything else.
    """
    try:
        return nonnegative(name, value, infinite=infinite)
    except InputError:
        raise ConfigError(
            f'{name} must be a {"" if infinite else "finite "}number of seconds >= 0{note}, '
            f'got {value}'
        ) from None


@dataclass
class ModelConfig:
    """Node parameters that depend on the model (checked when a model is built)."""

    base: str = 'fixed'
    jacobian_links: list = field(default_factory=list)
    jacobian_offsets: list = field(default_factory=list)
    jacobian_point_frame: str = 'link'
    jacobian_base_columns: str = 'ros'
    imu_link: str = ''
    strict: bool = False
    jacobians: bool = True  # the dynamics node's Jacobian specs (a controller needs none)
    joint_dynamics: bool = True  # the joints' declared damping, friction, armature in ID/FD
    joint_dynamics_file: str = ''  # a YAML file of joint dynamics overrides ('' = the URDF's)
    actuators_file: str = ''  # the base's actuators: their reaction wheels are locked (arm model)

    def check(self):
        if self.base not in BASE_MODES:
            raise ConfigError(f'base must be one of {BASE_MODES}, got {self.base!r}')
        if self.jacobian_point_frame not in POINT_FRAMES:
            raise ConfigError(
                f'jacobian_point_frame must be one of {POINT_FRAMES}, '
                f'got {self.jacobian_point_frame!r}'
            )
        if self.jacobian_base_columns not in BASE_COLUMNS:
            raise ConfigError(
                f'jacobian_base_columns must be one of {BASE_COLUMNS}, '
                f'got {self.jacobian_base_columns!r}'
            )
        if len(self.jacobian_offsets) % 3:
            raise ConfigError(
                f'jacobian_offsets must hold 3 numbers per link (flattened [x, y, z, ...]), '
                f'got {len(self.jacobian_offsets)}'
            )
        return self
