"""dpdktel_stats' device classes in a real collectd against real processes of the system's DPDK
(Debian's, 22.11 on bookworm and 24.11 on trixie: the releases of the cache are built with net
drivers only, docs/dpdktel_stats.md): testpmd with the virtual devices Debian ships
(crypto_null, dma_skeleton, event_sw, rawdev_skeleton) and dpdk-test-crypto-perf driving
crypto_null and dpdk-test-eventdev driving event_sw, whose counters move."""
import contextlib
import os
import shutil

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.telemetry import Client
from helpers.wait import Fatal, wait_until

# The driver of each virtual device, and its Debian package without the DPDK ABI
# (librte-crypto-null23 on bookworm, librte-crypto-null25 on trixie; scripts/bootstrap).
DRIVERS = {'crypto_null0': ('librte_crypto_null.so', 'librte-crypto-null'),
           'dma_skeleton0': ('librte_dma_skeleton.so', 'librte-dma-skeleton'),
           'event_sw0': ('librte_event_sw.so', 'librte-event-sw'),
           'rawdev_skeleton0': ('librte_raw_skeleton.so', 'librte-raw-skeleton')}
CRYPTO_PERF = '/usr/bin/dpdk-test-crypto-perf'
EVENTDEV = '/usr/bin/dpdk-test-eventdev'
DPDK_TEST = '/usr/bin/dpdk-test'


def missing():
    """'' when everything this module runs is installed, else what is not (for a skip).
    The drivers' dir is the one the system's EAL loads them from (pmds-23.0 for 22.11,
    pmds-25.0 for 24.11: helpers/dpdk.py pmd_dir())."""
    system = dpdk.system_release()
    try:
        pmds, abi = dpdk.pmd_dir(system), dpdk.abi_major(system)
    except Fatal as e:
        return str(e)
    for lib, pkg in DRIVERS.values():
        if not os.path.exists(os.path.join(pmds, lib)):
            return (f'{pmds}/{lib} is missing (DPDK {system.version}): apt-get install '
                    f'{pkg}{abi} (scripts/bootstrap)')
    for tool in (CRYPTO_PERF, EVENTDEV, DPDK_TEST):
        if not shutil.which(tool):
            return f'{tool} is missing: apt-get install dpdk-dev (scripts/bootstrap)'
    return ''


@pytest.fixture(scope='module', autouse=True)
def prerequisites():
    reason = missing()
    if reason and os.environ.get('CI') == 'true':
        pytest.fail(f'CI must have every prerequisite: {reason}')
    if reason:
        pytest.skip(reason)


def crypto_perf():
    """dpdk-test-crypto-perf on crypto_null, enqueuing null-cipher operations on lcore 1: 30
    million per buffer size, one at a time, for about a minute here (it exits then). Not more
    per size: before each run it "warms up" with --total-ops empty enqueue calls
    (app/test-crypto-perf/cperf_test_throughput.c), so 4 billion would keep the counters at 0
    for half a minute. Seen: moving 2 s after the socket appears."""
    prefix = dpdk.unique_prefix('c')
    argv = [CRYPTO_PERF, '-l', '0,1', '--no-huge', '-m', '256', '--no-pci', '--vdev=crypto_null0',
            f'--file-prefix={prefix}', '--', '--ptest', 'throughput', '--devtype',
            'crypto_null', '--optype', 'cipher-only', '--cipher-algo', 'null', '--cipher-op',
            'encrypt', '--cipher-key-sz', '0', '--cipher-iv-sz', '0', '--total-ops',
            '30000000', '--burst-sz', '1', '--buffer-sz', ','.join(str(64 * (i + 1)) for i in range(16)),
            '--pool-sz', '1024', '--silent']
    return dpdk.DpdkApp(argv, prefix, name='crypto-perf', keep_stdin=False,
                        ready=lambda app: True)


@pytest.fixture(scope='module')
def apps(build_dir, source_dir):
    """One testpmd with a device of each class, one crypto-perf, one collectd reading both
    (crypto-perf also with its memory and a <Command> block)."""
    pmd = dpdk.testpmd(release=dpdk.system_release(), nports=1,
                       extra=['--total-num-mbufs=16384'], vdevs=['net_null0', *DRIVERS])
    with contextlib.ExitStack() as stack:
        stack.enter_context(pmd)
        perf = stack.enter_context(crypto_perf())
        cd = stack.enter_context(Collectd(
            build_dir, source_dir,
            'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  MemoryStats false\n'
            f'  <Instance "pmd">\n    SocketPath "{pmd.socket}"\n  </Instance>\n'
            f'  <Instance "perf">\n    SocketPath "{perf.socket}"\n    MemoryStats true\n'
            '    <Command "/eal/heap_info">\n      Params "0"\n      Name "heap"\n'
            '    </Command>\n  </Instance>\n'
            '</Plugin>\n'))
        yield pmd, perf, cd


def direct(path, cmd):
    with Client(path) as c:
        return c.query(cmd)


def test_event_sw_counters_move_with_test_eventdev(build_dir, source_dir):
    """eventdev_xstat and eventdev_gauge of an event_sw device that dpdk-test-eventdev's
    perf_queue test drives (one producer, one worker, the scheduler on a service lcore): the
    device's, each port's and the queue's xstats, counters rising and between the
    application's own figures before and after, levels as GAUGE."""
    prefix = dpdk.unique_prefix('e')
    argv = [EVENTDEV, '--no-huge', '-m', '512', '--no-pci', '--vdev=event_sw0',
            '--lcores=0@0,1@0,2@1,3@1', '-S', '3', f'--file-prefix={prefix}', '--',
            '--test=perf_queue', '--stlist=a', '--wlcores=2', '--plcores=1', '--nb_pkts=0']

    def configured(app):
        with Client(app.socket) as c:
            return c.query('/eventdev/port_list,0') == [0, 1]
    ev = dpdk.DpdkApp(argv, prefix, name='test-eventdev', keep_stdin=False, ready=configured)
    with ev, Collectd(build_dir, source_dir,
                      'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  MemoryStats false\n'
                      f'  <Instance "ev">\n    SocketPath "{ev.socket}"\n  </Instance>\n'
                      '</Plugin>\n') as cd:
        ident = 'dpdktel_stats-ev/eventdev_xstat-eventdev0.dev_rx'
        first = cd.wait_value(ident, lambda r: r[1][0] > 0, timeout=20,
                              what='event_sw receiving (dev_rx above 0)')
        before = direct(ev.socket, '/eventdev/dev_xstats,0')['dev_rx']
        second = cd.wait_value(ident, lambda r: r[0] > first[0] and r[1][0] > before,
                               what='a read after a direct /eventdev/dev_xstats')
        after = direct(ev.socket, '/eventdev/dev_xstats,0')['dev_rx']
        assert first[1][0] <= before < second[1][0] <= after, (first, before, second, after)
        want = direct(ev.socket, '/eventdev/port_xstats,0,1')
        assert 'port_1_rx' in want and 'port_1_inflight' in want, want
        cd.wait_value('dpdktel_stats-ev/eventdev_xstat-eventdev0.port1.port_1_rx',
                      lambda r: r[1][0] > 0, what='port 1 (the worker) receiving')
        cd.wait_value('dpdktel_stats-ev/eventdev_xstat-eventdev0.queue0.qid_0_tx')
        cd.wait_value('dpdktel_stats-ev/eventdev_gauge-eventdev0.port0.port_0_inflight')
        ids = cd.listval()
        assert not any('eventdev_xstat-eventdev0.port0.port_0_inflight' in i for i in ids)
        assert cd.last('dpdktel_stats-ev/telemetry_requests-failed')[1] == [0]
        assert cd.last('dpdktel_stats-ev/telemetry_requests-invalid')[1] == [0]


def test_crypto_counters_move_with_crypto_perf(apps):
    """cryptodev_ops-cryptodev0.* follow /cryptodev/stats of a crypto_null device that
    dpdk-test-crypto-perf drives: each read between the application's own figures before
    and after it, rising from read to read, and DERIVE (collectd gives a rate)."""
    _, perf, cd = apps
    ident = 'dpdktel_stats-perf/cryptodev_ops-cryptodev0.enqueued_count'
    first = cd.wait_value(ident, lambda r: r[1][0] > 0, timeout=20,
                          what='crypto-perf enqueuing (enqueued_count above 0)')
    before = direct(perf.socket, '/cryptodev/stats,0')['enqueued_count']
    second = cd.wait_value(ident, lambda r: r[0] > first[0] and r[1][0] > before,
                           what='a read after a direct /cryptodev/stats')
    after = direct(perf.socket, '/cryptodev/stats,0')['enqueued_count']
    assert first[1][0] <= before < second[1][0] <= after, (first, before, second, after)
    deq = cd.wait_value('dpdktel_stats-perf/cryptodev_ops-cryptodev0.dequeued_count',
                        lambda r: r[1][0] > 0)
    assert deq[1][0] <= after
    for name in ('enqueue_err_count', 'dequeue_err_count'):
        assert cd.wait_value(f'dpdktel_stats-perf/cryptodev_ops-cryptodev0.{name}')[1] == [0]
    rate = cd.getval('dpdktel_stats-perf/cryptodev_ops-cryptodev0.enqueued_count')
    assert rate and rate['value'] > 0, rate
    # crypto-perf has no device of the other classes: nothing of them, no failed request.
    ids = cd.listval()
    assert not any('dpdktel_stats-perf/' in i and ('dmadev' in i or 'eventdev' in i or
                                                   'rawdev' in i) for i in ids), ids
    assert cd.last('dpdktel_stats-perf/telemetry_requests-failed')[1] == [0]


def test_no_port_every_other_source(apps):
    """crypto-perf has no ethdev port (Debian's shared build answers [] to /ethdev/list; a
    null answer is tests/plugin/test_stats.c's): each source stands on its own, and it gets
    its cryptodev values, its memory, its <Command> block and its uptime, with up 1; nothing
    says it has no ethdev (that is for a null list)."""
    _, perf, cd = apps
    assert direct(perf.socket, '/ethdev/list') == []
    cd.wait_value('dpdktel_stats-perf/cryptodev_ops-cryptodev0.enqueued_count')
    want = direct(perf.socket, '/eal/heap_info,0')['Heap_size']
    assert cd.wait_value('dpdktel_stats-perf/gauge-heap.Heap_size')[1] == [want]
    cd.wait_value('dpdktel_stats-perf/heap_bytes-heap0')
    cd.wait_value('dpdktel_stats-perf/uptime', lambda r: r[1][0] > 0)
    assert cd.wait_value('dpdktel_stats-perf/up')[1] == [1]
    assert not [i for i in cd.listval() if 'dpdktel_stats-perf.port' in i]
    assert 'has no ethdev' not in cd.log()


def test_testpmd_virtual_devices(apps):
    """testpmd with a virtual device of each class, which it never configures or uses:
    crypto_null's counters equal /cryptodev/stats (0); dma_skeleton has no vchan and event_sw
    no port or queue until an application configures them, so nothing to count;
    rawdev_skeleton has no xstats (/rawdev/xstats answers null): one failed request, one INFO
    line, not asked again."""
    pmd, _, cd = apps
    assert direct(pmd.socket, '/dmadev/info,0')['nb_vchans'] == 0
    assert direct(pmd.socket, '/eventdev/port_list,0') == []
    assert direct(pmd.socket, '/rawdev/xstats,0') is None
    want = direct(pmd.socket, '/cryptodev/stats,0')
    for name, value in want.items():
        cd.wait_value(f'dpdktel_stats-pmd/cryptodev_ops-cryptodev0.{name}',
                      lambda r, v=value: r[1] == [v], what=f'{name} == {value}')
    first = cd.wait_value('dpdktel_stats-pmd/telemetry_requests-sent')
    cd.wait_value('dpdktel_stats-pmd/telemetry_requests-sent', lambda r: r[0] > first[0] + 1,
                  what='two more reads')
    ids = cd.listval()
    assert not any('dpdktel_stats-pmd/' in i and ('dmadev' in i or 'eventdev' in i or
                                                  'rawdev' in i) for i in ids), ids
    assert cd.last('dpdktel_stats-pmd/telemetry_requests-failed')[1] == [1]
    assert cd.last('dpdktel_stats-pmd/telemetry_requests-invalid')[1] == [0]
    lines = [l for l in cd.log().splitlines() if '/rawdev/xstats,0 answers null' in l]
    assert len(lines) == 1, cd.log()


def test_dmadev_configured_after_start(build_dir, source_dir):
    """dpdk-test's dmadev_autotest on dma_skeleton: it configures the device (one vchan) and
    creates a second one while the process runs, after collectd first read it. The plugin
    lists the devices again while the application is young, and reads each vchan: values
    equal to /dmadev/stats,<id>,0 (0: the autotest resets the counters when it is done)."""
    prefix = dpdk.unique_prefix('d')
    argv = [DPDK_TEST, '--no-huge', '-m', '512', '--no-pci', '--vdev=dma_skeleton0', '-l', '0',
            f'--file-prefix={prefix}']
    app = dpdk.DpdkApp(argv, prefix, name='dpdk-test', ready=lambda a: True)
    with app, Collectd(build_dir, source_dir,
                       'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  MemoryStats false\n'
                       f'  <Instance "dma">\n    SocketPath "{app.socket}"\n  </Instance>\n'
                       '</Plugin>\n') as cd:
        cd.wait_value('dpdktel_stats-dma/telemetry_requests-sent', lambda r: r[1][0] > 0)
        assert direct(app.socket, '/dmadev/info,0')['nb_vchans'] == 0
        assert not any('dmadev_ops' in i for i in cd.listval())
        app.proc.stdin.write(b'dmadev_autotest\n')
        app.proc.stdin.flush()
        wait_until(lambda: 'Test OK' in app.log(), 30, 'dmadev_autotest passing')
        ids = direct(app.socket, '/dmadev/list')
        assert len(ids) == 2, ids
        for d in ids:
            assert direct(app.socket, f'/dmadev/info,{d}')['nb_vchans'] == 1
            want = direct(app.socket, f'/dmadev/stats,{d},0')
            for name, value in want.items():
                cd.wait_value(f'dpdktel_stats-dma/dmadev_ops-dmadev{d}.vchan0.{name}',
                              lambda r, v=value: r[1] == [v], what=f'dmadev{d} {name} == {value}')
        assert cd.last('dpdktel_stats-dma/telemetry_requests-invalid')[1] == [0]
