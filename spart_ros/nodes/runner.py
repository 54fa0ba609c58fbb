"""Common ``main()`` plumbing for the spart_ros nodes."""

import rclpy
from rclpy.executors import ExternalShutdownException


def run_node(factory, args=None, executor=None):
    """Create the node with ``factory()`` and spin it until SIGINT/SIGTERM.

    Returns the process exit code: 0 after a requested shutdown. rclpy's
    signal handler shuts the context down asynchronously, so the executor may
    fail with "context is not valid" (an RCLError) instead of raising
    ExternalShutdownException when the signal lands inside ``spin_once``:
    any exception raised once the context is shut down counts as a clean
    shutdown; before that, it is a real error and propagates.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = factory()
        if executor is None:
            rclpy.spin(node)
        else:
            executor.add_node(node)
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
