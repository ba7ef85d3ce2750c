"""Waiting on a condition with a deadline: the only way tests here wait for anything."""
import time


class Timeout(AssertionError):
    pass


class Fatal(RuntimeError):
    """Raised by a condition when waiting longer cannot help (the process died)."""


def wait_until(cond, timeout, what, interval=0.01):
    """Call cond() until it returns a true value and return that value.

    Raises Timeout naming `what` (and the last value or exception) after `timeout` seconds;
    a Fatal from cond() at once.
    """
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = cond()
            if last:
                return last
        except Fatal:
            raise
        except Exception as e:  # the condition may fail until the thing is ready
            last = e
        if time.monotonic() >= deadline:
            raise Timeout(f'timed out after {timeout}s waiting for {what} (last: {last!r})')
        time.sleep(interval)
