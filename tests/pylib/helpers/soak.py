"""The soak: a real collectd with both plugins polling four real DPDK applications while a CPU
hog keeps every core busy, and a real SIGSTOP of one application at a time.

Shared by tests/bench/soak (10 minutes, prints a table) and tests/integration/test_soak.py
(about a minute, asserts). What must hold: no gone/back/not-responding/restarted notification
and no "does not answer" log line for an application outside its own stops, and each stop of
STOP_S (3 s) reported exactly once as "not responding" and once as "answers again", never as
"gone".

The applications (names are the collectd instances):
  fwd1, fwd2  dpdktel-fwd on two net_null ports that receive nothing (no-rx=1), with
              --idle-sleep-us 100: about a tenth of a core each;
  pmd         dpdk-testpmd -l 0,1 on two net_null ports: its forwarding lcore busy-polls
              CPU 1, its telemetry threads run on CPU 0 (the main lcore's);
  shared      dpdktel-fwd started under `taskset -c 1` with --lcores=0@1,1@1 on two net_null
              ports that always receive: its forwarding lcore busy-polls CPU 1 and, as DPDK
              22.11 computes the control cpuset (compute_ctrl_threads_cpuset in
              lib/eal/common/eal_common_options.c: the process's CPUs minus the lcores'
              CPUs, else the main lcore's CPUs), its telemetry threads are pinned to CPU 1
              as well. shared_affinity() reads the real placement from /proc.
The hog: one `while 1: pass` process per CPU, unpinned, at normal priority.

With slow=True (tests/bench/soak, not the short test) a fifth application, as slow as a real
driver (issue 24):
  slow        dpdk-testpmd -i on 32 net_null ports with tests/tools/dtel_slow_telemetry.so
              preloaded (/ethdev/xstats 15 ms, /ethdev/link_status 2 ms, busy-waiting on its
              telemetry thread, CPU 0), forwarding stopped so that it adds no third busy
              lcore on CPU 1; it answers everything, slowly, and takes its turn in the stops.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from . import cpu, dpdk, slowtel
from .collectd import Collectd
from .notes import Notes
from .process import end
from .threads import lcore_tid
from .wait import Fatal, Timeout, wait_until

STOP_S = 3.0
# A notification belongs to a stop when it comes between the SIGSTOP and this long after the
# SIGCONT ("answers again" comes at the first poll that is answered, a few ms after SIGCONT
# on an idle host).
GRACE_S = 5.0
NAMES = ('fwd1', 'fwd2', 'pmd', 'shared')
ROTATION = ('shared', 'pmd', 'fwd1', 'fwd2')  # the order in which stops go round
SLOW_PORTS = 32

KINDS = (('not_responding', re.compile(r'^DPDK application \S+ is not responding \(')),
         ('answers_again', re.compile(r'^DPDK application \S+ answers again after ')),
         ('gone', re.compile(r'^DPDK application \S+ is gone$')),
         ('back', re.compile(r'^DPDK application \S+ is back after ')),
         ('restarted', re.compile(r'^DPDK application \S+ restarted \(pid ')))
INSTANCE_KINDS = tuple(k for k, _ in KINDS)

# What plugins/common/target.c logs for an application that does not answer (note_down:
# WARNING "<plugin> plugin: DPDK application '<name>' (<path>) <reason> [<command>]") and
# when it answers again (note_up: INFO "... answers again, pid <N>"); logfile's Timestamp
# is to the second, local time.
LOG_RE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] \[(\w+)\] (dpdktel_\w+) plugin: "
                    r"DPDK application '([^']+)' \(([^)]*)\) (.*)$")


def kind_of(message):
    for kind, rx in KINDS:
        if rx.search(message):
            return kind
    return 'other'


def applications(fwd_bin, slow_env=None):
    """The four applications (five with slow_env: the environment of the slow one), not
    started, by instance name."""
    quiet = [f'net_null{i},no-rx=1' for i in range(2)]
    idle = ['--idle-sleep-us', '100']
    shared = dpdk.fwd(fwd_bin, vdevs=['net_null0', 'net_null1'],
                      eal_extra=['--lcores=0@1,1@1'])
    shared.argv = ['taskset', '-c', '1'] + shared.argv  # taskset execs: the same pid
    apps = {'fwd1': dpdk.fwd(fwd_bin, vdevs=quiet, app_args=idle),
            'fwd2': dpdk.fwd(fwd_bin, vdevs=quiet, app_args=idle),
            'pmd': dpdk.testpmd(nports=2),
            'shared': shared}
    if slow_env is not None:
        apps['slow'] = dpdk.testpmd(nports=SLOW_PORTS, extra=['-i'], env=slow_env)
    return apps


def stop_forwarding(app):
    """testpmd -i: `stop` on its stdin; its forwarding lcore then sleeps (waits for work)
    instead of polling, which /proc shows."""
    app.proc.stdin.write(b'stop\n')
    app.proc.stdin.flush()
    tid = lcore_tid(app.pid, 1)
    wait_until(lambda: thread_state(app.pid, tid) == 'S', 10, 'testpmd forwarding stopped')


def thread_state(pid, tid):
    """The state letter of /proc/<pid>/task/<tid>/stat (R running, S sleeping, ...)."""
    with open(f'/proc/{pid}/task/{tid}/stat') as f:
        return f.read().rsplit(')', 1)[1].split()[0]


def threads(pid):
    """[(tid, comm, sorted CPUs it may run on)] of a process."""
    out = []
    for tid in sorted(os.listdir(f'/proc/{pid}/task'), key=int):
        try:
            out.append((int(tid), cpu.comm(pid, tid), sorted(os.sched_getaffinity(int(tid)))))
        except (ProcessLookupError, FileNotFoundError, TypeError):
            pass  # a telemetry client thread that just ended
    return out


def shared_affinity(app):
    """{comm: CPUs} of the telemetry listener and the forwarding lcore of an application."""
    seen = {c: cpus for _, c, cpus in threads(app.pid)}
    return {k: seen.get(k) for k in ('telemetry-v2', 'rte-worker-1')}


def config(apps, notes):
    """Both plugins on every application: dpdktel_stats at collectd's Interval and its own
    defaults, dpdktel_events at PollInterval 0.02 and its defaults (Timeout 0.2,
    NotRespondingPolls 3). Only telemetry_requests, up and not_responding reach the csv
    writer (a PostCache chain), so that its cost stays out of collectd's CPU figure."""
    inst = ''.join(f'  <Instance "{n}">\n    SocketPath "{a.socket}"\n  </Instance>\n'
                   for n, a in apps.items())
    return ('LoadPlugin match_regex\nPostCacheChain "dtel_soak"\n<Chain "dtel_soak">\n'
            '  <Rule "kept">\n    <Match "regex">\n'
            '      Type "^(telemetry_requests|up|not_responding)$"\n    </Match>\n'
            '    Target "write"\n  </Rule>\n  Target "stop"\n</Chain>\n' + notes.config() +
            f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n{inst}</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n'
            f'{inst}</Plugin>\n')


def host_busy():
    """(busy, steal, total) jiffies of all CPUs from /proc/stat. Steal is time the hypervisor
    ran something else while a vCPU had work: every thread on that vCPU stood still."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, fields[7], sum(fields)


class Hog:
    """One busy-looping process per CPU, ended by PID."""

    def __init__(self, n=None):
        self.n = n or os.cpu_count()
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, '-c', 'while 1: pass'],
                                               start_new_session=True))
        return self

    def alive(self):
        return all(p.poll() is None for p in self.procs)

    def __exit__(self, *exc):
        for p in self.procs:
            end(p, signal.SIGKILL)


def counter(cd, ident):
    row = cd.last(ident)
    return int(row[1][0]) if row else None


def stop_for(pid, seconds):
    """The injected fault: SIGSTOP, `seconds`, SIGCONT. Returns (stop, cont) in time.time()."""
    os.kill(pid, signal.SIGSTOP)
    t_stop = time.time()
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)
        t_cont = time.time()
    return t_stop, t_cont


def log_lines(cd):
    """target.c's lines about applications: dicts with time, level, plugin, app, text."""
    out = []
    for line in cd.log().splitlines():
        m = LOG_RE.match(line)
        if m:
            out.append({'time': time.mktime(time.strptime(m.group(1), '%Y-%m-%d %H:%M:%S')),
                        'level': m.group(2), 'plugin': m.group(3), 'app': m.group(4),
                        'text': m.group(6), 'line': line})
    return out


def run(build_dir, source_dir, duration, period, progress=lambda *a: None, slow=False,
        slow_profile=(slowtel.SLOW, 'busy')):
    """One soak of `duration` seconds (counted from the moment every application is up in
    both plugins and the hog runs), a stop every `period` seconds, the first after
    period / 2. slow: with the fifth, slow application, its telemetry as slow_profile says
    ((DTEL_SLOW_TELEMETRY, mode): slowtel.PROFILES). Returns the raw results (see
    summarize())."""
    fwd_bin = os.path.join(build_dir, 'fwd', 'dpdktel-fwd')
    tmp = tempfile.mkdtemp(prefix='dtel-soak-')
    notes = Notes(tmp)
    spec, mode = slow_profile
    apps = applications(fwd_bin, slowtel.shim_env(build_dir, spec, mode) if slow else None)
    rotation = ROTATION + (('slow',) if slow else ())
    started = []
    r = {'duration_planned': duration, 'period': period, 'stops': [], 'names': list(apps)}
    try:
        for name, app in apps.items():
            app.start()
            started.append(app)
        if slow:
            stop_forwarding(apps['slow'])
        r['shared_affinity'] = shared_affinity(apps['shared'])
        r['threads'] = {n: threads(a.pid) for n, a in apps.items()}
        r['pids'] = {n: a.pid for n, a in apps.items()}
        with Collectd(build_dir, source_dir, config(apps, notes),
                      system_plugins=('exec', 'match_regex'),
                      ours=('dpdktel_stats', 'dpdktel_events')) as cd:
            for n in apps:
                for plugin in ('dpdktel_events', 'dpdktel_stats'):
                    wait_until(lambda: cd.getval(f'{plugin}-{n}/up') == {'value': 1.0}, 30,
                               f'{plugin} up for {n}')
            progress(f'all {len(apps)} applications up in both plugins')

            samples = []

            def check_alive(hog):
                samples.append((time.time(),) + host_busy())
                for n, a in apps.items():
                    if not a.running():
                        raise Fatal(f'{n} exited with {a.proc.returncode}:\n{a.log()}')
                if not cd.running():
                    raise Fatal(f'collectd exited:\n{cd.log()}')
                if not hog.alive():
                    raise Fatal('a CPU hog exited')

            with Hog() as hog:
                t0, cd0, host0 = time.monotonic(), cpu.tree_times(cd.pid), host_busy()
                r['start'] = time.time()
                k = 0
                while True:
                    at = t0 + period * (k + 0.5)
                    if at + STOP_S > t0 + duration:
                        break
                    while time.monotonic() < at:  # the schedule; watch the processes meanwhile
                        check_alive(hog)
                        time.sleep(min(0.5, max(0.0, at - time.monotonic())))
                    name = rotation[k % len(rotation)]
                    t_stop, t_cont = stop_for(apps[name].pid, STOP_S)
                    r['stops'].append({'app': name, 'stop': t_stop, 'cont': t_cont})
                    progress(f'stop {k + 1}: {name} stopped {t_cont - t_stop:.2f} s')
                    k += 1
                while time.monotonic() < t0 + duration:
                    check_alive(hog)
                    time.sleep(min(0.5, max(0.0, t0 + duration - time.monotonic())))
                # Last stop: its "answers again" may still be on its way.
                if r['stops']:
                    last = r['stops'][-1]
                    try:
                        wait_until(lambda: any(
                            kind_of(n['message']) == 'answers_again' and n['time'] >= last['cont']
                            and n.get('PluginInstance') == last['app'] for n in notes.all()),
                            max(1.0, last['cont'] + GRACE_S - time.time()),
                            f'"answers again" of {last["app"]}')
                    except Timeout:
                        pass  # counted as not reported
                t1, cd1, host1 = time.monotonic(), cpu.tree_times(cd.pid), host_busy()
                r['end'] = time.time()
            r['duration'] = t1 - t0
            r['collectd_cpu'] = cpu.delta(cd0, cd1)[0] / 1e9 / (t1 - t0) * 100
            total = max(1, host1[2] - host0[2])
            r['host_busy'] = (host1[0] - host0[0]) / total * 100
            r['steal'] = (host1[1] - host0[1]) / total * 100
            # The worst steal between two looks at the processes (about 0.5 s apart).
            r['steal_max'] = max([(b[2] - a[2]) / max(1, b[3] - a[3]) * 100
                                  for a, b in zip(samples, samples[1:])] or [0.0])
            r['samples'] = samples
            # The csv writer got the counters at each interval; one more interval for the last.
            wait_until(lambda: all(counter(cd, f'dpdktel_events-{n}/telemetry_requests-sent')
                                   for n in apps), 10, 'telemetry_requests in csv')
            r['requests'] = {n: {(p, t): counter(cd, f'{p}-{n}/telemetry_requests-{t}')
                                 for p in ('dpdktel_events', 'dpdktel_stats')
                                 for t in ('sent', 'failed')} for n in apps}
            r['notes'] = notes.all()
            r['log'] = log_lines(cd)
            r['log_text'] = cd.log()
    finally:
        for app in started:
            app.cleanup()
        subprocess.run(['rm', '-rf', tmp], check=False)
    return r


def in_window(t, stop, slack=0.0):
    return stop['stop'] - slack <= t <= stop['cont'] + GRACE_S + slack


def summarize(r):
    """Per application: stops, stops reported (exactly one not responding and one answers
    again, no gone/back), false notifications (instance kinds outside the application's own
    stops), other notifications, and target.c's log lines outside its stops. Per stop: what
    came in its window, and the latencies."""
    apps = {n: {'stops': 0, 'reported': 0, 'false': [], 'other': [], 'false_log': [],
                'requests': r['requests'][n]} for n in r.get('names', NAMES)}
    for s in r['stops']:
        mine = [n for n in r['notes'] if n.get('PluginInstance', '').split('.')[0] == s['app']
                and in_window(n['time'], s)]
        kinds = [kind_of(n['message']) for n in mine]
        s['kinds'] = kinds
        s['messages'] = [n['message'] for n in mine]
        nr = [n for n in mine if kind_of(n['message']) == 'not_responding']
        aa = [n for n in mine if kind_of(n['message']) == 'answers_again']
        s['nr_after'] = nr[0]['time'] - s['stop'] if nr else None
        s['aa_after'] = aa[0]['time'] - s['cont'] if aa else None
        s['reported'] = (kinds.count('not_responding') == 1 and kinds.count('answers_again') == 1
                         and 'gone' not in kinds and 'back' not in kinds
                         and 'restarted' not in kinds)
        apps[s['app']]['stops'] += 1
        apps[s['app']]['reported'] += s['reported']
    for n in r['notes']:
        app = n.get('PluginInstance', '').split('.')[0]
        if app not in apps:
            continue
        mine = [s for s in r['stops'] if s['app'] == app and in_window(n['time'], s)]
        if kind_of(n['message']) in INSTANCE_KINDS:
            if not mine:
                apps[app]['false'].append(n)
        else:
            apps[app]['other'].append(dict(n, during_stop=bool(mine)))
    for line in r['log']:
        if line['app'] in apps and line['level'] == 'warning' and not any(
                s['app'] == line['app'] and in_window(line['time'], s, slack=1.0)
                for s in r['stops']):
            apps[line['app']]['false_log'].append(line)
    return apps


def explain(r, apps):
    """Text for each false notification and log line: when (s after the start of the soak),
    what, and collectd's log lines from 2 s before to 2 s after it."""
    out = []
    t0 = r.get('start', 0)
    lines = r['log_text'].splitlines()

    samples = r.get('samples', [])

    def around(t):
        steal = [f'{a[0] - t0:+.1f}..{b[0] - t0:+.1f} s: busy '
                 f'{(b[1] - a[1]) / max(1, b[3] - a[3]) * 100:.0f} %, steal '
                 f'{(b[2] - a[2]) / max(1, b[3] - a[3]) * 100:.0f} %'
                 for a, b in zip(samples, samples[1:]) if a[0] - 1 <= t <= b[0] + 1]
        near = ['      host CPU ' + x for x in steal]
        for line in lines:
            m = re.match(r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]', line)
            if m and abs(time.mktime(time.strptime(m.group(1), '%Y-%m-%d %H:%M:%S')) - t) <= 2:
                near.append('      ' + line)
        return near

    for name, a in apps.items():
        for n in a['false']:
            out.append(f'  {name}: notification at {n["time"] - t0:+.3f} s '
                       f'({n["Severity"]}) {n["message"]!r}')
            out += around(n['time'])
        for line in a['false_log']:
            out.append(f'  {name}: log line at {line["time"] - t0:+.0f} s: {line["line"]}')
            out += around(line['time'])
    for s in r['stops']:
        out.append(f'  stop of {s["app"]} at {s["stop"] - t0:+.3f} s for '
                   f'{s["cont"] - s["stop"]:.2f} s: {s.get("messages")}')
        if not s.get('reported', True):
            # What collectd logged about that application from the SIGSTOP to the end of
            # its grace time (logfile stamps to the second).
            for line in lines:
                m = re.match(r'^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]', line)
                mine = (f"'{s['app']}'" in line or
                        f'plugin_instance = {s["app"]},' in line)
                if (m and mine and in_window(
                        time.mktime(time.strptime(m.group(1), '%Y-%m-%d %H:%M:%S')), s, 1.0)):
                    out.append('      ' + line)
    return '\n'.join(out)
