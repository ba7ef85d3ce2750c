"""A real collectd 5.12 daemon for tests, loading our plugins from the build tree.

collectd has one PluginDir and refuses symlinked plugins, so the system plugins a test needs
(from /usr/lib/collectd) and ours (from the build dir) are copied into a temporary PluginDir.
Everything lives in a temporary dir removed by cleanup(); the daemon is ended by PID
(helpers/process.py Daemon).

What a test reads back: the csv writer's files, the cache over unixsock (GETVAL, LISTVAL),
notifications from the log, and what write_prometheus serves. Values are fed with
`collectdctl putval` over the same socket, as a plugin would dispatch them.
"""
import glob
import grp
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.request

from . import sanitizers
from .netns import exec_prefix, run_in
from .process import Daemon, read_log, status_field
from .wait import Fatal, wait_until

SYSTEM_PLUGIN_DIR = '/usr/lib/collectd'
SYSTEM_TYPES_DB = '/usr/share/collectd/types.db'

# For benchmarks with csv=False: no write plugin, and no per-value log line either. Without
# any writer collectd 5.12 logs "Available write targets:: [none]" for every value it
# dispatches, which costs more than collecting it. A post-cache chain that stops every value
# keeps the cache (LISTVAL, GETVAL) and skips the write path.
NO_WRITER = 'PostCacheChain "dtel_nowrite"\n<Chain "dtel_nowrite">\n  Target "stop"\n</Chain>\n'

NOTIFICATION_RE = re.compile(r'\] (?:\[\w+\] )?Notification: (.*)$')


# "uc_update: Value too old" lines of every collectd stopped since the last
# take_values_too_old(): collectd's cache refused a value of an identifier as older than its
# last one (src/daemon/utils_cache.c uc_update), because a plugin dispatched one identifier
# out of time order, or two of its values so close together that collectd's write threads
# stored them in either order. Collectd.stop() notes them; the integration suite's conftest
# fails the test (or, for daemons of module fixtures, the run) that had any. Noted, not
# raised at stop: a stop in a test's cleanup must not keep the rest of it from running.
_too_old = []
_too_old_lock = threading.Lock()


def take_values_too_old():
    """The "Value too old" lines noted since the last call, as (log path, [lines])."""
    with _too_old_lock:
        found = list(_too_old)
        _too_old.clear()
    return found


class Collectd(Daemon):
    def __init__(self, build_dir, source_dir, config, system_plugins=(), interval=1.0,
                 hostname='dttest', ours=('dpdktel_stats',), read_threads=5, env=None,
                 plugin_dir_source=None, netns=None, csv=True, user=None, wrapper=(),
                 types_db=None, timeout=None, write_threads=None, http_port=None,
                 print_severity=True):
        """config: the configuration after the common header (LoadPlugin lines, <Plugin>
        blocks). The header loads logfile (first, so that the other plugins' errors are
        logged), unixsock and, unless csv=False, the csv writer.

        system_plugins: names of other system plugins to copy; ours: names of our plugins
        to copy from plugin_dir_source (default <build_dir>/plugins). csv=False: no write
        plugin at all (benchmarks: the csv writer costs every value a few microseconds).
        types_db: the TypesDB files (default collectd's and plugins/dpdktel.types.db; ()
        writes no TypesDB line, for a config that has its own). timeout, write_threads:
        collectd's Timeout and WriteThreads, when not its defaults (one write thread keeps
        the values of one identifier in order). http_port: a write_prometheus port that
        start() also waits for. print_severity=False: log lines without their "[warning]"
        prefix. user: a pwd entry to run collectd as (with that user's groups), else root.
        wrapper: a command line to run collectd under (valgrind).
        netns: run inside this network namespace (helpers/netns.py)."""
        self.wrapper = list(wrapper)
        self.netns = netns
        self.build_dir = build_dir
        self.source_dir = source_dir
        self.dir = tempfile.mkdtemp(prefix='dtel-collectd-')
        os.chmod(self.dir, 0o755)
        self.plugin_dir = os.path.join(self.dir, 'plugins')
        os.mkdir(self.plugin_dir)
        self.log_path = os.path.join(self.dir, 'collectd.log')
        self.sock_path = os.path.join(self.dir, 'sock')
        self.csv_dir = os.path.join(self.dir, 'csv')
        self.hostname = hostname
        self.interval = interval
        self.env = sanitizers.collectd_env(env)
        self.write_csv = csv
        self.user = user
        self.http_port = http_port
        self.print_severity = print_severity
        self.proc = None
        self._log_checked = False
        plugin_source = plugin_dir_source or os.path.join(build_dir, 'plugins')
        for name in set(('logfile', 'unixsock', 'csv') + tuple(system_plugins)):
            shutil.copy(os.path.join(SYSTEM_PLUGIN_DIR, name + '.so'), self.plugin_dir)
        for name in ours:
            shutil.copy(os.path.join(plugin_source, name + '.so'), self.plugin_dir)
        if types_db is None:
            types_db = (SYSTEM_TYPES_DB, os.path.join(source_dir, 'plugins', 'dpdktel.types.db'))
        self.types_db = tuple(types_db)
        self.conf_path = os.path.join(self.dir, 'collectd.conf')
        with open(self.conf_path, 'w') as f:
            f.write(self.base_config(read_threads, timeout, write_threads) + '\n' + config +
                    '\n')
        if user is not None:
            for root, dirs, files in os.walk(self.dir):
                for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                    os.chown(name, user.pw_uid, user.pw_gid)

    def base_config(self, read_threads, timeout, write_threads):
        types = ' '.join(f'"{t}"' for t in self.types_db)
        # The socket's group is the daemon's own: unixsock's default group "collectd" does
        # not exist on Debian ("No such group" in the log).
        group = grp.getgrgid(self.user.pw_gid if self.user else os.getegid()).gr_name
        lines = [
            f'Hostname "{self.hostname}"',
            'FQDNLookup false',
            f'BaseDir "{self.dir}"',
            f'PIDFile "{self.dir}/collectd.pid"',
            f'PluginDir "{self.plugin_dir}"',
            f'TypesDB {types}' if types else None,
            f'Interval {self.interval}',
            f'Timeout {timeout}' if timeout is not None else None,
            f'ReadThreads {read_threads}',
            f'WriteThreads {write_threads}' if write_threads is not None else None,
            'LoadPlugin logfile',
            '<Plugin logfile>',
            f'  File "{self.log_path}"',
            '  LogLevel info',
            f'  PrintSeverity {"true" if self.print_severity else "false"}',
            '  Timestamp true',
            '</Plugin>',
            'LoadPlugin unixsock',
            '<Plugin unixsock>',
            f'  SocketFile "{self.sock_path}"',
            f'  SocketGroup "{group}"',
            '  SocketPerms "0600"',
            '</Plugin>',
        ]
        if self.write_csv:
            lines += ['LoadPlugin csv', '<Plugin csv>', f'  DataDir "{self.csv_dir}"',
                      '  StoreRates false', '</Plugin>']
        return '\n'.join(line for line in lines if line is not None) + '\n'

    # Process ---------------------------------------------------------------------------

    def start(self, timeout=20):
        """Start and wait until unixsock answers (and http_port serves /metrics)."""
        kw = {}
        if self.user is not None:
            kw = dict(user=self.user.pw_uid, group=self.user.pw_gid, cwd=self.dir,
                      extra_groups=os.getgrouplist(self.user.pw_name, self.user.pw_gid))
        argv = exec_prefix(self.netns) + self.wrapper + ['collectd', '-f', '-C', self.conf_path]
        self.proc = subprocess.Popen(argv,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=self.env, **kw)

        def ready_or_exited():
            # wait_until retries on exceptions, so an exit is a result, not an exception.
            if self.proc.poll() is not None:
                return 'exited'
            if self.command('LISTVAL') is None:
                return None
            if self.http_port:
                run_in(self.netns, self._metrics)
            return 'ready'

        if wait_until(ready_or_exited, timeout, 'collectd ready') == 'exited':
            raise Fatal(f'collectd exited with {self.proc.returncode}:\n{self.log()}')
        return self

    def stop(self, timeout=15):
        """End the daemon by PID, and note the "Value too old" lines of its log (once; see
        take_values_too_old())."""
        code = super().stop(timeout)
        if not self._log_checked and self.proc is not None:
            self._log_checked = True
            too_old = [line for line in self.log().splitlines() if 'Value too old' in line]
            if too_old:
                with _too_old_lock:
                    _too_old.append((self.log_path, too_old))
        return code

    def _metrics(self):
        url = f'http://127.0.0.1:{self.http_port}/metrics'
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.read()

    def rss_kib(self):
        """The daemon's resident set size, from /proc."""
        return status_field(self.proc.pid, 'VmRSS')

    def test_config(self, timeout=60):
        """collectd -T: read the config, run every init once, exit. (collectd 5.12's -t
        does not call the plugins' config callbacks at all, so it cannot check them.)
        Returns the CompletedProcess; the plugins' messages are in log()."""
        return subprocess.run(['collectd', '-T', '-C', self.conf_path], capture_output=True,
                              text=True, timeout=timeout, env=self.env)

    # Reading what it has -----------------------------------------------------------------

    def log(self):
        return read_log(self.log_path)

    def notifications(self):
        """Notifications as the logfile plugin wrote them, as dicts."""
        out = []
        for line in self.log().splitlines():
            m = NOTIFICATION_RE.search(line)
            if not m:
                continue
            body, _, message = m.group(1).partition(', message = ')
            fields = dict(kv.split(' = ', 1) for kv in body.split(', ') if ' = ' in kv)
            fields['message'] = message
            out.append(fields)
        return out

    def command(self, line):
        """One unixsock command; the reply lines (status line first), or None."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(self.sock_path)
        except OSError:
            return None
        try:
            f = s.makefile('rw')
            f.write(line + '\n')
            f.flush()
            status = f.readline()
            if not status:
                return None
            n = int(status.split(' ', 1)[0])
            return [status.strip()] + [f.readline().strip() for _ in range(max(n, 0))]
        finally:
            s.close()

    def listval(self):
        reply = self.command('LISTVAL') or []
        return [l.split(' ', 1)[1] for l in reply[1:]]

    def getval(self, identifier):
        """Values in collectd's cache (rates for DERIVE), as {ds: float}, or None."""
        reply = self.command(f'GETVAL "{self.hostname}/{identifier}"')
        if not reply or reply[0].startswith('-'):
            return None
        return {k: float(v) for k, v in (l.split('=', 1) for l in reply[1:])}

    def csv(self, identifier):
        """Raw values the csv writer stored for plugin-instance/type-instance: [(t, [v..])]."""
        files = sorted(glob.glob(os.path.join(self.csv_dir, self.hostname, identifier + '-*')))
        rows = []
        for path in files:
            with open(path) as f:
                for line in f:
                    if line.startswith('epoch'):
                        continue
                    parts = line.strip().split(',')
                    rows.append((float(parts[0]), [float(x) for x in parts[1:]]))
        return rows

    def last(self, identifier):
        rows = self.csv(identifier)
        return rows[-1] if rows else None

    def wait_value(self, identifier, cond=lambda row: True, timeout=15, what=None):
        def check():
            rows = self.csv(identifier)
            return rows and cond(rows[-1]) and rows[-1]
        return wait_until(check, timeout, what or f'collectd value {identifier}')

    # Feeding it values -------------------------------------------------------------------

    def _putval_argv(self, identifier, values, interval):
        argv = ['collectdctl', '-s', self.sock_path, 'putval', identifier]
        if interval is not None:
            argv.append(f'interval={interval}')
        return argv + [values]

    def putval(self, identifier, values, interval=None):
        """One value list, e.g. putval('hostA/dpdktel_events-e.port0/link_status', 'N:1')."""
        p = subprocess.run(self._putval_argv(identifier, values, interval),
                           capture_output=True, text=True, timeout=10)
        if p.returncode != 0:
            raise RuntimeError(f'collectdctl putval {identifier} {values}: {p.stdout}{p.stderr}')

    def putvals(self, items, interval=None, parallel=8):
        """Many value lists [(identifier, values)], up to `parallel` collectdctl at a time."""
        items = list(items)
        for i in range(0, len(items), parallel):
            procs = [(identifier, subprocess.Popen(
                self._putval_argv(identifier, values, interval), stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True))
                for identifier, values in items[i:i + parallel]]
            for identifier, p in procs:
                out, _ = p.communicate(timeout=10)
                if p.returncode != 0:
                    raise RuntimeError(f'collectdctl putval {identifier}: {out}')
