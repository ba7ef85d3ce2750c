"""Ending the processes a test started: by PID, never by name; the Daemon base."""
import os
import shutil
import signal
import socket
import subprocess
import urllib.request


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


def status_field(pid, name):
    """The first number of a line of /proc/<pid>/status (VmRSS in KiB, Uid: the real uid)."""
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith(name + ':'):
                return int(line.split()[1])
    raise AssertionError(f'no {name} in /proc/{pid}/status')


def read_log(path):
    """The text of a process's log file; '' before the process has written one."""
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Daemon:
    """A daemon of a test in a temporary dir of its own: `proc` (a Popen, or None before it
    starts) and `dir`. A subclass provides start(), which returns self once the daemon
    answers.

    stop() ends it by PID and returns its exit code, keeping the dir (its log stays
    readable); cleanup() also removes the dir. `with` starts it and cleans up on leaving,
    and also when start() fails (__exit__ does not run when __enter__ raises)."""

    proc = None
    dir = None

    def start(self):
        raise NotImplementedError

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self):
        return self.proc.pid

    def stop(self, timeout=15):
        return end(self.proc, timeout=timeout)

    def cleanup(self):
        self.stop()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc):
        self.cleanup()


class WebDaemon(Daemon):
    """A daemon with an HTTP /-/ready endpoint on a free loopback port (Prometheus,
    Alertmanager): `name`, `log_path`, and argv(port) giving its command line."""

    name = 'daemon'
    log_path = None
    port = None

    def argv(self, port):
        raise NotImplementedError

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}'

    def log(self):
        return read_log(self.log_path)

    def start(self, timeout=30, attempts=3, port=None):
        """Start and wait until /-/ready. A port taken between choosing and binding it
        makes the daemon exit: try another one. port: listen there, and only there (a
        daemon restarted where others send to it: an Alertmanager of a Prometheus)."""
        from .wait import wait_until
        for attempt in range(1 if port else attempts):
            self.port = port or free_port()
            with open(self.log_path, 'w') as log:
                self.proc = subprocess.Popen(self.argv(self.port), stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            state = wait_until(self._ready_or_exited, timeout, f'{self.name} ready on {self.url}')
            if state == 'ready':
                return self
            if 'address already in use' not in self.log() or port or attempt == attempts - 1:
                raise RuntimeError(f'{self.name} exited with {self.proc.returncode}:\n'
                                   f'{self.log()}')
        return self

    def _ready_or_exited(self):
        # wait_until retries on exceptions, so an exit is a result, not an exception.
        if self.proc.poll() is not None:
            return 'exited'
        return self._ready()

    def _ready(self):
        with urllib.request.urlopen(self.url + '/-/ready', timeout=2) as r:
            return 'ready' if r.status == 200 else None
