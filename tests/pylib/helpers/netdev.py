"""DPDK ports with a kernel netdev beside them, for tests of dpdktel_events' netdev link
source (plugins/events/netdev.h): testpmd with net_af_packet on a veth pair and with net_tap,
in collectd's network namespace or in one of its own, and tests/tools/netdev_watch, which
follows their carrier as the plugin does and says when each change reached it.

Every interface and namespace has a name of this test's own and is deleted afterwards (a
namespace takes its interfaces with it); every process is ended by PID.
"""
import itertools
import os
import queue
import subprocess
import threading
import time

from . import dpdk
from .netns import ip
from .process import end
from .slowtel import shim_env
from .wait import Fatal, Timeout

_counter = itertools.count()


def ifname(tag='n'):
    """A unique interface name of at most 15 bytes (IFNAMSIZ - 1)."""
    name = f'{tag}{os.getpid() % 100000}x{next(_counter)}'
    if len(name) > 15:
        raise ValueError(f'{name}: longer than 15 bytes')
    return name


class Veth:
    """A veth pair: `app` for the DPDK port (moved into namespace `app_ns` if given) and its
    `peer`, left in collectd's namespace, whose state decides the app end's carrier (veth_open()
    and veth_close() in drivers/net/veth.c turn the other end's carrier on and off)."""

    def __init__(self, app_ns=None):
        self.app, self.peer, self.app_ns = ifname('va'), ifname('vp'), app_ns

    def __enter__(self):
        ip('link', 'add', self.app, 'type', 'veth', 'peer', 'name', self.peer)
        try:
            if self.app_ns:
                ip('link', 'set', self.app, 'netns', self.app_ns)
            ip('link', 'set', self.app, 'up', ns=self.app_ns)
            ip('link', 'set', self.peer, 'up')
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        # Deleting one end deletes both; the app end may have gone with its namespace.
        ip('link', 'del', self.peer, check=False)


def testpmd(vdevs, ns=None, slow=None, build_dir=None, release=None, **kw):
    """dpdk-testpmd (default: the system's, Debian's 22.11) on `vdevs`, each port looped on
    itself, in network namespace `ns` if given. slow: a spec for the slow-telemetry shim
    (helpers/slowtel.py), run in its sleep mode (a driver waiting on the kernel, as mlx5's
    ethtool ioctls do)."""
    release = release or dpdk.default_release()
    env = kw.pop('env', None)
    if slow:
        env = shim_env(build_dir, spec=slow, mode='sleep', base=release.env(env) or os.environ)
    return dpdk.testpmd(vdevs=vdevs, extra=['--port-topology=loop'], netns=ns, env=env,
                        release=release, **kw)


def tool_path(build_dir):
    path = os.path.join(build_dir, 'tests', 'tools', 'netdev_watch')
    if not os.access(path, os.X_OK):
        raise Fatal(f'{path}: not built (ninja -C {build_dir})')
    return path


class Watch:
    """tests/tools/netdev_watch on an application's socket. After start(): `netns` ('same' or
    'other'), `ports` {port: dict(name, netdev, by, only_signal, carrier) or dict(name,
    none=reason)}, or `unused` (errno, reason) when the source cannot be used at all.
    wait_event() returns the CLOCK_MONOTONIC time at which the tool read a change."""

    def __init__(self, build_dir, socket, port_netdevs=(), argv_prefix=()):
        self.argv = list(argv_prefix) + [tool_path(build_dir), socket] + list(port_netdevs)
        self.proc = None
        self.lines = queue.Queue()
        self.netns, self.ports, self.unused = None, {}, None
        self.events = []  # (time, port, carrier), all those read so far

    def start(self, timeout=10):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            line = self._line(deadline)
            words = line.split()
            if words[0] == 'ready':
                return self
            if words[0] == 'unused':
                self.unused = (int(words[1]), line.split(None, 2)[2])
                return self
            if words[0] == 'netns':
                self.netns = words[1]
            elif words[0] == 'port':
                self.ports[int(words[1])] = self._port(words)

    @staticmethod
    def _port(w):
        if w[3] == 'none':
            return {'name': w[2], 'none': ' '.join(w[4:])}
        return {'name': w[2], 'netdev': w[4], 'by': w[6], 'only_signal': w[8] == '1',
                'carrier': int(w[10])}

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip('\n'))
        self.lines.put(None)

    def _line(self, deadline):
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise Timeout(f'netdev_watch said nothing in time: {self.argv}') from None
        if line is None:
            raise Fatal(f'netdev_watch exited with {self.proc.wait()}: '
                        f'{self.proc.stderr.read()}')
        return line

    def wait_event(self, port, carrier, timeout=5.0):
        """The time of the first event not yet taken, which must be `carrier` of `port`."""
        deadline = time.monotonic() + timeout
        while True:
            w = self._line(deadline).split()
            if w[0] != 'event':
                continue
            ev = (float(w[1]), int(w[3]), int(w[5]))
            self.events.append(ev)
            if ev[1:] != (port, carrier):
                raise AssertionError(f'netdev_watch: {ev}, expected port {port} carrier '
                                     f'{carrier}')
            return ev[0]

    def close(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                end(self.proc)
        self.proc = None

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
