"""Both dpdktel plugins on one real DPDK application (issue 24): what collectd's requests cost
the application's telemetry thread, and whether a slow application is taken for a hung one.

Shared by tests/bench/app_load (prints tables) and tests/integration/test_app_load.py
(asserts). One run:

  - dpdk-testpmd of a release on N ports: port 0 a net_tap (its kernel interface is set down
    and up from outside: real link events), ports 1..N-1 net_null; io forwarding, -l 0,1.
    "slow": with tests/tools/dtel_slow_telemetry.so preloaded (SLOW: /ethdev/xstats 15 ms,
    /ethdev/link_status 2 ms, busy-wait on the telemetry thread, as an i40e/ice driver polling
    its admin queue; see tests/tools/slow_telemetry.c);
  - a real collectd (Interval 1) with dpdktel_stats and dpdktel_events on it as instance "app",
    both at their defaults but for the events plugin's FlapThreshold (1000: the run takes the
    link down and up every second or so, which the default of 3 changes in 10 s would rightly
    call flapping and report once). Notifications come with their own times through exec's
    NotificationExec (helpers/notes.py); only the instance-wide values ("app": up,
    not_responding, telemetry_requests, and whatever a plugin adds there) reach the csv writer;
  - after both plugins report the application up, a warm-up and, where the plugins report
    their app_load (issue 24), once it is within MaxAppLoad, a window of `seconds` in
    which port 0's link goes down and up again and again (helpers/linkctl.py: the ioctl's
    CLOCK_MONOTONIC time against the notification's own time): link-down latency;
  - over the window: the application's telemetry threads' on-CPU time (schedstat, as
    tests/bench/request_cost: DPDK starts one thread per client, named after the listener,
    "telemetry-v2" in 22.11, "dpdk-telemet-v2" from 23.11; collectd's one shared connection
    is one of them), requests per second from the plugins' telemetry_requests counters
    (csv, raw), collectd's CPU;
  - over the whole run: false notifications (not responding, answers again, gone, back,
    restarted: the application is fine throughout), failed requests, and target.c's
    "does not answer" log lines.
A run can then SIGSTOP the application (stop_check()): a real hang must still be reported.
"""
import itertools
import math
import os
import signal
import statistics
import tempfile
import time

from . import cpu, dpdk, linkctl, telemetry
from .collectd import Collectd
from .notes import Notes
from .slowtel import shim_env
from .soak import LOG_RE, kind_of
from .wait import Fatal, Timeout, wait_until

INSTANCE = 'app'
FALSE_KINDS = ('not_responding', 'answers_again', 'gone', 'back', 'restarted')
PLUGINS = ('dpdktel_events', 'dpdktel_stats')
# The events plugin's defaults (docs/dpdktel_events.md) that the checks below depend on.
POLL_INTERVAL = 0.02
TIMEOUT = 0.2
NOT_RESPONDING_POLLS = 3
# % of one core: the defaults of PollLoad (dpdktel_events) and ReadLoad (dpdktel_stats), each
# its own budget (issue 31); together what both plugins may cost the application.
POLL_LOAD = 1.0
READ_LOAD = 1.0
BUDGET = POLL_LOAD + READ_LOAD
# How long a window waits for a stats read to align on: a slow application's reads come
# every ~10 s, and never later than 27 s while the rate alerts must see them (tiers.c).
READ_WAIT = 40.0
_ifaces = itertools.count()


def telemetry_threads(release):
    """The comm prefix of a release's telemetry threads (listeners and per-client)."""
    return 'dpdk-telemet-v' if release.key >= (23, 11) else 'telemetry-v'


def tap_testpmd(nports, release, build_dir, slow=None, mode='busy'):
    """testpmd of `release` on nports ports, port 0 a net_tap; (app, its kernel iface)."""
    iface = f'dtal{os.getpid() % 100000}x{next(_ifaces)}'
    vdevs = [f'net_tap0,iface={iface}'] + [f'net_null{i}' for i in range(1, nports)]
    env = shim_env(build_dir, slow, mode) if slow else None
    return dpdk.testpmd(nports=nports, vdevs=vdevs, release=release, env=env), iface


def config(socket_path, notes, events_extra='', stats_extra='', stats_interval=None):
    inst = f'  <Instance "{INSTANCE}">\n    SocketPath "{socket_path}"\n  </Instance>\n'
    return ('LoadPlugin match_regex\nPostCacheChain "dtel_appload"\n<Chain "dtel_appload">\n'
            '  <Rule "instance_wide">\n    <Match "regex">\n'
            f'      PluginInstance "^{INSTANCE}$"\n    </Match>\n    Target "write"\n'
            '  </Rule>\n  Target "stop"\n</Chain>\n' + notes.config() +
            (f'<LoadPlugin dpdktel_stats>\n  Interval {stats_interval}\n</LoadPlugin>\n'
             if stats_interval else 'LoadPlugin dpdktel_stats\n') +
            f'<Plugin dpdktel_stats>\n{stats_extra}{inst}</Plugin>\n'
            'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  FlapThreshold 1000\n'
            f'{events_extra}{inst}</Plugin>\n')


def request_cost(app, release, cmd, n=50):
    """What one request `cmd` every PollInterval costs the application's telemetry threads
    (ns of CPU a request, wake-up included), measured before collectd starts: what the
    plugins learn of it, measured independently of them. On hardware /info costs about
    12 us; on a VM, where waking a thread costs more, several times that."""
    tel = telemetry_threads(release)
    with telemetry.Client(app.socket) as c:
        c.query(cmd)  # the connection's own thread, before counting
        before = cpu.thread_times(app.pid, tel)
        for _ in range(n):
            c.query(cmd)
            time.sleep(POLL_INTERVAL)
        after = cpu.thread_times(app.pid, tel)
    return cpu.delta(before, after)[0] / n


def request_wall(app, cmd, n=20):
    """What one request `cmd` takes from the socket (ns, the median of n, POLL_INTERVAL
    apart): what the plugins see of its cost. Beside request_cost(): on a loaded host the
    application's thread waits for a core too, and the plugins, which cannot read its CPU
    time, plan with this."""
    took = []
    with telemetry.Client(app.socket) as c:
        c.query(cmd)
        for _ in range(n):
            t = time.monotonic()
            c.query(cmd)
            took.append(time.monotonic() - t)
            time.sleep(POLL_INTERVAL)
    return sorted(took)[n // 2] * 1e9


def realtime_offset():
    """CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of 50 readings."""
    best = None
    for _ in range(50):
        a = time.monotonic()
        r = time.time()
        b = time.monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) / 2)
    return best[1]


def pct(xs, p):
    """Nearest-rank percentile (p95 of 20 values: the 19th smallest); nan for none."""
    if not xs:
        return float('nan')
    xs = sorted(xs)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def host_load():
    """(1-minute load average, CPUs)."""
    return os.getloadavg()[0], os.cpu_count()


class Run:
    """One application under both plugins (see the module's docstring). Use as a context
    manager; measure() once, then stop_check() if wanted."""

    def __init__(self, build_dir, source_dir, release, nports, slow=None, mode='busy',
                 events_extra='', stats_extra='', progress=lambda *a: None, require_up=True,
                 stats_interval=None):
        """require_up=False: a plugin that does not report the application up within
        30 s is noted in never_up (a benchmark's result) instead of an error."""
        self.build_dir, self.source_dir = build_dir, source_dir
        self.release, self.nports, self.slow = release, nports, slow
        self.progress = progress
        self.tmp = tempfile.mkdtemp(prefix='dtel-appload-')
        os.chmod(self.tmp, 0o755)
        self.notes = Notes(self.tmp)
        self.app, self.iface = tap_testpmd(nports, release, build_dir, slow, mode)
        self.events_extra, self.stats_extra = events_extra, stats_extra
        self.stats_interval = stats_interval  # collectd's Interval of dpdktel_stats alone
        self.cd = None
        self.ctl = None
        self.require_up = require_up
        self.never_up = []

    def __enter__(self):
        try:
            self.app.__enter__()
            if self.slow and 'dtel_slow_telemetry: pid' not in self.app.log():
                raise Fatal(f'the slow-telemetry shim did not start in testpmd:\n'
                            f'{self.app.log()[:2000]}')
            self.liveness_cost = request_cost(self.app, self.release, '/info', 100)
            self.link_cost = request_cost(self.app, self.release, '/ethdev/link_status,1')
            # What each link poll asks besides the ports (dtel_plan_links() fixed_ns).
            self.list_cost = request_cost(self.app, self.release, '/ethdev/list')
            self.cd = Collectd(self.build_dir, self.source_dir,
                               config(self.app.socket, self.notes, self.events_extra,
                                      self.stats_extra, self.stats_interval),
                               system_plugins=('exec', 'match_regex'), ours=PLUGINS)
            self.t_start = time.time()
            self.cd.start()
            for plugin in PLUGINS:
                try:
                    wait_until(lambda: self.cd.getval(f'{plugin}-{INSTANCE}/up') ==
                               {'value': 1.0}, 30, f'{plugin} up')
                except Timeout:
                    if self.require_up:
                        raise
                    self.never_up.append(plugin)
            if not self.never_up:
                wait_until(lambda: self.cd.getval(
                    f'dpdktel_events-{INSTANCE}.port0/link_status') == {'value': 1.0}, 30,
                    'port 0 link up')
            self.ctl = linkctl.Client()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.ctl:
            self.ctl.close()
            self.ctl = None
        if self.cd:
            self.cd.cleanup()
        self.app.cleanup()
        for root, dirs, files in os.walk(self.tmp, topdown=False):
            for n in files:
                os.unlink(os.path.join(root, n))
            for n in dirs:
                os.rmdir(os.path.join(root, n))
        os.rmdir(self.tmp)

    # Reading collectd -------------------------------------------------------------------

    def counter_rows(self, plugin, type_instance, type_='telemetry_requests'):
        return self.cd.csv(f'{plugin}-{INSTANCE}/{type_}-{type_instance}')

    def _rate(self, rows, t0, t1):
        """Per second between the csv rows nearest t0 and t1 (time.time())."""
        inside = [r for r in rows if t0 - 0.5 <= r[0] <= t1 + 1.5]
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return float('nan')
        return (inside[-1][1][0] - inside[0][1][0]) / (inside[-1][0] - inside[0][0])

    def values_of_instance(self):
        """{'plugin/type[-instance]': [(t, value)]} of every instance-wide value written."""
        out = {}
        base = os.path.join(self.cd.csv_dir, self.cd.hostname)
        for plugin in PLUGINS:
            d = os.path.join(base, f'{plugin}-{INSTANCE}')
            if not os.path.isdir(d):
                continue
            names = {f[:-11] for f in os.listdir(d)}  # "<type>-<ti>-YYYY-MM-DD"
            for name in names:
                out[f'{plugin}/{name}'] = [(t, v[0]) for t, v in
                                           self.cd.csv(f'{plugin}-{INSTANCE}/{name}')]
        return out

    # The measurement ----------------------------------------------------------------------

    def flap_timeout(self):
        """How long a link change may take to be reported: 10 s, or more where the events
        plugin says its link poll interval in force is long (issue 24: poll_interval/link; the
        interval at most doubles from one poll to the next): twice that + Timeout + 2 s."""
        v = self.cd.getval(f'dpdktel_events-{INSTANCE}/poll_interval-link')
        return max(10.0, 2 * v['value'] + TIMEOUT + 2) if v else 10.0

    def settle(self, budget, most):
        """Wait (up to `most` s) until the events plugin's app_load, what it reckons both
        plugins cost the application over the last 10 s, is within `budget` (% of one core):
        a plugin over its MaxAppLoad stretches its intervals once three rounds of each kind
        have measured their cost, so the steady state comes some seconds after the start. Seconds waited;
        0 where the plugin reports no app_load; None when it did not settle."""
        ident = f'dpdktel_events-{INSTANCE}/app_load'
        if self.cd.getval(ident) is None:
            return 0.0
        t0 = time.monotonic()
        try:
            wait_until(lambda: self.cd.getval(ident)['value'] <= budget, most,
                       f'app_load within {budget:g} %', interval=0.5)
        except Timeout:
            return None
        return time.monotonic() - t0

    def flap(self, state, rx):
        """Set port 0's interface down or up; the latency of its notification (s), or None
        when none came within flap_timeout()."""
        timeout = self.flap_timeout()
        self.notes.new()  # forget what came before
        off = realtime_offset()
        t = self.ctl.set(self.iface, state)
        try:
            note = self.notes.wait(rx, timeout=timeout)
        except TimeoutError:
            return None
        return note['time'] - off - t

    def after_read(self, most=READ_WAIT):
        """Return once the stats plugin has finished a read (its duration-read value is
        written after it): True, or False when none came within `most` s (reads stretched
        further, as a benchmark's profile may; the window is then not aligned)."""
        ident = f'dpdktel_stats-{INSTANCE}/duration-read'
        seen = len(self.cd.csv(ident))
        try:
            wait_until(lambda: len(self.cd.csv(ident)) > seen, most, 'a stats read',
                       interval=0.05)
        except Timeout:
            return False
        return True

    def measure(self, seconds, warmup=5.0, settle_most=60.0):
        """The window: link down/up cycles for `seconds`; returns the results (a dict). It
        begins after `warmup` s, and once the plugins' own app_load is within MaxAppLoad (up
        to settle_most s more; settle())."""
        time.sleep(warmup)  # the plugins' first reads, before the window
        settled = self.settle(BUDGET, settle_most)
        tel = telemetry_threads(self.release)
        pid = self.app.pid
        # The window holds whole read cycles: it begins and ends right after a stats read, so
        # that its CPU is that of n reads over n intervals, not of however many of their
        # bursts (a slow application's come every ~10 s) it happened to catch.
        aligned = self.after_read()
        w0 = time.time()
        t0, tel0, cd0 = time.monotonic(), cpu.thread_times(pid, tel), cpu.tree_times(self.cd.pid)
        downs, ups, missed = [], [], 0
        while time.monotonic() - t0 < seconds:
            for state, rx, out in (('down', r'^Link down on app port 0 ', downs),
                                   ('up', r'^Link up on app port 0: ', ups)):
                # Changes at every phase of the poll, and a while apart.
                time.sleep(0.3 + 0.5 * ((len(downs) * 7 + len(ups) * 3) % 10) / 10)
                lat = self.flap(state, rx)
                if lat is None:
                    missed += 1
                else:
                    out.append(lat)
        aligned = self.after_read() and aligned
        t1, tel1, cd1 = time.monotonic(), cpu.thread_times(pid, tel), cpu.tree_times(self.cd.pid)
        w1 = time.time()
        if not self.app.running():
            raise Fatal(f'testpmd exited:\n{self.app.log()[-2000:]}')
        if not self.cd.running():
            raise Fatal(f'collectd exited:\n{self.cd.log()[-4000:]}')
        # One more interval: the csv rows after the window's end.
        for plugin in PLUGINS:
            self.cd.wait_value(f'{plugin}-{INSTANCE}/telemetry_requests-sent',
                               lambda row: row[0] >= w1 + 0.5, timeout=10)
        used, lost = cpu.delta(tel0, tel1)
        # After the window, under the host's load of the window's end.
        link_wall = request_wall(self.app, '/ethdev/link_status,1')
        r = {'release': self.release.version, 'ports': self.nports, 'never_up': self.never_up,
             'settled': settled, 'aligned': aligned,
             'slow': self.slow, 'seconds': t1 - t0, 'window': (w0, w1),
             'app_cpu': used / 1e9 / (t1 - t0) * 100, 'app_threads_lost': lost,
             'collectd_cpu': cpu.delta(cd0, cd1)[0] / 1e9 / (t1 - t0) * 100,
             'downs': downs, 'ups': ups, 'missed': missed, 'load': host_load(),
             'liveness_cost': self.liveness_cost, 'link_cost': self.link_cost,
             'list_cost': self.list_cost, 'link_wall': link_wall}
        r['rate'] = {p: self._rate(self.counter_rows(p, 'sent'), w0, w1) for p in PLUGINS}
        r['requests_per_s'] = sum(r['rate'].values())
        r.update(self.run_counts(w1))
        everything = self.values_of_instance()
        r['values'] = {k: [v for t, v in rows if w0 <= t <= w1 + 1.5]
                       for k, rows in everything.items()}
        # The stats plugin's reads in the window: it dispatches duration/read once a read
        # (a read that MaxAppLoad puts off dispatches nothing).
        r['reads'] = sum(w0 <= t <= w1 for t, _ in everything.get('dpdktel_stats/duration-read',
                                                                  []))
        self.results = r
        return r

    def run_counts(self, until):
        """From collectd's start to `until` (time.time()): false notifications, failed
        requests, "does not answer" log lines."""
        notes = [n for n in self.notes.all() if n['time'] <= until]
        false = [n for n in notes if kind_of(n['message']) in FALSE_KINDS]
        failed = {}
        for p in PLUGINS:
            rows = [row for row in self.counter_rows(p, 'failed') if row[0] <= until + 1.5]
            failed[p] = int(rows[-1][1][0]) if rows else None
        lines = [line for line in self.cd.log().splitlines() if LOG_RE.match(line)
                 and LOG_RE.match(line).group(2) == 'warning']
        return {'false': false, 'failed': failed, 'warnings': lines}

    def stop_check(self, timeout=30):
        """SIGSTOP the application until "not responding" comes (or timeout), then SIGCONT
        until "answers again". Returns (seconds from SIGSTOP to "not responding" or None,
        the notifications in between, seconds from SIGCONT to "answers again" or None)."""
        self.notes.new()
        os.kill(self.app.pid, signal.SIGSTOP)
        t_stop = time.time()
        try:
            try:
                nr = self.notes.wait(r'^DPDK application app is not responding \(', timeout)
                nr_after = nr['time'] - t_stop
            except TimeoutError:
                nr_after = None
        finally:
            os.kill(self.app.pid, signal.SIGCONT)
            t_cont = time.time()
        try:
            aa = self.notes.wait(r'^DPDK application app answers again after ', timeout)
            aa_after = aa['time'] - t_cont
        except TimeoutError:
            aa_after = None
        between = [n for n in self.notes.all() if t_stop <= n['time'] <= time.time()]
        return nr_after, between, aa_after


def summary(r):
    """One line of a run's results, for logs."""
    kinds = [kind_of(n['message']) for n in r['false']]
    never = f' (never up: {", ".join(r["never_up"])})' if r['never_up'] else ''
    return (f'{r["release"]} {r["ports"]} ports {"slow" if r["slow"] else "fast"}{never}: '
            f'{r["requests_per_s"]:.0f} req/s, app telemetry {r["app_cpu"]:.2f} % of a core '
            f'({r["reads"]} stats reads in {r["seconds"]:.0f} s), '
            f'link down p95 {pct(r["downs"], 95) * 1e3:.0f} ms of {len(r["downs"])}, '
            f'{r["missed"]} missed, liveness poll {r["liveness_cost"] / 1e3:.0f} us, '
            f'link request {r["link_cost"] / 1e3:.0f} us '
            f'({r["link_wall"] / 1e3:.0f} us from the socket after the window), '
            f'list request {r["list_cost"] / 1e3:.0f} us, false {len(kinds)} '
            f'({", ".join(f"{k} {kinds.count(k)}" for k in FALSE_KINDS if k in kinds)}), '
            f'failed {r["failed"]}, warnings {len(r["warnings"])}, '
            f'collectd {r["collectd_cpu"]:.1f} %, load {r["load"][0]:.1f}, settled after '
            f'{"(never)" if r["settled"] is None else format(r["settled"], ".0f")} s'
            f'{"" if r.get("aligned", True) else ", window not aligned on stats reads"}'
            f'{reckoned(r)}')


def reckoned(r):
    """What the events plugin reckons the polls and the reads cost over the window (the mean
    of its app_load-polls and -reads, % of one core), beside what /proc showed: where the
    application's CPU is over the budget, whether the plugin's accounting saw it."""
    vals = r.get('values', {})
    parts = []
    for kind in ('polls', 'reads'):
        xs = vals.get(f'dpdktel_events/app_load-{kind}', [])
        if xs:
            parts.append(f'{kind} {sum(xs) / len(xs):.2f} %')
    return f', reckoned {" + ".join(parts)}' if parts else ''


def median(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else float('nan')
