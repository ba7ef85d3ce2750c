"""A real collectd for tests: temporary BaseDir and PluginDir, logfile first, ended by PID.

collectd has one PluginDir and refuses symlinked plugins, so the stock plugins a test needs
are copied from /usr/lib/collectd (and ours from the build dir) into a temporary one.
Values are fed with `collectdctl -s <socket> putval`, as a plugin would dispatch them.
"""
import grp
import os
import shutil
import socket
import subprocess
import tempfile
import urllib.request

from .process import Daemon, read_log
from .wait import wait_until

STOCK_PLUGIN_DIR = '/usr/lib/collectd'
SYSTEM_TYPES_DB = '/usr/share/collectd/types.db'


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Collectd(Daemon):
    """body: configuration after the common header (LoadPlugin lines, <Plugin> blocks).

    plugins: stock plugin names to copy; plugin_files: paths of other .so files (ours).
    unixsock is configured when it is among the plugins.
    """

    def __init__(self, body, plugins=(), plugin_files=(), types_db=(), hostname='hostA',
                 interval=1, timeout=2, write_threads=1):
        self.dir = tempfile.mkdtemp(prefix='dtel-collectd-')
        self.plugin_dir = os.path.join(self.dir, 'plugins')
        os.mkdir(self.plugin_dir)
        for name in set(plugins) | {'logfile'}:
            shutil.copy(os.path.join(STOCK_PLUGIN_DIR, name + '.so'), self.plugin_dir)
        for path in plugin_files:
            shutil.copy(path, self.plugin_dir)
        self.log_path = os.path.join(self.dir, 'collectd.log')
        self.socket = os.path.join(self.dir, 'collectd.sock') if 'unixsock' in plugins else None
        self.conf_path = os.path.join(self.dir, 'collectd.conf')
        types = ' '.join(f'"{t}"' for t in (SYSTEM_TYPES_DB,) + tuple(types_db))
        header = [
            f'Hostname "{hostname}"',
            'FQDNLookup false',
            f'BaseDir "{self.dir}"',
            f'PIDFile "{self.dir}/collectd.pid"',
            f'PluginDir "{self.plugin_dir}"',
            f'TypesDB {types}' if types_db else '',
            f'Interval {interval}',
            f'Timeout {timeout}',
            # One write thread keeps values of one identifier in order (threshold, tests).
            f'WriteThreads {write_threads}',
            # logfile first, so that the other plugins' configuration errors are logged.
            'LoadPlugin logfile',
            '<Plugin logfile>',
            '  LogLevel info',
            f'  File "{self.log_path}"',
            '  Timestamp true',
            '</Plugin>',
        ]
        if self.socket:
            group = grp.getgrgid(os.getegid()).gr_name
            header += ['LoadPlugin unixsock', '<Plugin unixsock>',
                       f'  SocketFile "{self.socket}"', f'  SocketGroup "{group}"',
                       '  SocketPerms "0600"', '</Plugin>']
        with open(self.conf_path, 'w') as f:
            f.write('\n'.join(header + [body]) + '\n')
        self.proc = None

    def log(self):
        return read_log(self.log_path)

    def test_config(self, timeout=30):
        """`collectd -T`: configure, initialise and read once, then exit. (`-t` only parses
        the file and exits 0 even when a plugin rejects an option.) Returns (rc, output)."""
        p = subprocess.run(['collectd', '-T', '-C', self.conf_path], capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr + self.log()

    def start(self, timeout=15, http_port=None):
        self.proc = subprocess.Popen(['collectd', '-f', '-C', self.conf_path],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     start_new_session=True)

        def ready_or_exited():
            # wait_until retries on exceptions, so an exit is a result, not an exception.
            if self.proc.poll() is not None:
                return 'exited'
            if self.socket:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
            if http_port:
                urllib.request.urlopen(f'http://127.0.0.1:{http_port}/metrics', timeout=2).read()
            return 'ready'

        if wait_until(ready_or_exited, timeout, 'collectd ready') == 'exited':
            raise RuntimeError(f'collectd exited with {self.proc.returncode}:\n{self.log()}')
        return self

    def putval(self, identifier, values, interval=None):
        """One value list, e.g. putval('hostA/dpdktel_events-e.port0/link_status', 'N:1')."""
        argv = ['collectdctl', '-s', self.socket, 'putval', identifier]
        if interval is not None:
            argv.append(f'interval={interval}')
        argv.append(values)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        if p.returncode != 0:
            raise RuntimeError(f'collectdctl putval {identifier} {values}: {p.stdout}{p.stderr}')

    def putvals(self, items, interval=None, parallel=8):
        """Many value lists [(identifier, values)], up to `parallel` collectdctl at a time."""
        items = list(items)
        for i in range(0, len(items), parallel):
            procs = []
            for identifier, values in items[i:i + parallel]:
                argv = ['collectdctl', '-s', self.socket, 'putval', identifier]
                if interval is not None:
                    argv.append(f'interval={interval}')
                procs.append((identifier, subprocess.Popen(
                    argv + [values], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True)))
            for identifier, p in procs:
                out, _ = p.communicate(timeout=10)
                if p.returncode != 0:
                    raise RuntimeError(f'collectdctl putval {identifier}: {out}')

    def __enter__(self):
        return self
