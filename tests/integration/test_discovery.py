"""Discovery with a real collectd and both plugins: names that clash, planted in the runtime
dir, and many short-lived DPDK applications that must not leave threads or memory behind.

Each test has a runtime dir of its own (RuntimeDir of both plugins, RUNTIME_DIRECTORY of its
DPDK processes), so discovery sees only what the test put there.
"""
import os
import re
import shutil
import socket
import tempfile

import pytest

from helpers import dpdk, sanitizers
from helpers.collectd import Collectd
from helpers.process import status_field
from helpers.wait import wait_until

LONG_A = 'long_prefix_' + 'a' * 52 + '_1'  # 65 characters: cut to 63, the same for both
LONG_B = 'long_prefix_' + 'a' * 52 + '_2'


@pytest.fixture
def runtime():
    """<base>/dpdk is the runtime dir the plugins read and the applications write."""
    base = tempfile.mkdtemp(prefix='rt', dir='/tmp')  # short: 65-character prefixes fit sun_path
    os.makedirs(os.path.join(base, 'dpdk'))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def plant_stale(rundir, prefix, name='dpdk_telemetry.v2'):
    """A socket file nothing listens on, as a killed application leaves it (or anyone who
    may write the runtime dir can make it)."""
    d = os.path.join(rundir, prefix)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.close()
    return path


def both_plugins(rundir, extra='', instances=''):
    return ''.join(
        f'LoadPlugin {p}\n<Plugin {p}>\n  Discover true\n  RuntimeDir "{rundir}"\n{extra}'
        f'{instances}</Plugin>\n' for p in ('dpdktel_stats', 'dpdktel_events'))


def instances_with_up(cd, plugin):
    """The plugin instances of @plugin that have an 'up' value in collectd's cache."""
    out = set()
    for ident in cd.listval():
        host_rest = ident.split('/', 1)[1]
        m = re.fullmatch(re.escape(plugin) + r'-(.+)/up', host_rest)
        if m:
            out.add(m.group(1))
    return out


def test_clashing_names_planted(build_dir, source_dir, runtime):
    """Planted socket files whose names clash (a prefix 'discover', 'a_1' beside 'a:1', two
    long prefixes cut to one name, 'P.port1' beside a live testpmd 'P_port1') and an
    <Instance "discover"> beside Discover true: collectd stays up, every instance has a name
    of its own in both plugins, the live application keeps its plain name, and each rename
    is logged once. On today's main the 'discover' prefix made dpdktel_stats free an
    instance twice (collectd crashed)."""
    rundir = os.path.join(runtime, 'dpdk')
    live = dpdk.unique_prefix('c')
    for prefix, name in (('discover', 'dpdk_telemetry.v2'), ('a', 'dpdk_telemetry.v2:1'),
                         ('a_1', 'dpdk_telemetry.v2'), (LONG_A, 'dpdk_telemetry.v2'),
                         (LONG_B, 'dpdk_telemetry.v2'), (live + '.port1', 'dpdk_telemetry.v2')):
        plant_stale(rundir, prefix, name)
    app = dpdk.testpmd(prefix=live + '_port1', nports=1, runtime_base=runtime)
    conf = both_plugins(rundir, instances='  <Instance "discover">\n'
                        '    SocketPath "/nonexistent/dpdk_telemetry.v2"\n  </Instance>\n')
    with app, Collectd(build_dir, source_dir, conf, ours=('dpdktel_stats', 'dpdktel_events'),
                       interval=0.5) as cd:
        cd.wait_value(f'dpdktel_stats-{live}_port1.port0/if_packets', what='the live testpmd')
        for plugin in ('dpdktel_stats', 'dpdktel_events'):
            wait_until(lambda: len(instances_with_up(cd, plugin)) >= 8, 20,
                       f'8 instances of {plugin}')
            names = instances_with_up(cd, plugin)
            assert len(names) == 8, names
            assert {'discover', 'a_1', f'{live}_port1'} <= names, names
            assert all(len(n) <= 63 for n in names), names
            hashed = [n for n in names if re.search(r'_[0-9a-f]{8}$', n)]
            assert len(hashed) == 5, names
        wait_until(lambda: (cd.getval(f'dpdktel_events-{live}_port1/up') or {}).get('value') == 1,
                   10, 'the live testpmd up in dpdktel_events')
        # Four more intervals (discovery passes): no rename logged twice, nothing refused.
        rows = len(cd.csv(f'dpdktel_stats-{live}_port1/up'))
        wait_until(lambda: len(cd.csv(f'dpdktel_stats-{live}_port1/up')) >= rows + 4, 10,
                   'four more reads')
        log = cd.log()
        for plugin in ('dpdktel_stats', 'dpdktel_events'):
            assert log.count(f'{plugin} plugin: the DPDK application at ') == 5, log
        assert 'already registered' not in log
        assert 'cannot register' not in log
        assert cd.running()


def threads(pid):
    return int(status_field(pid, 'Threads'))


def test_short_lived_applications_retired(build_dir, source_dir, runtime, fwd_bin):
    """Real DPDK processes, each with a file prefix of its own, started and ended one or two
    at a time under RetireAfter 1: every instance is retired in both plugins (one INFO line
    each), and collectd's thread count and RSS come back to where they were. On today's main
    dpdktel_events kept one poll thread per application ever seen."""
    rundir = os.path.join(runtime, 'dpdk')
    conf = both_plugins(rundir, extra='  RetireAfter 1\n')
    n = 12

    peak = [0]

    def run(prefixes):
        """Start these applications together, wait until both plugins have them, end them."""
        apps = [dpdk.fwd(fwd_bin, prefix=p, nports=1, runtime_base=runtime) for p in prefixes]
        try:
            for a in apps:
                a.start()
            for p in prefixes:
                cd.wait_value(f'dpdktel_stats-{p}/up', lambda row: row[1][0] == 1,
                              what=f'{p} collected')
                wait_until(lambda p=p: f"watching DPDK application '{p}'" in cd.log(), 10,
                           f'{p} watched')
            peak[0] = max(peak[0], threads(cd.pid))
        finally:
            for a in apps:
                a.cleanup()

    def retired(count):
        log = cd.log()
        return all(len(re.findall(pl + r" plugin: DPDK application '[^']+' \([^)]+\) has been "
                                  r'gone for \d+ s, more than RetireAfter: retired', log))
                   >= count for pl in ('dpdktel_stats', 'dpdktel_events'))

    with Collectd(build_dir, source_dir, conf, ours=('dpdktel_stats', 'dpdktel_events'),
                  interval=0.5) as cd:
        # Warm up: the first application and its retirement allocate what stays (caches,
        # arenas of the read threads); the baseline is taken after it.
        run([dpdk.unique_prefix('w')])
        wait_until(lambda: retired(1), 20, 'warm-up application retired')
        base_threads, base_rss = threads(cd.pid), cd.rss_kib()
        prefixes = [dpdk.unique_prefix('r') for _ in range(n)]
        # Two at a time, then one at a time, alternately.
        for i in range(0, n, 4):
            run(prefixes[i:i + 2])
            run(prefixes[i + 2:i + 3])
            run(prefixes[i + 3:i + 4])
        assert peak[0] > base_threads  # a poll thread per application while it ran
        wait_until(lambda: retired(1 + n), 30, f'{n} more applications retired')
        wait_until(lambda: threads(cd.pid) == base_threads, 10, 'thread count back')
        rss = cd.rss_kib()
        print(f'threads {base_threads} -> peak {peak[0]} -> {threads(cd.pid)}; '
              f'RSS {base_rss} -> {rss} KiB')
        # Under ASan freed memory stays in its quarantine (256 MiB by default): RSS says
        # nothing there; the leak checker at exit does (no_sanitizer_reports_at_exit).
        if not sanitizers.enabled():
            assert rss - base_rss < 4096, (base_rss, rss)
        assert cd.running()


def test_second_application_on_a_prefix_named_after_its_program(build_dir, source_dir, runtime,
                                                                fwd_bin):
    """A testpmd and a dpdktel-fwd on one prefix (no shared config, as OVS's --in-memory and
    another application on 'rte'): the first keeps the prefix as its name, the one at
    dpdk_telemetry.v2:1 is named after its program, not 'P_1'. When they restart in the
    other order, the name that followed the forwarder is retired and the program now at :1
    gets its own."""
    rundir = os.path.join(runtime, 'dpdk')
    prefix = dpdk.unique_prefix('s')
    pmd = dpdk.testpmd(prefix=prefix, nports=1, runtime_base=runtime)
    pmd.argv.insert(pmd.argv.index('--'), '--no-shconf')
    fwd = dpdk.fwd(fwd_bin, prefix=prefix, nports=1, index=1, runtime_base=runtime,
                   eal_extra=['--no-shconf'], app_args=['--idle-sleep-us', '100'])
    # RetireAfter stays 60 s: the renaming, not the retiring of a gone application, is tested.
    with pmd, fwd, Collectd(build_dir, source_dir, both_plugins(rundir),
                            ours=('dpdktel_stats', 'dpdktel_events'), interval=0.5) as cd:
        for plugin in ('dpdktel_stats', 'dpdktel_events'):
            wait_until(lambda p=plugin: instances_with_up(cd, p) >= {
                prefix, f'{prefix}_dpdktel-fwd'}, 20, f'both applications in {plugin}')
        # Restart in the other order: the forwarder first takes the :0 socket.
        pmd.kill9()
        fwd.kill9()
        fwd.index, pmd.index = 0, 1
        fwd.start()
        pmd.start()
        cd.wait_value(f'dpdktel_stats-{prefix}_dpdk-testpmd/up', lambda r: r[1] == [1],
                      timeout=30, what='the testpmd now at :1 under its program name')
        for plugin in ('dpdktel_stats', 'dpdktel_events'):
            line = (f"{plugin} plugin: DPDK application '{prefix}_dpdktel-fwd' "
                    f"({rundir}/{prefix}/dpdk_telemetry.v2:1): dpdk-testpmd now listens there "
                    "instead of dpdktel-fwd: retired")
            wait_until(lambda l=line: l in cd.log(), 10, f'{plugin} logs the renaming')
        assert f"'{prefix}_1'" not in cd.log()
