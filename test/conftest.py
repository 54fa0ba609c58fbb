"""Shared pytest set-up for spart_ros tests.

Kept import-light on purpose: tests of the pure-Python core must not pay for
rclpy. The ROS fixtures import test/node_helpers.py (and rclpy) only when a
test asks for them.
"""

import os
import random

import pytest

# One DDS domain per test run, so parallel runs (CI, several checkouts) never
# see each other's nodes; scripts/test.sh sets it, a plain pytest run gets a
# random one. Discovery stays on this host.
if not os.environ.get("ROS_DOMAIN_ID"):
    os.environ["ROS_DOMAIN_ID"] = str(random.randint(1, 100))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def pytest_report_header(config):
    return (f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} "
            f"RMW_IMPLEMENTATION={os.environ.get('RMW_IMPLEMENTATION', '(default)')}")


@pytest.fixture
def ros_node(request):
    """A RosTestNode (rclpy node + executor in its own context) for the test side."""
    from node_helpers import RosTestNode
    name = "test_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50]
    node = RosTestNode(name)
    yield node
    node.close()


@pytest.fixture
def node_process():
    """Factory: ``node_process("spart_ros", "heartbeat_node", parameters=...)``
    starts a node process (see node_helpers.start_node); every process it
    started is stopped and cleaned up after the test."""
    from node_helpers import start_node
    started = []

    def _start(*args, **kwargs):
        proc = start_node(*args, **kwargs)
        started.append(proc)
        return proc

    yield _start
    for proc in reversed(started):
        proc.cleanup()
