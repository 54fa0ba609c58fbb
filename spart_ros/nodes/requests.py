"""
Service requests (spart_interfaces ForwardDynamics / InverseDynamics) -> numpy.

With errors that name the joint, link or field at fault (pure Python, no rclpy).
"""

import numpy as np

from .conversions import vector3
from ..core.errors import InputError

__all__ = ['map_request_joints', 'loads_from_request']


def map_request_joints(q_names, joint_names, arrays, required=(), followers=None):
    """
    Map per-joint request arrays by name into ``q_names`` order.

    ``arrays``: dict field name -> sequence (same order as ``joint_names``; empty = zero /
    not given).  ``required``: field names that may not be empty.  Every moving joint must
    appear exactly once in ``joint_names`` (any order) unless every array is empty.
    Returns dict field name -> (n_q,) array.  InputError naming the joint/field otherwise
    (``followers``: {mimic joint: Mimic(leader, ...)}, to say which leader to give instead).
    """
    n = len(q_names)
    out = {k: np.zeros(n) for k in arrays}
    given = {k: v for k, v in arrays.items() if len(v) > 0}
    for k in required:
        if k not in given and n > 0:
            raise InputError(
                f'{k} is empty: it needs one value per joint of joint_names '
                f'(the moving joints {list(q_names)})'
            )
    if not given:
        return out
    index = {name: k for k, name in enumerate(q_names)}
    names = list(joint_names)
    seen = set()
    for name in names:
        if name not in index:
            m = (followers or {}).get(name)
            if m is not None:
                raise InputError(
                    f'joint {name!r} in joint_names is a mimic joint ({name} = {m.multiplier:g} * '
                    f'{m.leader} + {m.offset:g}): give only its leader {m.leader!r}'
                )
            raise InputError(
                f'unknown joint {name!r} in joint_names; the moving joints are {list(q_names)}'
            )
        if name in seen:
            raise InputError(f'joint {name!r} appears twice in joint_names')
        seen.add(name)
    missing = [q for q in q_names if q not in seen]
    if missing:
        raise InputError(
            f'joint_names lacks the moving joints {missing} (a request needs every moving joint)'
        )
    order = np.array([index[name] for name in names], dtype=np.intp)
    for key, values in given.items():
        if len(values) != len(names):
            raise InputError(f'{key} has {len(values)} values for {len(names)} joint_names')
        a = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(a)):
            bad = names[int(np.flatnonzero(~np.isfinite(a))[0])]
            raise InputError(f'{key} of joint {bad!r} is NaN or infinite')
        out[key][order] = a
    return out


def loads_from_request(robot, link_wrenches):
    """
    (wF0 (6,), wFm (6, n)) from spart_interfaces/LinkWrench entries.

    World frame, at the link CoM; the base link allowed; repeated links add up.
    """
    n = robot.n_links_joints
    wF0, wFm = np.zeros(6), np.zeros((6, n))
    for k, lw in enumerate(link_wrenches):
        name = lw.link_name
        if name not in robot.keys.link_id:
            raise InputError(
                f'link_wrenches[{k}]: unknown link {name!r}; links are {robot.link_names}'
            )
        w = np.concatenate(
            [
                vector3(f'link_wrenches[{k}] ({name}) torque', lw.wrench.torque),
                vector3(f'link_wrenches[{k}] ({name}) force', lw.wrench.force),
            ]
        )
        i = robot.keys.link_id[name]
        if i == 0:
            wF0 += w
        else:
            wFm[:, i - 1] += w
    return wF0, wFm
