"""dpdktel-fwd against real processes: net_null and net_tap ports, the kernel on the other
side of the taps, fault injection, signals, a non-root reader, collectd's stock plugin.

Every process has its own --file-prefix (and netns, tap names, temp dirs), is waited for
on a condition with a deadline, and is ended by PID. Reply shapes: docs/fwd-telemetry.md.
"""
import contextlib
import glob
import grp
import itertools
import json
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import pytest

import helpers
from helpers import dpdk, sanitizers, telemetry, threads
from helpers.wait import Timeout, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
RAWFRAMES = os.path.join(os.path.dirname(helpers.__file__), 'rawframes.py')
LINKCTL = os.path.join(os.path.dirname(helpers.__file__), 'linkctl.py')
PY = '/usr/bin/python3'
_ids = itertools.count()

LCORES_KEYS = {'lcore_id', 'state', 'state_code', 'heartbeat', 'heartbeat_age_us', 'stalls',
               'last_change_age_ms', 'rx_packets', 'tx_packets', 'busy_cycles', 'total_cycles',
               'ports'}
LCORE_KEYS = LCORES_KEYS | {'tx_dropped', 'rx_queues'}
PORTS_KEYS = {'port_id', 'link_status', 'link_speed', 'link_duplex', 'link_changes',
              'last_change_age_ms'}
PORT_KEYS = PORTS_KEYS | {'name', 'rx_packets', 'tx_packets', 'tx_dropped', 'lcore_id',
                          'peer_port', 'rx_queue_lcores'}
INFO_KEYS = {'app', 'version', 'pid', 'uptime_ms', 'mac_mode', 'burst', 'heartbeat_ms',
             'stall_ms', 'link_poll_ms', 'link_check_age_ms', 'idle_sleep_us',
             'stats_period_s', 'main_lcore', 'ports', 'lcores'}
OUR_METRICS = {'rx_packets', 'tx_packets', 'tx_dropped', 'link_changes', 'link_status',
               'link_speed', 'ports_up', 'lcores_running', 'lcores_idle', 'lcores_stalled',
               'lcores_exited', 'lcore_stalls'}
STATE_CODES = {'STARTING': 0, 'RUNNING': 1, 'IDLE': 2, 'STALLED': 3, 'EXITED': 4}


def q(app, cmd):
    return telemetry.query(app.socket, cmd)


def run(argv, timeout=30, check=True, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f'{argv} exited {p.returncode}: {p.stdout} {p.stderr}')
    return p


def lcore_state(app, lcore=1):
    return q(app, f'/fwd/lcore,{lcore}')['state']


def wait_state(app, state, timeout=10, lcore=1):
    return wait_until(lambda: q(app, f'/fwd/lcore,{lcore}')['state'] == state and
                      q(app, f'/fwd/lcore,{lcore}'), timeout, f'lcore {lcore} {state}')


@pytest.fixture(scope='module')
def null2(fwd_bin):
    """One forwarder on two net_null ports, shared by the read-only tests."""
    app = dpdk.fwd(fwd_bin, app_args=['--stats-period', '1'])
    with app:
        wait_state(app, 'RUNNING')
        yield app


# ---- net_null: shapes and counters -------------------------------------------------------

def test_info_shape(null2, build_dir):
    info = q(null2, '/fwd/info')
    assert set(info) == INFO_KEYS
    with open(os.path.join(build_dir, 'meson-info', 'intro-projectinfo.json')) as f:
        version = json.load(f)['version']
    assert info['app'] == 'dpdktel-fwd'
    assert info['version'] == version
    assert info['pid'] == null2.pid
    assert info['mac_mode'] == 'rewrite'
    assert (info['burst'], info['heartbeat_ms'], info['stall_ms'], info['link_poll_ms'],
            info['idle_sleep_us'], info['stats_period_s']) == (32, 10, 100, 10, 0, 1)
    assert info['main_lcore'] == 0
    assert info['ports'] == [0, 1]
    assert info['lcores'] == [1]
    # The main lcore checks the links every 10 ms: the last check is that recent (with
    # room for a busy machine), and not a garbage value.
    assert 0 <= info['link_check_age_ms'] < 1000
    later = wait_until(lambda: (i := q(null2, '/fwd/info'))['uptime_ms'] > info['uptime_ms']
                       and i, 5, 'uptime advancing')
    assert later['uptime_ms'] > info['uptime_ms']


def test_lcores_shape_and_progress(null2):
    first = q(null2, '/fwd/lcores')
    assert set(first) == LCORES_KEYS
    assert all(len(v) == 1 for v in first.values()), first
    assert first['lcore_id'] == [1]
    assert first['state'] == ['RUNNING']
    assert first['state_code'] == [STATE_CODES['RUNNING']]
    assert first['ports'] == ['0-1']
    assert first['stalls'] == [0]
    assert first['heartbeat_age_us'][0] < 100 * 1000
    assert first['busy_cycles'][0] <= first['total_cycles'][0]
    second = wait_until(lambda: (s := q(null2, '/fwd/lcores'))['rx_packets'][0] >
                        first['rx_packets'][0] and s, 5, 'rx advancing')
    assert second['heartbeat'][0] > first['heartbeat'][0]
    assert second['tx_packets'][0] > first['tx_packets'][0]
    assert second['total_cycles'][0] > first['total_cycles'][0]
    assert second['busy_cycles'][0] > first['busy_cycles'][0]


def test_lcore_shape(null2):
    lc = q(null2, '/fwd/lcore,1')
    assert set(lc) == LCORE_KEYS
    assert lc['lcore_id'] == 1
    assert lc['state'] == 'RUNNING' and lc['state_code'] == 1
    assert lc['ports'] == [0, 1]
    assert lc['rx_queues'] == [0, 0]  # the rx queue it polls on each of its ports
    assert lc['tx_dropped'] == 0
    assert lc['rx_packets'] > 0


def test_ports_shape(null2):
    ports = q(null2, '/fwd/ports')
    assert set(ports) == PORTS_KEYS
    assert ports['port_id'] == [0, 1]
    assert ports['link_status'] == ['UP', 'UP']
    assert ports['link_speed'] == [10000, 10000]
    assert ports['link_duplex'] == ['full-duplex', 'full-duplex']
    assert ports['link_changes'] == [0, 0]
    assert all(a >= 0 for a in ports['last_change_age_ms'])


def test_port_shape(null2):
    for pid, peer in ((0, 1), (1, 0)):
        p = q(null2, f'/fwd/port,{pid}')
        assert set(p) == PORT_KEYS
        assert p['port_id'] == pid
        assert p['name'] == f'net_null{pid}'
        assert p['peer_port'] == peer
        assert p['lcore_id'] == 1
        assert p['rx_queue_lcores'] == [1]  # its one rx queue, polled by lcore 1
        assert p['link_status'] == 'UP' and p['link_speed'] == 10000
        assert p['rx_packets'] > 0 and p['tx_packets'] > 0
        assert p['tx_dropped'] == 0


def test_counters_match_ethdev(null2):
    """Our counters sit between two reads of the driver's own (ethdev counts inside the
    burst call, we count right after it: at most one burst behind)."""
    with telemetry.Client(null2.socket) as c:
        for pid in (0, 1):
            e1 = c.query(f'/ethdev/stats,{pid}')
            ours = c.query(f'/fwd/port,{pid}')
            e2 = c.query(f'/ethdev/stats,{pid}')
            assert e1['ipackets'] - 32 <= ours['rx_packets'] <= e2['ipackets']
            assert e1['opackets'] - 32 <= ours['tx_packets'] <= e2['opackets']
        # what port 0 receives leaves by port 1: sent out of 1 so far <= received on 0,
        # and received on 0 <= sent out of 1 a moment later + what waits in the buffer
        tx1 = c.query('/fwd/port,1')['tx_packets']
        rx0 = c.query('/fwd/port,0')['rx_packets']
        tx1_later = c.query('/fwd/port,1')['tx_packets']
        assert tx1 <= rx0 <= tx1_later + 32
        # an lcore's counters are the sum of its ports'
        lc1 = c.query('/fwd/lcore,1')
        ports = [c.query(f'/fwd/port,{p}') for p in (0, 1)]
        lc2 = c.query('/fwd/lcore,1')
        assert lc1['rx_packets'] <= sum(p['rx_packets'] for p in ports) <= lc2['rx_packets']


def test_bad_params_reply_null(null2):
    bad = ['/fwd/lcore', '/fwd/lcore,0', '/fwd/lcore,2', '/fwd/lcore,1x', '/fwd/lcore,-1',
           '/fwd/lcore, 1', '/fwd/lcore,+1', '/fwd/lcore,99999999999999999999999',
           '/fwd/port', '/fwd/port,2', '/fwd/port,64', '/fwd/port,0,1', '/fwd/port,0x0',
           '/fwd/lcores,1', '/fwd/ports,x', '/fwd/info,x', '/fwd/metrics,5',
           '/fwd/metrics,abc', '/fwd/metrics,-1']
    with telemetry.Client(null2.socket) as c:
        for cmd in bad:
            reply = c.raw(cmd).decode()
            assert reply == '{"%s":null}' % cmd.split(',')[0], (cmd, reply)
        # and the connection still works
        assert c.query('/fwd/lcore,1')['lcore_id'] == 1


def test_metrics(null2):
    g = q(null2, '/fwd/metrics')
    assert OUR_METRICS <= set(g)
    assert g['port_id'] == -1
    assert g['ports_up'] == 2 and g['lcores_running'] == 1 and g['lcore_stalls'] == 0
    for pid in (0, 1):
        m = q(null2, f'/fwd/metrics,{pid}')
        assert m['port_id'] == pid
        assert m['link_status'] == 1 and m['link_speed'] == 10000
        # metrics are refreshed every heartbeat period: they trail the live counter
        live = q(null2, f'/fwd/port,{pid}')['rx_packets']
        m = wait_until(lambda: (x := q(null2, f'/fwd/metrics,{pid}'))['rx_packets'] >= live
                       and x, 5, 'metrics catching up')
        assert m['rx_packets'] > 0
    assert g['rx_packets'] > 0


def test_legacy_v1_socket_exists(null2):
    """librte_metrics is really linked in (DT_NEEDED): its constructor brings up the v1
    socket that collectd's stock dpdk_telemetry plugin reads."""
    path = os.path.join(dpdk.RUNTIME_DIR, null2.prefix, 'telemetry')
    assert stat.S_ISSOCK(os.stat(path).st_mode)


def test_stats_table_printed(null2):
    wait_until(lambda: 'counters after' in null2.log(), 5, 'a --stats-period table')
    text = null2.log()
    assert re.search(r'^\s+0 net_null0\s+UP\s+10000\s+0\s+\d+\s+\d+\s+0$', text, re.M), text
    assert re.search(r'^\s+1 RUNNING\s+\d+\s+0\s+\d+\s+\d+\s+[\d.]+ 0-1$', text, re.M), text


def test_cli_reads_fwd(null2, dpdktel_cli):
    out = run([dpdktel_cli, '-p', null2.prefix, 'query', '/fwd/lcores']).stdout
    assert json.loads(out)['/fwd/lcores']['lcore_id'] == [1]


def minor_faults(pid):
    with open(f'/proc/{pid}/stat') as f:
        return int(f.read().rsplit(')', 1)[1].split()[7])


@pytest.mark.skipif(sanitizers.enabled(), reason='a property of glibc malloc, which ASan '
                    'replaces (its allocator quarantines freed memory and faults anyway)')
def test_queries_do_not_fault_memory_back_in(null2):
    """Replies are built in ~66 KiB rte_tel_data containers. Unless the forwarder keeps
    freed heap (mallopt M_TRIM_THRESHOLD), glibc trims the telemetry thread's arena after
    every reply (madvise DONTNEED, which also flushes the forwarding lcore's TLB) and the
    next reply faults the pages back in: ~20 faults per round of these queries."""
    cmds = ('/fwd/lcores', '/ethdev/stats,0', '/fwd/info', '/fwd/metrics', '/fwd/ports')
    with telemetry.Client(null2.socket) as c:
        for cmd in cmds:  # the first replies on a new connection grow its thread's arena
            c.query(cmd)
        before = minor_faults(null2.pid)
        for _ in range(50):
            for cmd in cmds:
                c.query(cmd)
        faults = minor_faults(null2.pid) - before
    assert faults < 50, f'{faults} page faults in 50 rounds of queries'


# ---- lcore and port assignment -----------------------------------------------------------

def test_round_robin_over_two_lcores(fwd_bin):
    # Two forwarding lcores share CPU 1 (this machine has two cores).
    app = dpdk.fwd(fwd_bin, nports=4, eal_extra=['--lcores=0@0,1@1,2@1'])
    with app:
        info = q(app, '/fwd/info')
        assert info['lcores'] == [1, 2] and info['ports'] == [0, 1, 2, 3]
        lcores = q(app, '/fwd/lcores')
        assert lcores['lcore_id'] == [1, 2]
        assert lcores['ports'] == ['0,2', '1,3']
        assert q(app, '/fwd/lcore,2')['ports'] == [1, 3]
        assert q(app, '/fwd/lcore,2')['rx_queues'] == [0, 0]
        for pid, lcore, peer in ((0, 1, 1), (1, 2, 0), (2, 1, 3), (3, 2, 2)):
            p = q(app, f'/fwd/port,{pid}')
            assert (p['lcore_id'], p['peer_port']) == (lcore, peer), p
            assert p['rx_queue_lcores'] == [lcore], p
        wait_until(lambda: all(q(app, f'/fwd/port,{p}')['tx_packets'] > 0 for p in range(4)),
                   10, 'all four ports sending')
        wait_state(app, 'RUNNING', lcore=1)
        wait_state(app, 'RUNNING', lcore=2)


def test_portmask_and_odd_port(fwd_bin):
    # -p 0x7 of four ports: 0<->1, and 2 alone sends back out of itself; 3 is left alone.
    app = dpdk.fwd(fwd_bin, nports=4, app_args=['-p', '0x7'])
    with app:
        assert q(app, '/fwd/info')['ports'] == [0, 1, 2]
        p2 = q(app, '/fwd/port,2')
        assert p2['peer_port'] == 2
        wait_until(lambda: q(app, '/fwd/port,2')['tx_packets'] > 0, 5, 'port 2 looping')
        assert q(app, '/fwd/port,3') is None
        assert q(app, '/fwd/lcores')['ports'] == ['0-2']
        # port 3 exists (it has rte_metrics slots) though we do not forward it
        assert q(app, '/fwd/metrics,3')['port_id'] == 3
        assert q(app, '/ethdev/stats,3')['ipackets'] == 0


# ---- start-up errors and --help ----------------------------------------------------------

STARTUP_ERRORS = [
    # (EAL lcores, vdevs, app args, expected line)
    ('0', 2, [], 'no forwarding lcore: the main lcore 0 does not forward; give EAL at least '
                 'two lcores (e.g. -l 0,1)'),
    ('--lcores=0@0,1@1,2@1', 1, [],
     'lcore 2 has no port to serve (2 forwarding lcores, 1 port): use fewer lcores (-l) or '
     'more ports'),
    ('0,1', 2, ['-p', '0x4'], '-p 0x4: port 2 does not exist (ports: 0-1)'),
    ('0,1', 0, [], 'no Ethernet port (add some with --vdev, e.g. --vdev=net_null0 '
                   '--vdev=net_null1)'),
    ('0,1', 2, ['--fault', 'stall:5:10:10'],
     '--fault stall:5:...: lcore 5 is not a forwarding lcore (forwarding lcores: 1)'),
    ('0,1', 2, ['--telemetry-group', 'dtel-no-such-group'],
     "--telemetry-group 'dtel-no-such-group': no such group"),
]


@pytest.mark.parametrize('lcores,nports,args,line', STARTUP_ERRORS)
def test_startup_error(fwd_bin, lcores, nports, args, line):
    prefix = dpdk.unique_prefix('e')
    lc = [lcores] if lcores.startswith('--') else ['-l', lcores]
    argv = ([fwd_bin] + lc + dpdk.EAL_COMMON + [f'--vdev=net_null{i}' for i in range(nports)]
            + [f'--file-prefix={prefix}', '--'] + args)
    try:
        p = run(argv, check=False)
    finally:
        shutil.rmtree(os.path.join(dpdk.RUNTIME_DIR, prefix), ignore_errors=True)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    # rte_exit: "EAL: Error - exiting with code: 1" then "  Cause: <our one line>"; from
    # 24.11 on the line comes without "Cause: ".
    assert re.search(rf'^(  Cause: )?dpdktel-fwd: {re.escape(line)}$', out, re.M), out
    assert out.count('dpdktel-fwd: ') == 1, out


@pytest.mark.parametrize('args,line', [
    (['--stall-ms', 'abc'],
     "--stall-ms 'abc': expected a whole number of milliseconds from 1 to 600000"),
    (['--mac-mode', 'macswap'], "--mac-mode 'macswap': expected rewrite, swap or none"),
    (['--idle-sleep-us', '20000'],
     '--idle-sleep-us 20000: must be at most 10000 (a tenth of --stall-ms 100), so that a '
     'sleeping lcore is never taken for a stalled one'),
    (['--bogus'], "unknown option '--bogus' (see --help)"),
])
def test_option_error_is_one_line_before_eal(fwd_bin, args, line):
    prefix = dpdk.unique_prefix('o')
    p = run([fwd_bin, '-l', '0,1'] + dpdk.EAL_COMMON + [f'--file-prefix={prefix}', '--'] + args,
            check=False)
    assert p.returncode == 2
    assert p.stderr == f'dpdktel-fwd: {line}\n'
    assert p.stdout == ''
    assert not os.path.exists(os.path.join(dpdk.RUNTIME_DIR, prefix))  # EAL never started


def test_help_lists_every_option(fwd_bin):
    p = run([fwd_bin, '--', '--help'])
    for opt in ('-p PORTMASK', '--mac-mode', 'rewrite', 'swap', 'none', '--heartbeat-ms',
                '--stall-ms', '--link-poll-ms', '--stats-period', '--idle-sleep-us',
                '--telemetry-group', '--fault stall:LCORE:AFTER_MS:FOR_MS',
                '--fault exit:LCORE:AFTER_MS', '--fault main-stall:AFTER_MS:FOR_MS',
                'fault injection', '--help', '-l 0,1'):
        assert opt in p.stdout, opt


# ---- net_tap: real packets from the kernel -----------------------------------------------

@contextlib.contextmanager
def netns():
    """A private network namespace with IPv6 off (no ND/MLD noise on the taps)."""
    name = f'dtns{os.getpid() % 100000}x{next(_ids)}'
    run(['ip', 'netns', 'add', name])
    try:
        run(['ip', 'netns', 'exec', name, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1',
             'net.ipv6.conf.default.disable_ipv6=1'])
        run(['ip', '-n', name, 'link', 'set', 'lo', 'up'])
        yield name
    finally:
        subprocess.run(['ip', 'netns', 'del', name], capture_output=True)


@contextlib.contextmanager
def tap_fwd(fwd_bin, mac_mode='rewrite', extra=()):
    """dpdktel-fwd on a net_tap pair in its own netns; yields (app, ns, tapA, tapB)."""
    n = next(_ids)
    tap_a, tap_b = f'dtA{os.getpid() % 10000}x{n}', f'dtB{os.getpid() % 10000}x{n}'
    with netns() as ns:
        app = dpdk.fwd(fwd_bin, netns=ns,
                       vdevs=[f'net_tap0,iface={tap_a}', f'net_tap1,iface={tap_b}'],
                       app_args=['--mac-mode', mac_mode, '--idle-sleep-us', '100'] +
                       list(extra))
        with app:
            yield app, ns, tap_a, tap_b


def send_frames(ns, tx, rx, count, src, dst):
    out = run(['ip', 'netns', 'exec', ns, PY, RAWFRAMES, '--tx', tx, '--rx', rx, '--count',
               str(count), '--src', src, '--dst', dst, '--timeout', '10'], timeout=60).stdout
    return json.loads(out)


def port_mac(app, pid):
    return q(app, f'/ethdev/info,{pid}')['mac_addr'].lower()


@pytest.mark.parametrize('mode', ['rewrite', 'swap', 'none'])
def test_tap_packets_and_macs(fwd_bin, mode):
    src, dst, n = '02:00:00:00:aa:01', '02:00:00:00:bb:02', 300
    with tap_fwd(fwd_bin, mode) as (app, ns, tap_a, tap_b):
        # No traffic yet: the lcore is IDLE and its heartbeat goes on while it sleeps.
        idle = wait_state(app, 'IDLE')
        wait_until(lambda: q(app, '/fwd/lcore,1')['heartbeat'] > idle['heartbeat'], 5,
                   'heartbeat while idle')
        for rx_port, tx_port, tx_if, rx_if in ((0, 1, tap_a, tap_b), (1, 0, tap_b, tap_a)):
            before_rx = q(app, f'/fwd/port,{rx_port}')['rx_packets']
            before_tx = q(app, f'/fwd/port,{tx_port}')['tx_packets']
            before_eth = q(app, f'/ethdev/stats,{tx_port}')['opackets']
            got = send_frames(ns, tx_if, rx_if, n, src, dst)
            assert got['seqs'] == list(range(n)), got
            assert got['received'] == n
            if mode == 'rewrite':
                want = [f'02:00:00:00:00:{tx_port:02x}', port_mac(app, tx_port)]
            elif mode == 'swap':
                want = [src, dst]
            else:
                want = [dst, src]
            assert got['macs'] == [want + [n]], got['macs']
            # counters match what was sent, exactly (IPv6 is off: no kernel noise)
            after = wait_until(lambda: (p := q(app, f'/fwd/port,{tx_port}'))['tx_packets'] >=
                               before_tx + n and p, 5, 'tx counted')
            assert after['tx_packets'] - before_tx == n
            assert after['tx_dropped'] == 0
            assert q(app, f'/fwd/port,{rx_port}')['rx_packets'] - before_rx == n
            assert q(app, f'/ethdev/stats,{tx_port}')['opackets'] - before_eth == n
        lc = q(app, '/fwd/lcore,1')
        assert lc['rx_packets'] == 2 * n and lc['tx_packets'] == 2 * n
        assert lc['busy_cycles'] > 0


class LinkCtl:
    """Sets interfaces of a netns up/down and returns the CLOCK_MONOTONIC time of the
    change (helpers/linkctl.py), so that `ip`'s start-up is not in the measurement."""

    def __init__(self, ns):
        self.proc = subprocess.Popen(['ip', 'netns', 'exec', ns, PY, LINKCTL], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == 'ready'

    def set(self, iface, state):
        self.proc.stdin.write(f'{state} {iface}\n')
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().split()
        assert answer and answer[0] == 'ok', answer
        return float(answer[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


@contextlib.contextmanager
def linkctl(ns):
    ctl = LinkCtl(ns)
    try:
        yield ctl
    finally:
        ctl.close()


def wait_link(c, port, status, t0, limit=0.050):
    """Poll /fwd/ports and /ethdev/link_status until both show status; assert both within
    limit seconds of t0 (when the interface changed)."""
    seen_fwd = seen_eth = None
    deadline = t0 + 5
    while (seen_fwd is None or seen_eth is None) and time.monotonic() < deadline:
        if seen_fwd is None and c.query('/fwd/ports')['link_status'][port] == status:
            seen_fwd = time.monotonic() - t0
        if seen_eth is None and c.query(f'/ethdev/link_status,{port}')['status'] == status:
            seen_eth = time.monotonic() - t0
    assert seen_fwd is not None and seen_eth is not None, 'link never changed'
    print(f'link {status}: /fwd/ports after {seen_fwd * 1000:.1f} ms, /ethdev/link_status '
          f'after {seen_eth * 1000:.1f} ms')
    assert seen_fwd < limit, f'/fwd/ports took {seen_fwd * 1000:.1f} ms'
    assert seen_eth < limit, f'/ethdev/link_status took {seen_eth * 1000:.1f} ms'


def test_tap_link_down_up_within_50ms(fwd_bin):
    with tap_fwd(fwd_bin) as (app, ns, tap_a, tap_b), linkctl(ns) as ctl:
        with telemetry.Client(app.socket) as c:
            assert c.query('/fwd/ports')['link_status'] == ['UP', 'UP']
            assert c.query('/fwd/port,0')['link_changes'] == 0
            wait_link(c, 0, 'DOWN', ctl.set(tap_a, 'down'))
            p = c.query('/fwd/port,0')
            assert (p['link_status'], p['link_speed'], p['link_duplex']) == ('DOWN', 0,
                                                                            'unknown')
            assert p['link_changes'] == 1
            assert p['last_change_age_ms'] < 1000
            assert c.query('/fwd/port,1')['link_status'] == 'UP'
            wait_until(lambda: c.query('/fwd/metrics')['ports_up'] == 1, 2, 'ports_up 1')
            wait_link(c, 0, 'UP', ctl.set(tap_a, 'up'))
            assert c.query('/fwd/port,0')['link_changes'] == 2
            # `ip link` from outside is seen the same way (that is what operators do)
            run(['ip', '-n', ns, 'link', 'set', 'dev', tap_b, 'down'])
            wait_until(lambda: c.query('/fwd/port,1')['link_status'] == 'DOWN', 2,
                       'port 1 DOWN after ip link set down')
            assert c.query('/fwd/port,1')['link_changes'] == 1


def test_tap_quick_flap_is_counted(fwd_bin):
    """A reader that polls seldom sees UP before and UP after, and link_changes tells it
    the link went down and up in between."""
    with tap_fwd(fwd_bin) as (app, ns, tap_a, tap_b), linkctl(ns) as ctl:
        with telemetry.Client(app.socket) as c:
            before = c.query('/fwd/port,0')
            assert before['link_status'] == 'UP'
            t_down = ctl.set(tap_a, 'down')
            # up again as soon as the forwarder has seen it go down (no fixed sleep)
            wait_until(lambda: c.query('/fwd/port,0')['link_changes'] >=
                       before['link_changes'] + 1, 5, 'down seen', interval=0.001)
            flap = ctl.set(tap_a, 'up') - t_down
            after = wait_until(lambda: (p := c.query('/fwd/port,0'))['link_changes'] >=
                               before['link_changes'] + 2 and p, 5, 'up seen')
            print(f'link was down for {flap * 1000:.1f} ms')
            assert after['link_status'] == 'UP'
            assert after['link_changes'] - before['link_changes'] == 2
            assert q(app, '/fwd/ports')['link_changes'][0] == after['link_changes']


# ---- fault injection ---------------------------------------------------------------------

def test_fault_stall_detected_and_recovered(fwd_bin):
    stall_ms, hb_ms, for_ms = 100, 10, 600
    app = dpdk.fwd(fwd_bin, app_args=['--fault', f'stall:1:500:{for_ms}'])
    with app:
        with telemetry.Client(app.socket) as c:
            wait_until(lambda: c.query('/fwd/lcore,1')['state'] == 'RUNNING', 5, 'RUNNING')
            st = wait_until(lambda: (x := c.query('/fwd/lcore,1'))['state'] == 'STALLED' and x,
                            10, 'STALLED', interval=0.001)
            # From its last loop to being classified STALLED, measured by the forwarder:
            detection_ms = st['heartbeat_age_us'] / 1000 - st['last_change_age_ms']
            print(f'stall detected {detection_ms:.1f} ms after the last heartbeat '
                  f'(bound {stall_ms} + {hb_ms} ms)')
            assert stall_ms <= detection_ms + 1
            assert detection_ms <= stall_ms + hb_ms + 5  # + timer wake-up and ms rounding
            assert st['state_code'] == 3 and st['stalls'] == 1
            again = c.query('/fwd/lcore,1')
            assert again['heartbeat'] == st['heartbeat']  # no heartbeat while stalled
            lcores = c.query('/fwd/lcores')
            assert lcores['state'] == ['STALLED'] and lcores['stalls'] == [1]
            wait_until(lambda: c.query('/fwd/metrics')['lcores_stalled'] == 1, 2,
                       'metrics lcores_stalled')
            back = wait_until(lambda: (x := c.query('/fwd/lcore,1'))['state'] == 'RUNNING' and
                              x, for_ms / 1000 + 5, 'RUNNING again')
            assert back['stalls'] == 1
            assert back['heartbeat'] > st['heartbeat']
            assert c.query('/fwd/metrics')['lcore_stalls'] == 1
        assert 'lcore 1 STALLED' in app.log()


def test_fault_exit(fwd_bin):
    app = dpdk.fwd(fwd_bin, app_args=['--fault', 'exit:1:300'])
    with app:
        ex = wait_state(app, 'EXITED')
        assert ex['state_code'] == 4
        assert q(app, '/fwd/lcores')['state'] == ['EXITED']
        wait_until(lambda: q(app, '/fwd/metrics')['lcores_exited'] == 1, 2, 'lcores_exited')
        assert q(app, '/fwd/lcore,1')['heartbeat'] == ex['heartbeat']
        assert app.stop() == 0
        assert 'final counters' in app.log()


# ---- signals -------------------------------------------------------------------------------

def cli_query(cli, app, cmd):
    """One query through the dpdktel CLI on the app's real telemetry socket."""
    out = run([cli, '-s', app.socket, 'query', cmd], timeout=10).stdout
    return json.loads(out)[cmd.split(',')[0]]


def test_fault_main_stall_shows_in_link_check_age(fwd_bin, dpdktel_cli):
    """--fault main-stall stops the main lcore's checks: /fwd/info link_check_age_ms grows
    past 3 x link_poll_ms while the telemetry threads still answer and the forwarding lcore
    still forwards, and falls back under it once the checks resume."""
    after_ms, for_ms = 1500, 2500
    app = dpdk.fwd(fwd_bin, app_args=['--fault', f'main-stall:{after_ms}:{for_ms}'])
    with app:
        info = cli_query(dpdktel_cli, app, '/fwd/info')
        limit = 3 * info['link_poll_ms']
        stalled = wait_until(
            lambda: (i := cli_query(dpdktel_cli, app, '/fwd/info'))['link_check_age_ms'] >
            limit and i, after_ms / 1000 + 10, f'link_check_age_ms over {limit}')
        # The stall goes on for seconds: the forwarding lcore keeps forwarding meanwhile
        # and the age keeps growing (no check ran in between).
        lc = cli_query(dpdktel_cli, app, '/fwd/lcore,1')
        wait_until(lambda: cli_query(dpdktel_cli, app, '/fwd/lcore,1')['rx_packets'] >
                   lc['rx_packets'], 2, 'lcore 1 forwarding during the main-lcore stall')
        later = cli_query(dpdktel_cli, app, '/fwd/info')['link_check_age_ms']
        assert later > stalled['link_check_age_ms'], (stalled, later)
        back = wait_until(
            lambda: (i := cli_query(dpdktel_cli, app, '/fwd/info'))['link_check_age_ms'] <
            limit and i, for_ms / 1000 + 10, f'link_check_age_ms back under {limit}')
        assert back['uptime_ms'] > stalled['uptime_ms']
        # Once the checks resume they keep running: still fresh a few polls later.
        wait_until(lambda: cli_query(dpdktel_cli, app, '/fwd/info')['uptime_ms'] >
                   back['uptime_ms'] + 5 * info['link_poll_ms'], 5, 'time passing')
        assert cli_query(dpdktel_cli, app, '/fwd/info')['link_check_age_ms'] < limit
        assert 'main lcore: fault injection: no health or link checks' in app.log()
        assert q(app, '/fwd/lcore,1')['state'] == 'RUNNING'


def test_thread_stop_one_lcore_stalls_only_it(fwd_bin, dpdktel_cli, build_dir):
    """tests/tools/thread_stop stops the thread of lcore 1 for 1.5 s from outside (no
    --fault): /fwd/lcores shows lcore 1 STALLED while lcore 2 stays RUNNING, then lcore 1
    RUNNING again, with one stall counted."""
    # Two forwarding lcores sharing CPU 1 (this machine has two cores), one port each.
    app = dpdk.fwd(fwd_bin, nports=2, eal_extra=['--lcores=0@0,1@1,2@1'])
    with app:
        wait_state(app, 'RUNNING', lcore=1)
        wait_state(app, 'RUNNING', lcore=2)
        info = cli_query(dpdktel_cli, app, '/fwd/info')
        assert info['lcores'] == [1, 2]
        tid = threads.lcore_tid(app.pid, 1, main_lcore=info['main_lcore'])
        assert tid != app.pid and tid != threads.lcore_tid(app.pid, 2)

        def lcores():
            lc = cli_query(dpdktel_cli, app, '/fwd/lcores')
            return dict(zip(lc['lcore_id'], zip(lc['state'], lc['stalls'], lc['heartbeat'])))

        with threads.ThreadStop(build_dir, tid, for_ms=1500) as stop:
            # Seen within the stop (1.5 s; STALLED after stall_ms + heartbeat_ms = 110 ms).
            seen = wait_until(lambda: (x := lcores())[1][0] == 'STALLED' and x,
                              1.4, 'lcore 1 STALLED while its thread is stopped')
            assert seen[2][0] == 'RUNNING', seen
            # The other lcore's loop goes on meanwhile.
            wait_until(lambda: (x := lcores())[2][2] > seen[2][2] and x[1][0] == 'STALLED',
                       1, 'lcore 2 looping while lcore 1 is stopped')
            assert stop.release() == 0
        back = wait_until(lambda: (x := lcores())[1][0] == 'RUNNING' and x, 10,
                          'lcore 1 RUNNING again')
        assert back[1][1] == 1 and back[2][1] == 0, back
        assert back[2][0] == 'RUNNING', back


def test_thread_stop_until_stdin_closes_and_errors(fwd_bin, build_dir):
    """The tool's other mode holds the thread until told, and its errors are one clear
    line with exit code 1 (2 for bad usage)."""
    app = dpdk.fwd(fwd_bin)
    with app:
        wait_state(app, 'RUNNING')
        tid = threads.lcore_tid(app.pid, 1)
        with threads.ThreadStop(build_dir, tid) as stop:
            st = wait_state(app, 'STALLED')
            # Held as long as stdin is open: still stalled well past a --for-ms-sized wait.
            wait_until(lambda: q(app, '/fwd/lcore,1')['last_change_age_ms'] > 300, 5,
                       'stall lasting')
            assert q(app, '/fwd/lcore,1')['heartbeat'] == st['heartbeat']
            assert stop.release() == 0
        wait_state(app, 'RUNNING')
        # A second tracer on the same thread is refused: EPERM.
        with threads.ThreadStop(build_dir, tid):
            p = threads.run_tool(build_dir, '--tid', tid, '--for-ms', 10)
            assert p.returncode == 1, p
            assert p.stderr.startswith(f'thread_stop: thread {tid}: not allowed to trace it '
                                       '(EPERM'), p.stderr
        wait_state(app, 'RUNNING')
    # a thread id that does not exist (above pid_max)
    p = threads.run_tool(build_dir, '--tid', 1073741823, '--for-ms', 10)
    assert (p.returncode, p.stdout) == (1, ''), p
    assert p.stderr == 'thread_stop: thread 1073741823: no such thread\n'
    p = threads.run_tool(build_dir, '--tid', 'x1', '--for-ms', 10)
    assert p.returncode == 2
    assert p.stderr == "thread_stop: --tid 'x1': expected a thread id (a positive number)\n"
    p = threads.run_tool(build_dir, '--tid', 5)
    assert p.returncode == 2 and 'exactly one of --for-ms, --until-stdin-closes' in p.stderr


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT])
def test_signal_exits_0_and_releases(fwd_bin, sig):
    prefix = dpdk.unique_prefix('s')
    run_dir = os.path.join(dpdk.RUNTIME_DIR, prefix)
    app = dpdk.fwd(fwd_bin, prefix=prefix)
    try:
        app.start()
        wait_state(app, 'RUNNING')
        assert os.path.exists(app.socket)
        app.send_signal(sig)
        app.proc.wait(15)
        assert app.proc.returncode == 0, app.log()
        log = app.log()
        assert 'final counters' in log
        assert re.search(r'^\s+0 net_null0\s+UP\s+10000\s+0\s+[1-9]\d*\s+[1-9]\d*\s+0$', log,
                         re.M), log
        for name in ('dpdk_telemetry.v2', 'telemetry', 'mp_socket'):
            assert not os.path.exists(os.path.join(run_dir, name)), name
        # the runtime dir is released: the same prefix starts again
        again = dpdk.fwd(fwd_bin, prefix=prefix)
        with again:
            assert q(again, '/fwd/info')['pid'] == again.pid
    finally:
        app.cleanup()


# ---- --telemetry-group -------------------------------------------------------------------

@contextlib.contextmanager
def throwaway_users():
    """A system group with one member, and one user outside it; removed afterwards."""
    tag = f'{os.getpid() % 100000}x{next(_ids)}'
    group, member, outsider = f'dtg{tag}', f'dtm{tag}', f'dto{tag}'
    common = ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell',
              '/usr/sbin/nologin']
    try:
        run(['groupadd', '--system', group])
        run(['useradd'] + common + ['--gid', group, member])
        run(['useradd'] + common + ['--gid', 'nogroup', outsider])
        yield group, pwd.getpwnam(member), pwd.getpwnam(outsider)
    finally:
        for user in (member, outsider):
            subprocess.run(['userdel', user], capture_output=True)
        subprocess.run(['groupdel', group], capture_output=True)


def as_user(user, argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=20, user=user.pw_uid,
                          group=user.pw_gid, extra_groups=[user.pw_gid], cwd='/',
                          env={'PATH': '/usr/bin:/bin', 'HOME': '/nonexistent'})


def test_telemetry_group(fwd_bin, dpdktel_cli):
    parent = dpdk.RUNTIME_DIR
    parent_mode = os.stat(parent).st_mode & 0o7777 if os.path.exists(parent) else None
    try:
        with throwaway_users() as (group, member, outsider):
            gid = grp.getgrnam(group).gr_gid
            app = dpdk.fwd(fwd_bin, app_args=['--telemetry-group', group])
            with app:
                run_dir = os.path.join(parent, app.prefix)
                st = os.stat(run_dir)
                assert (st.st_gid, st.st_mode & 0o777) == (gid, 0o750)
                for name in ('dpdk_telemetry.v2', 'telemetry'):
                    st = os.stat(os.path.join(run_dir, name))
                    assert (st.st_gid, st.st_mode & 0o777) == (gid, 0o660), name
                assert os.stat(parent).st_mode & stat.S_IXOTH
                assert not os.stat(parent).st_mode & stat.S_IROTH  # searchable, not listable
                # a member of the group, not root, queries
                p = as_user(member, [dpdktel_cli, '-s', app.socket, 'query', '/fwd/info'])
                assert p.returncode == 0, p.stderr
                assert json.loads(p.stdout)['/fwd/info']['pid'] == app.pid
                # someone outside it is refused
                p = as_user(outsider, [dpdktel_cli, '-s', app.socket, 'query', '/fwd/info'])
                assert p.returncode != 0
                assert 'permission denied' in p.stderr, p.stderr
                # and the member still cannot touch the runtime dir
                p = as_user(member, ['/usr/bin/touch', os.path.join(run_dir, 'x')])
                assert p.returncode != 0
    finally:
        if parent_mode is not None and os.path.exists(parent):
            os.chmod(parent, parent_mode)


# ---- collectd's stock dpdk_telemetry plugin (legacy v1 socket) ---------------------------

def csv_values(path_glob):
    values = []
    for path in glob.glob(path_glob):
        with open(path) as f:
            for line in f:
                if line and line[0].isdigit():
                    values.append(float(line.split(',')[1]))
    return values


def socket_waiters(pid):
    """The threads of pid blocked in a socket wait (accept, recv), as 'name (tid)'."""
    found = []
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{tid}/wchan') as f:
                wchan = f.read()
            with open(f'/proc/{pid}/task/{tid}/comm') as f:
                name = f.read().strip()
        except FileNotFoundError:
            continue  # the thread has ended
        if wchan == '__skb_wait_for_more_packets':
            found.append(f'{name} ({tid})')
    return found


def test_collectd_dpdk_telemetry_plugin(fwd_bin):
    plugins = '/usr/lib/collectd'
    for so in ('csv.so', 'logfile.so', 'dpdk_telemetry.so'):
        if not os.path.exists(os.path.join(plugins, so)):
            pytest.skip(f'{so} not installed (collectd-core)')
    tmp = tempfile.mkdtemp(prefix='dtcd')
    collectd = None
    try:
        plugin_dir = os.path.join(tmp, 'plugins')
        os.mkdir(plugin_dir)
        for so in ('csv.so', 'logfile.so', 'dpdk_telemetry.so'):
            shutil.copy(os.path.join(plugins, so), plugin_dir)  # collectd refuses symlinks
        app = dpdk.fwd(fwd_bin)
        with app:
            conf = os.path.join(tmp, 'collectd.conf')
            with open(conf, 'w') as f:
                f.write(f'''Hostname "dtelfwd"
FQDNLookup false
BaseDir "{tmp}"
PIDFile "{tmp}/collectd.pid"
PluginDir "{plugin_dir}"
TypesDB "/usr/share/collectd/types.db"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "{tmp}/collectd.log"
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "{tmp}/csv"
  StoreRates false
</Plugin>
LoadPlugin dpdk_telemetry
<Plugin dpdk_telemetry>
  ClientSocketPath "{tmp}/client.sock"
  DpdkSocketPath "{dpdk.RUNTIME_DIR}/{app.prefix}/telemetry"
</Plugin>
''')
            collectd = subprocess.Popen(['collectd', '-f', '-C', conf], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
            host = os.path.join(tmp, 'csv', 'dtelfwd')
            ours = os.path.join(host, 'dpdk_telemetry-rx_packets.0', 'dpdk_telemetry-rx_packets-*')

            # The first sample may be 0, and that is right: the forwarder publishes its
            # rte_metrics (and /fwd/info, which dpdk.fwd waits for) before its lcores start,
            # and refreshes them once per heartbeat_ms, so a read in the first heartbeat
            # period after the start sees 0. A busy host makes that read likely (6 of 32 runs
            # with two CPU hogs and a second forwarder), and since the first csv line stays,
            # the earlier `v[0] > 0` then never came true.
            def rising():
                if collectd.poll() is not None:
                    raise AssertionError(f'collectd exited {collectd.returncode}')
                v = csv_values(ours)
                return len(v) >= 2 and v[-1] > v[0] and v
            try:
                values = wait_until(rising, 30, 'collectd csv values of rx_packets.0',
                                    interval=0.2)
            except Timeout as e:
                # collectd 5.12's dpdk_telemetry logs only errors (its trace lines are DEBUG,
                # not built in Debian's collectd), so a log without its lines is normal. It
                # waits without a timeout for DPDK to connect back (accept, in init) and for
                # each reply (recv, in read): with no csv at all, say who waits.
                log = os.path.join(tmp, 'collectd.log')
                text = open(log).read()[-3000:] if os.path.exists(log) else '(no log)'
                if glob.glob(os.path.join(host, 'dpdk_telemetry-*')):
                    what = f'rx_packets.0 values: {csv_values(ours)[:10]}'
                else:
                    what = ('no dpdk_telemetry value at all; collectd threads blocked in a '
                            f'socket wait: {socket_waiters(collectd.pid) or "none"}')
                raise AssertionError(f'{e}\n{what}\ncollectd.log:\n{text}') from e
            assert values == sorted(values)
            up = csv_values(os.path.join(host, 'dpdk_telemetry-ports_up',
                                         'dpdk_telemetry-ports_up-*'))
            assert up and up[-1] == 2
            # the plugin also registers the ports' xstats into rte_metrics on first use
            assert csv_values(os.path.join(host, 'dpdk_telemetry-rx_good_packets.1', '*'))
    finally:
        if collectd is not None:
            if collectd.poll() is None:
                os.kill(collectd.pid, signal.SIGTERM)
                try:
                    collectd.wait(10)
                except subprocess.TimeoutExpired:
                    os.kill(collectd.pid, signal.SIGKILL)
                    collectd.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
