"""
Exception hierarchy of spart_ros.

Every error the library raises on purpose is a :class:`SpartError`, so a caller
(a ROS node, a script) can catch one type and report ``str(err)``, which always
names the problem: the link, joint, argument or value at fault.
"""


class SpartError(Exception):
    """Base class of every error raised on purpose by spart_ros."""


class ModelError(SpartError, ValueError):
    """The robot description is not a valid SPART model."""


class URDFError(ModelError):
    """The text is not URDF, or the URDF cannot be turned into a model."""


class TopologyError(ModelError):
    """The links do not form a single kinematic tree (cycle, several roots...)."""


class UnsupportedJointError(ModelError):
    """A joint type SPART cannot represent (planar, floating...)."""


class InertiaError(ModelError):
    """A mass or inertia tensor that is not physical."""


class SingularModelError(ModelError):
    """A model whose generalized inertia matrix is singular."""


class InputError(SpartError, ValueError):
    """A numeric input of the wrong shape or length, or not finite."""


class SpartWarning(UserWarning):
    """
    Base class of every warning spart_ros issues on purpose.

    A node turns them into log lines.
    """


class ModelWarning(SpartWarning):
    """
    The model loads, but something in it deserves a look.

    Massless links, normalized axes...
    """


class InertiaWarning(ModelWarning):
    """A mass or inertia that no rigid body has, used as given (``strict=True`` refuses it)."""


class MimicJointWarning(ModelWarning):
    """The model has mimic joints, which SPART's own functions treat as independent joints."""
