"""
Effort commands as ros2_control's effort controller takes them.

``effort_controllers/JointGroupEffortController`` (and ``forward_command_controller`` with
``interface_name: effort``) reads std_msgs/Float64MultiArray on ``<controller>/commands``:
``data[i]`` is the effort of the i-th joint of its ``joints`` parameter.  A message of the
wrong length, or with a NaN or infinite value, is not applied; the hardware keeps the last
command it was given (there is no timeout).  Joints the controller does not claim keep
effort 0.
"""

import numpy as np

from ..core.errors import InputError

__all__ = ['EffortCommand', 'CommandRejected']


class CommandRejected(InputError):
    """
    A command message that is not applied.

    The message says why; ``kind`` is 'length' or 'non-finite', e.g. to throttle logs per kind.
    """

    def __init__(self, message, kind):
        super().__init__(message)
        self.kind = kind


class EffortCommand:
    """
    Maps effort commands in a controller's joint order onto a plant's joint order.

    ``controller_joints``: the controller's ``joints`` (order of the command values);
    ``plant_joints``: the plant's joint order.  :meth:`accept` validates one message's
    values and returns the full held effort vector (plant order); a rejected message raises
    :class:`CommandRejected` and leaves the held efforts unchanged.
    """

    def __init__(self, controller_joints, plant_joints):
        self.joints = tuple(controller_joints)
        plant_joints = list(plant_joints)
        if not self.joints:
            raise InputError('the effort controller needs at least one joint')
        dup = sorted({j for j in self.joints if self.joints.count(j) > 1})
        if dup:
            raise InputError(f'joints listed twice in the controller joints: {dup}')
        unknown = [j for j in self.joints if j not in plant_joints]
        if unknown:
            raise InputError(
                f'controller joints {unknown} are not moving joints of the robot '
                f'(moving joints: {plant_joints})'
            )
        self._index = np.array([plant_joints.index(j) for j in self.joints], dtype=np.intp)
        self.efforts = np.zeros(len(plant_joints))
        self.accepted = 0
        self.rejected = 0

    def accept(self, values):
        """
        Apply one command: ``values``, a sequence of floats in the controller's order.

        Returns the held efforts (plant order, this object's array).
        """
        v = np.asarray(values, dtype=float).reshape(-1)
        if v.size != len(self.joints):
            self.rejected += 1
            raise CommandRejected(
                f'expected {len(self.joints)} values for joints {list(self.joints)}, got {v.size}',
                'length',
            )
        finite = np.isfinite(v)
        if not finite.all():
            self.rejected += 1
            bad = [self.joints[i] for i in np.flatnonzero(~finite)]
            raise CommandRejected(
                f'non-finite value for joints {bad} in {v.tolist()}', 'non-finite'
            )
        self.efforts[self._index] = v
        self.accepted += 1
        return self.efforts

    def clear(self):
        """Zero every held effort (e.g. after a reset)."""
        self.efforts[:] = 0.0
