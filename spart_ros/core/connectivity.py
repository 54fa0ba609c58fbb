"""SPART's connectivity maps of a robot (ConnectivityMap)."""

from . import _checks as chk


def connectivity_map(robot):
    """
    Branch, child and child-base maps of ``robot``.

    (SPART: ConnectivityMap)

    Returns ``branch`` (n, n): branch[i-1, j-1] = 1 when link j lies on link i's
    path to the base (j = i included); ``child`` (n, n): child[i-1, j-1] = 1 when
    link i's parent is link j; ``child_base`` (n,): 1 when link i's parent is the base.
    (Copies of the maps the robot computed when it was built, ``robot.con``.)
    """
    con = chk.robot(robot).con
    return con.branch.copy(), con.child.copy(), con.child_base.copy()


def leaf_links(robot):
    """
    Return the names of the links with no child (e.g. end effectors), in link order.

    The base link when it is the only link.
    """
    parents = {j.parent_link for j in chk.robot(robot).joints}
    leaves = [link.name for link in robot.links if link.id not in parents]
    return leaves or [robot.base_link.name]
