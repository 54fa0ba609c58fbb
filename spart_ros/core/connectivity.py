"""SPART's connectivity maps of a robot (ConnectivityMap)."""
import numpy as np

from . import _checks as chk


def connectivity_map(robot):
    """Branch, child and child-base maps of ``robot``.  (SPART: ConnectivityMap)

    Returns ``branch`` (n, n): branch[i-1, j-1] = 1 when link j lies on link i's
    path to the base (j = i included); ``child`` (n, n): child[i-1, j-1] = 1 when
    link i's parent is link j; ``child_base`` (n,): 1 when link i's parent is the base.
    """
    n = chk.robot(robot).n_links_joints
    parent = np.array([j.parent_link for j in robot.joints], dtype=np.int64)
    branch = np.zeros((n, n), dtype=np.int64)
    child = np.zeros((n, n), dtype=np.int64)
    child_base = np.zeros(n, dtype=np.int64)
    for i in range(1, n + 1):
        p = parent[i - 1]
        if p == 0:
            child_base[i - 1] = 1
        else:
            child[i - 1, p - 1] = 1
            branch[i - 1] = branch[p - 1]  # parents come first in SPART numbering
        branch[i - 1, i - 1] = 1
    return branch, child, child_base


def leaf_links(robot):
    """Names of the links with no child (e.g. end effectors), in link order; the base link when
    it is the only link."""
    parents = {j.parent_link for j in chk.robot(robot).joints}
    leaves = [link.name for link in robot.links if link.id not in parents]
    return leaves or [robot.base_link.name]
