"""Open vSwitch with DPDK (Debian's openvswitch-switch-dpdk 3.1) read by the dpdktel CLI and
both plugins in a real collectd: what a user running OVS-DPDK sees (docs/applications.md).

One OVS for the module (it takes several seconds to start): its own ovsdb-server and
database, two `dpdk` ports on net_tap devices (helpers/ovs.py). The test that kills and
restarts it runs last.
"""
import json
import subprocess
import time

import pytest

from helpers import dpdk, ovs
from helpers.collectd import Collectd
from helpers.telemetry import Client
from helpers.wait import wait_until

pytestmark = pytest.mark.skipif(bool(ovs.available()), reason=ovs.available() or 'available')

TELEMETRY_PY = '/usr/bin/dpdk-telemetry.py'


@pytest.fixture(scope='module')
def sw():
    with ovs.Ovs(nports=2) as o:
        yield o


def cli(build_dir, *args):
    p = subprocess.run([f'{build_dir}/telemetry/dpdktel', *args], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def dpdk_telemetry_py(prefix, cmd):
    """DPDK's own client (usertools/dpdk-telemetry.py of 22.11): one command on stdin, one
    JSON reply per line on stdout. Run by Debian's python3: it needs nothing else."""
    p = subprocess.run(['/usr/bin/python3', TELEMETRY_PY, '-f', prefix], input=cmd + '\n',
                       capture_output=True, text=True, timeout=30)
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith('{'):
            return json.loads(line)[cmd.split(',', 1)[0]]
    raise AssertionError(f'dpdk-telemetry.py gave no reply to {cmd}: {p.stdout}{p.stderr}')


def test_cli_list_ports_and_query(sw, build_dir):
    apps = json.loads(cli(build_dir, 'list', '--json'))
    mine = [a for a in apps if a.get('prefix') == sw.prefix]
    assert len(mine) == 1, apps
    assert mine[0]['pid'] == sw.pid and mine[0]['state'] == 'live', mine
    # Debian's OVS-DPDK is built against Debian's DPDK (22.11 on bookworm, 24.11 on trixie).
    assert mine[0]['app'] == 'ovs-vswitchd-dpdk', mine
    assert mine[0]['version'] == f'DPDK {dpdk.system_release().version}', mine
    ports = json.loads(cli(build_dir, '-p', sw.prefix, 'ports', '--json'))
    assert [p['name'] for p in ports] == ['net_tap0', 'net_tap1'], ports
    assert all(p['link_status'] == 'up' for p in ports), ports
    # The same counters as DPDK's own client, read around ours: a tap's kernel side may send
    # a frame (IPv6 neighbour discovery) between two readings, never take one back.
    for port in (0, 1):
        before = dpdk_telemetry_py(sw.prefix, f'/ethdev/xstats,{port}')
        ours = json.loads(cli(build_dir, '-p', sw.prefix, 'query', f'/ethdev/xstats,{port}'))
        ours = ours.get('/ethdev/xstats', ours)
        after = dpdk_telemetry_py(sw.prefix, f'/ethdev/xstats,{port}')
        assert set(ours) == set(before) and 'rx_q1_packets' in ours, (ours, before)
        for k in ours:
            assert before[k] <= ours[k] <= after[k], (port, k, before[k], ours[k], after[k])


def dpdktel_version(build_dir):
    return cli(build_dir, '--version').split()[1]


def both_plugins(sw):
    """dpdktel_stats finds OVS by discovery (its name: the prefix), dpdktel_events by
    FilePrefix, the way docs/applications.md shows it."""
    return (
        'LoadPlugin dpdktel_stats\nLoadPlugin dpdktel_events\n'
        '<Plugin dpdktel_stats>\n  Discover true\n  PerQueue true\n</Plugin>\n'
        '<Plugin dpdktel_events>\n  PollInterval 0.05\n  Timeout 1\n'
        f'  <Instance "ovs">\n    FilePrefix "{sw.prefix}"\n  </Instance>\n</Plugin>\n')


def notes(cd):
    return [n for n in cd.notifications() if n.get('plugin') == 'dpdktel_events']


def wait_note(cd, text, timeout=20):
    return wait_until(lambda: [n for n in notes(cd) if text in n['message']], timeout,
                      f'notification "{text}"')[-1]


def test_plugins_read_ovs_counters_and_links(sw, build_dir, source_dir):
    with Collectd(build_dir, source_dir, both_plugins(sw), interval=0.5,
                  ours=('dpdktel_stats', 'dpdktel_events')) as cd:
        base = f'dpdktel_stats-{sw.prefix}'
        for port in (0, 1):
            cd.wait_value(f'{base}.port{port}/if_packets', what=f'if_packets of port {port}')
            wait_until(lambda p=port: cd.getval(f'dpdktel_events-ovs.port{p}/link_status') ==
                       {'value': 1.0}, 10, f'link_status of port {port}')
        # Frames into the tap's kernel side are port 0's receive: the counter follows them.
        first = cd.wait_value(f'{base}.port0/if_packets', what='a read')
        ovs.send_frames(sw.ifaces[0], 200)
        cd.wait_value(f'{base}.port0/if_packets', lambda r: r[1][0] >= first[1][0] + 200,
                      what='rx packets of port 0 up by the 200 frames sent')
        # Per-queue counters of OVS's two rx queues (22.11: /ethdev/stats q_* arrays).
        assert any(f'{base}.port0/' in i and 'queue' in i for i in cd.listval()), cd.listval()

        subprocess.run(['ip', 'link', 'set', 'dev', sw.ifaces[1], 'down'], check=True)
        n = wait_note(cd, 'Link down on ovs port 1')
        assert n['severity'] == 'FAILURE' and n['message'] == 'Link down on ovs port 1 (net_tap1)'
        subprocess.run(['ip', 'link', 'set', 'dev', sw.ifaces[1], 'up'], check=True)
        n = wait_note(cd, 'Link up on ovs port 1')
        assert n['severity'] == 'OKAY'
        # The names OVS users know the ports by, from /ethdev/info: net_tap devices.
        for port in (0, 1):
            info = dpdk_telemetry_py(sw.prefix, f'/ethdev/info,{port}')
            cd.wait_value(f'{base}.port{port}/port_info-net_tap{port},net_tap,'
                          f'{info["mac_addr"]},{info["numa_node"]}',
                          what=f'port_info of port {port}')
        version = dpdk_telemetry_py(sw.prefix, '/info')['version'].removeprefix('DPDK ')
        with open(f'/proc/{sw.pid}/comm') as f:
            comm = f.read().strip()
        assert comm.startswith('ovs-vswitchd'), comm
        cd.wait_value(f'{base}/instance_info-{version},{comm},{sw.pid},'
                      f'{dpdktel_version(build_dir)},{sw.pid}', what='instance_info of OVS')
        # OVS has no lcore data a monitor can read (PMD threads are not EAL lcores).
        assert 'only its links are watched' in cd.log()
        assert not [m for m in notes(cd) if 'port 0' in m['message']]


def ovs_info(sw, port):
    with Client(sw.socket) as c:
        return c.query(f'/ethdev/info,{port}')


def ovs_ports(sw):
    with Client(sw.socket) as c:
        return c.query('/ethdev/list')


def first_read_after(cd, ident, t, timeout=15):
    cd.wait_value(ident, lambda row: row[0] > t, timeout=timeout, what=f'{ident} after {t:.3f}')
    return next(row for row in cd.csv(ident) if row[0] > t)


def test_port_facts_follow_ovs_reconfiguration(sw, build_dir, source_dir):
    """Open vSwitch changes its ports while it runs (ovs-vsctl): a net_null port's n_rxq
    (1 → 3), a port's mtu_request (1500 → 1400), a port deleted and another added on another
    device, which takes the freed port id. dpdktel_stats follows: port_queues in the first
    read after OVS applied it (the xstats names changed), port_mtu within PortInfoInterval
    (1 s here: an MTU changes nothing else a read can see), port_info of the new device in
    the first read after, the old one dispatched no more. Before: /ethdev/info once per
    process (1 queue, MTU 1500 and net_null5 for ever). net_null, not net_tap, for the
    queues: net_tap wants as many rx as tx queues, and OVS sets the tx ones itself."""
    sw.vsctl('add-port', 'br0', 'dpdk-n0', '--', 'set', 'Interface', 'dpdk-n0', 'type=dpdk',
             'options:dpdk-devargs=net_null5', 'options:n_rxq=1')
    try:
        port = wait_until(lambda: [p for p in ovs_ports(sw) if
                                   ovs_info(sw, p)['name'] == 'net_null5'], 20,
                          'net_null5 in OVS')[0]
        conf = ('LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  PortInfoInterval 1\n'
                f'  <Instance "ovs">\n    SocketPath "{sw.socket}"\n  </Instance>\n</Plugin>\n')
        with Collectd(build_dir, source_dir, conf, interval=0.5) as cd:
            base = 'dpdktel_stats-ovs'
            queues = f'{base}.port{port}/port_queues'
            cd.wait_value(queues, lambda r: r[1][0] == 1, what='1 rx queue of net_null5')
            sw.vsctl('set', 'Interface', 'dpdk-n0', 'options:n_rxq=3')
            wait_until(lambda: ovs_info(sw, port)['nb_rx_queues'] == 3, 20, 'OVS: n_rxq 3')
            done = time.time()
            assert first_read_after(cd, queues, done)[1][0] == 3

            sw.vsctl('set', 'Interface', 'dpdk-p1', 'mtu_request=1400')
            wait_until(lambda: ovs_info(sw, 1)['mtu'] == 1400, 20, 'OVS: MTU 1400 on port 1')
            cd.wait_value(f'{base}.port1/port_mtu', lambda r: r[1] == [1400], timeout=5,
                          what='port_mtu 1400 within PortInfoInterval')

            old = ovs_info(sw, port)
            sw.vsctl('del-port', 'br0', 'dpdk-n0')
            wait_until(lambda: port not in ovs_ports(sw), 20, 'OVS: net_null5 gone')
            sw.vsctl('add-port', 'br0', 'dpdk-n1', '--', 'set', 'Interface', 'dpdk-n1',
                     'type=dpdk', 'options:dpdk-devargs=net_null6')
            wait_until(lambda: port in ovs_ports(sw) and
                       ovs_info(sw, port)['name'] == 'net_null6', 20, 'OVS: net_null6')
            done = time.time()
            new = ovs_info(sw, port)
            ti = f"net_null6,net_null,{new['mac_addr']},{new['numa_node']}"
            first_read_after(cd, f'{base}.port{port}/port_info-{ti}', done)
            old_ti = f"net_null5,net_null,{old['mac_addr']},{old['numa_node']}"
            later = first_read_after(cd, f'{base}.port0/port_queues', done)[0] + 1
            cd.wait_value(f'{base}.port0/port_queues', lambda r: r[0] > later)
            assert not [r for r in cd.csv(f'{base}.port{port}/port_info-{old_ti}')
                        if r[0] > done], 'the port_info of net_null5 went on'
    finally:
        # The next test restarts this OVS with its database: as it was.
        sw.vsctl('--if-exists', 'del-port', 'br0', 'dpdk-n0', '--', '--if-exists',
                 'del-port', 'br0', 'dpdk-n1', '--', 'set', 'Interface', 'dpdk-p1',
                 'mtu_request=1500')


def test_kill9_and_restart_one_gone_one_back_one_restarted(sw, build_dir, source_dir):
    with Collectd(build_dir, source_dir, both_plugins(sw), interval=0.5,
                  ours=('dpdktel_stats', 'dpdktel_events')) as cd:
        wait_until(lambda: cd.getval('dpdktel_events-ovs/up') == {'value': 1.0}, 10, 'up 1')
        # dpdktel_stats finds OVS at its first discovery pass and reads it at the read after:
        # a restart is one only for a plugin that has seen the process before it.
        cd.wait_value(f'dpdktel_stats-{sw.prefix}/up', lambda r: r[1] == [1],
                      what='dpdktel_stats read the first OVS')
        old = sw.pid
        sw.kill9()
        n = wait_note(cd, 'DPDK application ovs is gone')
        assert n['severity'] == 'FAILURE'
        sw.start()  # the socket it left behind is stale until the new process binds it
        wait_note(cd, 'DPDK application ovs is back after', timeout=30)
        n = wait_note(cd, f'DPDK application ovs restarted (pid {old} → {sw.pid})')
        assert n['severity'] == 'WARNING'
        cd.wait_value(f'dpdktel_stats-{sw.prefix}/restarts', lambda r: r[1] == [1],
                      what='dpdktel_stats counted the restart')
        msgs = [m['message'] for m in notes(cd)]
        assert sum('is gone' in m for m in msgs) == 1, msgs
        assert sum('is back' in m for m in msgs) == 1, msgs
        assert sum('restarted' in m for m in msgs) == 1, msgs
