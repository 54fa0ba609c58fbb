"""Common ``main()`` plumbing for the spart_ros nodes."""

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.task import Future


def run_node(factory, args=None, executor=None):
    """Create the node with ``factory()`` and spin it until SIGINT/SIGTERM.

    ``executor``: None (rclpy.spin), or a zero-argument callable that makes the executor
    after ``rclpy.init`` (e.g. ``rclpy.experimental.EventsExecutor``); the node then spins
    with ``spin_until_future_complete`` on a future completed at shutdown, since
    ``EventsExecutor.spin()`` never runs a callback in the Kilted wheels (DEVELOPERS.md).

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
            executor = executor()
            executor.add_node(node)
            stop = Future()
            node.context.on_shutdown(lambda: stop.done() or stop.set_result(True))
            while node.context.ok() and not stop.done():
                executor.spin_until_future_complete(stop, timeout_sec=1.0)
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
