"""Ending the processes a test started: by PID, never by name."""
import os
import signal
import subprocess


def end(proc, sig=signal.SIGTERM, timeout=15):
    """Send `sig` to a running Popen, wait up to `timeout` s, then SIGKILL; returns its exit
    code (None when it was never started)."""
    if proc is None:
        return None
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout)
    return proc.returncode
