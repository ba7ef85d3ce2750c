"""A real collectd 5.12 daemon for tests, loading our plugins from the build tree.

collectd has one PluginDir and refuses symlinked plugins, so the system plugins a test needs
and ours are copied into a temporary PluginDir. Everything lives in a temporary dir removed
at stop; the daemon is ended by PID.
"""
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile

from . import sanitizers
from .netns import exec_prefix
from .process import end, read_log, status_field
from .wait import Fatal, wait_until

SYSTEM_PLUGINS = '/usr/lib/collectd'
TYPES_DB = '/usr/share/collectd/types.db'

# For benchmarks with csv=False: no write plugin, and no per-value log line either. Without
# any writer collectd 5.12 logs "Available write targets:: [none]" for every value it
# dispatches, which costs more than collecting it. A post-cache chain that stops every value
# keeps the cache (LISTVAL, GETVAL) and skips the write path.
NO_WRITER = 'PostCacheChain "dtel_nowrite"\n<Chain "dtel_nowrite">\n  Target "stop"\n</Chain>\n'

NOTIFICATION_RE = re.compile(r'\] (?:\[\w+\] )?Notification: (.*)$')


class Collectd:
    def __init__(self, build_dir, source_dir, config, system_plugins=(), interval=1.0,
                 hostname='dttest', ours=('dpdktel_stats',), read_threads=5, env=None,
                 plugin_dir_source=None, netns=None, csv=True, user=None, wrapper=()):
        """csv=False: no write plugin at all (benchmarks: the csv writer costs every
        value a few microseconds). user: a pwd entry to run collectd as (with that user's
        groups), else root. wrapper: a command line to run collectd under (valgrind)."""
        self.wrapper = list(wrapper)
        self.netns = netns  # run inside this network namespace (helpers/netns.py)
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
        self.proc = None
        plugin_source = plugin_dir_source or os.path.join(build_dir, 'plugins')
        for name in set(('logfile', 'unixsock', 'csv') + tuple(system_plugins)):
            shutil.copy(os.path.join(SYSTEM_PLUGINS, name + '.so'), self.plugin_dir)
        for name in ours:
            shutil.copy(os.path.join(plugin_source, name + '.so'), self.plugin_dir)
        self.types_db = os.path.join(source_dir, 'plugins', 'dpdktel.types.db')
        self.conf_path = os.path.join(self.dir, 'collectd.conf')
        with open(self.conf_path, 'w') as f:
            f.write(self.base_config(read_threads) + '\n' + config + '\n')
        if user is not None:
            for root, dirs, files in os.walk(self.dir):
                for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                    os.chown(name, user.pw_uid, user.pw_gid)

    def base_config(self, read_threads):
        csv = f'''LoadPlugin csv
<Plugin csv>
  DataDir "{self.csv_dir}"
  StoreRates false
</Plugin>
''' if self.write_csv else ''
        return f'''Hostname "{self.hostname}"
FQDNLookup false
BaseDir "{self.dir}"
PIDFile "{self.dir}/collectd.pid"
PluginDir "{self.plugin_dir}"
TypesDB "{TYPES_DB}" "{self.types_db}"
Interval {self.interval}
ReadThreads {read_threads}
LoadPlugin logfile
<Plugin logfile>
  File "{self.log_path}"
  LogLevel info
  PrintSeverity true
  Timestamp true
</Plugin>
LoadPlugin unixsock
<Plugin unixsock>
  SocketFile "{self.sock_path}"
</Plugin>
''' + csv

    # Process ---------------------------------------------------------------------------

    def start(self, timeout=20):
        kw = {}
        if self.user is not None:
            kw = dict(user=self.user.pw_uid, group=self.user.pw_gid, cwd=self.dir,
                      extra_groups=os.getgrouplist(self.user.pw_name, self.user.pw_gid))
        argv = exec_prefix(self.netns) + self.wrapper + ['collectd', '-f', '-C', self.conf_path]
        self.proc = subprocess.Popen(argv,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=self.env, **kw)
        wait_until(lambda: self._alive() and self.command('LISTVAL') is not None, timeout,
                   'collectd unixsock')
        return self

    def _alive(self):
        if self.proc.poll() is not None:
            raise Fatal(f'collectd exited with {self.proc.returncode}:\n{self.log()}')
        return True

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self):
        return self.proc.pid

    def rss_kib(self):
        """The daemon's resident set size, from /proc."""
        return status_field(self.proc.pid, 'VmRSS')

    def stop(self, timeout=15):
        return end(self.proc, timeout=timeout)

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            # A daemon that never answered is still stopped and its temp dir removed.
            self.cleanup()
            raise

    def __exit__(self, *exc):
        self.cleanup()

    def test_config(self):
        """collectd -T: read the config, run every init once, exit. (collectd 5.12's -t
        does not call the plugins' config callbacks at all, so it cannot check them.)"""
        return subprocess.run(['collectd', '-T', '-C', self.conf_path], capture_output=True,
                              text=True, timeout=60, env=self.env)

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
