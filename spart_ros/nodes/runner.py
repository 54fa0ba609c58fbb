"""Common ``main()`` plumbing for the spart_ros nodes: executor, spin loop, exit codes."""
import gc
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.task import Future

from ..core.errors import SpartError

__all__ = ['run_node', 'make_executor', 'freeze_heap', 'EXECUTORS']

EXECUTORS = ('events', 'single_threaded')


def make_executor(kind):
    """The executor named ``kind``: 'events' (rclpy's EventsExecutor, the cheapest per
    message) or 'single_threaded'."""
    if kind == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    if kind == 'single_threaded':
        from rclpy.executors import SingleThreadedExecutor
        return SingleThreadedExecutor()
    from .config import ConfigError
    raise ConfigError(f'executor must be one of {EXECUTORS}, got {kind!r}')


def freeze_heap():
    """Move every object alive now (numba, llvmlite, the model) out of the garbage collector's
    reach: a full collection over that heap takes milliseconds, the latency tail at 1 kHz."""
    gc.collect()
    gc.freeze()


def run_node(factory, args=None, executor=None):
    """Create the node with ``factory()`` and spin it until SIGINT/SIGTERM; returns the exit code.

    ``executor``: an executor kind for :func:`make_executor`; None = the node's ``executor``
    parameter if it has one, else 'single_threaded'.  Exit codes: 0 after a requested
    shutdown, 2 when the node refuses its parameters (a SpartError from ``factory()``,
    printed as one line on stderr).

    Not ``executor.spin()``: in the Kilted wheels EventsExecutor.spin() never runs a callback
    (it busy-waits holding the GIL, deaf to SIGINT).  spin_until_future_complete works, for
    both executors, and costs less per message than a spin_once loop; the future completes
    at shutdown, the timeout is only a safety net.  rclpy's signal handler shuts the context
    down asynchronously, so the executor may fail with "context is not valid" instead of
    raising ExternalShutdownException: any exception raised once the context is shut down
    counts as a clean shutdown; before that, it is a real error and propagates.
    """
    rclpy.init(args=args)
    node = None
    code = 0
    try:
        node = factory()
        if executor is None:
            executor = (node.get_parameter('executor').value if node.has_parameter('executor')
                        else 'single_threaded')
        ex = make_executor(executor)
        ex.add_node(node)
        freeze_heap()
        stop = Future()
        node.context.on_shutdown(lambda: stop.done() or stop.set_result(True))
        while node.context.ok() and not stop.done():
            ex.spin_until_future_complete(stop, timeout_sec=1.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SpartError as err:   # invalid parameters: say which, exit non-zero
        name = node.get_name() if node is not None else getattr(factory, 'NODE_NAME', 'node')
        print(f'[{name}] invalid configuration: {err}', file=sys.stderr)
        code = 2
    except Exception:
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code
