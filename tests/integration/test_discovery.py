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

from helpers import dpdk
from helpers.collectd import Collectd
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
