"""dpdktel_stats' <Command> blocks in a real collectd: dpdktel-fwd's /fwd/metrics (flat, a
negative port_id) and /fwd/lcores (columnar: rows named by lcore id), and testpmd's (Debian's
DPDK 22.11) /ethdev/info,0 (numbers and arrays), each value against what the application
answers to a direct query; and an XStatsGauge xstat as GAUGE xstat_gauge through collectd's
own TypesDB parser. One forwarder, one testpmd and one collectd for the module."""
import contextlib
import time

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.telemetry import Client
from helpers.wait import wait_until

CONFIG = '''LoadPlugin dpdktel_stats
<Plugin dpdktel_stats>
  MemoryStats false
  <Instance "fwd">
    SocketPath "{fwd}"
    <Command "/fwd/metrics">
      Derive "rx_packets" "tx_packets"
    </Command>
    <Command "/fwd/lcores">
      Derive "heartbeat.*" "stalls.*" "*_packets.*"
      Type "heartbeat_age_us.*" "heartbeat_age"
      Exclude "*_cycles.*"
    </Command>
  </Instance>
  <Instance "pmd">
    SocketPath "{pmd}"
    XStatsGauge "rx_good_packets"
    <Command "/ethdev/info">
      Params "0"
      Name "port0_info"
    </Command>
  </Instance>
</Plugin>
'''


@pytest.fixture(scope='module')
def apps(build_dir, source_dir, fwd_bin):
    fwd = dpdk.fwd(fwd_bin, prefix=dpdk.unique_prefix('fc'), nports=2,
                   app_args=['--idle-sleep-us', '50'])
    pmd = dpdk.testpmd(prefix=dpdk.unique_prefix('pc'), nports=1,
                       extra=['--total-num-mbufs=16384', '--rxq=2', '--txq=2'])
    with contextlib.ExitStack() as stack:
        stack.enter_context(fwd)
        stack.enter_context(pmd)
        cd = stack.enter_context(Collectd(
            build_dir, source_dir, CONFIG.format(fwd=fwd.socket, pmd=pmd.socket), interval=0.5))
        yield fwd, pmd, cd


def direct(app, cmd):
    with Client(app.socket) as c:
        return c.query(cmd)


def between(cd, app, cmd, key, ident):
    """The value a read made after now of ident: at least the application's value now, and at
    most its value after that read."""
    before, t0 = direct(app, cmd), time.time()
    row = cd.wait_value(ident, lambda r: r[0] > t0, what=f'{ident} read after {t0}')
    after = direct(app, cmd)
    return key(before), row[1][0], key(after)


def assert_values(cd, instance, needle, want):
    """The values of instance whose type instance has needle are exactly want (collectd's
    cache has each after the read that dispatched it)."""
    def ours():
        return {i.split('/', 2)[2] for i in cd.listval()
                if i.split('/')[1] == f'dpdktel_stats-{instance}' and needle in i}
    wait_until(lambda: ours() == want, 5, f'values {sorted(want)}, have {sorted(ours())}')


def test_flat_reply_fwd_metrics(apps):
    fwd, _, cd = apps
    low, v, high = between(cd, fwd, '/fwd/metrics', lambda r: r['rx_packets'],
                           'dpdktel_stats-fwd/derive-fwd_metrics.rx_packets')
    assert 0 < low <= v <= high
    want = direct(fwd, '/fwd/metrics')
    assert want['port_id'] == -1 and want['ports_up'] == 2
    cd.wait_value('dpdktel_stats-fwd/gauge-fwd_metrics.port_id', lambda r: r[1] == [-1])
    cd.wait_value('dpdktel_stats-fwd/gauge-fwd_metrics.ports_up', lambda r: r[1] == [2])
    # Every number of the reply is a value, none else.
    kinds = {'rx_packets': 'derive', 'tx_packets': 'derive'}
    assert_values(cd, 'fwd', '-fwd_metrics.',
                  {f'{kinds.get(k, "gauge")}-fwd_metrics.{k}' for k in want})


def test_columnar_reply_fwd_lcores(apps):
    fwd, _, cd = apps
    lcores = direct(fwd, '/fwd/lcores')
    assert lcores['lcore_id'] == [1]
    low, v, high = between(cd, fwd, '/fwd/lcores', lambda r: r['heartbeat'][0],
                           'dpdktel_stats-fwd/derive-fwd_lcores.heartbeat.lcore1')
    assert 0 < low <= v <= high
    state = cd.wait_value('dpdktel_stats-fwd/gauge-fwd_lcores.state_code.lcore1')
    assert state[1][0] == direct(fwd, '/fwd/lcores')['state_code'][0] == 1  # RUNNING
    cd.wait_value('dpdktel_stats-fwd/heartbeat_age-fwd_lcores.heartbeat_age_us.lcore1')
    cd.wait_value('dpdktel_stats-fwd/derive-fwd_lcores.stalls.lcore1', lambda r: r[1] == [0])
    assert_values(cd, 'fwd', '-fwd_lcores.', {
        'derive-fwd_lcores.heartbeat.lcore1', 'derive-fwd_lcores.stalls.lcore1',
        'derive-fwd_lcores.rx_packets.lcore1', 'derive-fwd_lcores.tx_packets.lcore1',
        'heartbeat_age-fwd_lcores.heartbeat_age_us.lcore1',
        'gauge-fwd_lcores.state_code.lcore1', 'gauge-fwd_lcores.last_change_age_ms.lcore1',
    })
    assert cd.last('dpdktel_stats-fwd/telemetry_requests-invalid')[1] == [0]


def test_testpmd_ethdev_info(apps):
    _, pmd, cd = apps
    info = direct(pmd, '/ethdev/info,0')
    numbers = {}
    for k, v in info.items():
        if isinstance(v, list):
            numbers.update({f'{k}.{i}': x for i, x in enumerate(v)})
        elif isinstance(v, int):
            numbers[k] = v
    assert numbers['mtu'] == 1500 and numbers['rxq_state.1'] == 1
    for k, v in numbers.items():
        cd.wait_value(f'dpdktel_stats-pmd/gauge-port0_info.{k}', lambda r, v=v: r[1] == [v],
                      what=f'port0_info.{k} = {v}')
    assert_values(cd, 'pmd', '-port0_info.', {f'gauge-port0_info.{k}' for k in numbers})
    # collectd's own set_thread_name() fails now and then for a unixsock thread that has
    # ended already: not ours.
    errors = [line for line in cd.log().lower().splitlines()
              if 'error' in line and 'set_thread_name(' not in line]
    assert not errors, cd.log()


def test_xstats_gauge_in_collectd(apps):
    _, pmd, cd = apps
    low, v, high = between(cd, pmd, '/ethdev/xstats,0', lambda r: r['rx_good_packets'],
                           'dpdktel_stats-pmd.port0/xstat_gauge-rx_good_packets')
    assert 0 < low <= v <= high
    cd.wait_value('dpdktel_stats-pmd.port0/xstat-tx_good_packets', lambda r: r[1][0] > 0)
    ids = cd.listval()
    assert f'{cd.hostname}/dpdktel_stats-pmd.port0/xstat_gauge-rx_good_packets' in ids
    assert f'{cd.hostname}/dpdktel_stats-pmd.port0/xstat-rx_good_packets' not in ids
