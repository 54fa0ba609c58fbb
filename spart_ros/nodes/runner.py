"""Common ``main()`` plumbing for the spart_ros nodes: executor, spin loop, exit codes."""

import gc
import signal
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.task import Future

from ..core.errors import SpartError

__all__ = ['run_node', 'make_executor', 'freeze_heap', 'EXECUTORS']

EXECUTORS = ('events', 'single_threaded')


def make_executor(kind):
    """
    Return the executor named ``kind``.

    'events' (rclpy's EventsExecutor, the cheapest per message) or 'single_threaded'.
    """
    if kind == 'events':
        from rclpy.experimental import EventsExecutor

        return EventsExecutor()
    if kind == 'single_threaded':
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor()
    from .config import ConfigError

    raise ConfigError(f'executor must be one of {EXECUTORS}, got {kind!r}')


def freeze_heap():
    """
    Move every object alive now (numba, llvmlite, the model) out of the garbage collector's reach.

    A full collection over that heap takes milliseconds, the latency tail at 1 kHz.
    """
    gc.collect()
    gc.freeze()


def run_node(factory, args=None, executor=None):
    """
    Create the node with ``factory()`` and spin it until SIGINT/SIGTERM; returns the exit code.

    ``executor``: an executor kind for :func:`make_executor`; None = the node's ``executor``
    parameter if it has one, else 'single_threaded'.  Exit codes: 0 after a requested
    shutdown, 2 when the node refuses its parameters (a SpartError from ``factory()``,
    printed as one line on stderr).

    SIGINT and SIGTERM are this function's, not rclpy's: rclpy's handler shuts the context down
    at once (asynchronously), after which no node can publish: a controller could not send its
    last zero command, and the executor failed with "context is not valid" or "publisher's
    context is invalid".  Here a signal only ends the spin loop; then the node's ``on_exit()``
    (if it has one: e.g. the controller's shutdown transition, ONE all-zero command) runs with
    the context valid, then the node is destroyed and rclpy shut down.  Exceptions raised once
    the context is shut down (by another path) still count as a clean shutdown.

    Not ``executor.spin()``: in the Kilted wheels EventsExecutor.spin() never runs a callback
    (it busy-waits holding the GIL, deaf to signals).  spin_until_future_complete works, for
    both executors, and costs less per message than a spin_once loop.  The loop looks at the
    signal flag every 0.1 s (the timeout: EventsExecutor takes no guard condition that could
    wake it sooner); the future completes when the context shuts down another way.
    """
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    code = 0
    stop = Future()
    signals = []

    def on_signal(signum, _frame):
        signals.append(signum)  # only a flag: a handler may interrupt any Python code

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        node = factory()
        if executor is None:
            executor = (
                node.get_parameter('executor').value
                if node.has_parameter('executor')
                else 'single_threaded'
            )
        ex = make_executor(executor)
        ex.add_node(node)
        freeze_heap()
        node.context.on_shutdown(lambda: stop.done() or stop.set_result(True))
        while node.context.ok() and not stop.done() and not signals:
            ex.spin_until_future_complete(stop, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SpartError as err:  # invalid parameters: say which, exit non-zero
        name = node.get_name() if node is not None else getattr(factory, 'NODE_NAME', 'node')
        print(f'[{name}] invalid configuration: {err}', file=sys.stderr)
        code = 2
    except Exception:
        if rclpy.ok():
            raise
    finally:
        try:
            if node is not None:
                on_exit = getattr(node, 'on_exit', None)
                if on_exit is not None and rclpy.ok():
                    on_exit()
                node.destroy_node()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            rclpy.try_shutdown()
    return code
