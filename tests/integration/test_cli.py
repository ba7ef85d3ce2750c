"""dpdktel CLI against a real dpdk-testpmd on net_null ports, of every DPDK release
(the dpdk_release fixture: test ids end in the release, [24.11])."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

from helpers import dpdk
from helpers.fakedpdk import FakeDpdk
from helpers.wait import wait_until


def run(cli, *args, check=True, timeout=20):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f'dpdktel {" ".join(args)} exited {p.returncode}: {p.stderr}')
    return p


@pytest.fixture
def testpmd4(dpdk_release):
    """testpmd, interactive on a pipe so that the test can stop forwarding."""
    app = dpdk.testpmd(nports=4, extra=['-i'], release=dpdk_release)
    with app:
        yield app


@pytest.fixture(scope='module')
def cli_pmd():
    """A testpmd of the default release for the tests of the CLI's own option handling,
    which does not change with the DPDK release (the matrix runs the others per release)."""
    app = dpdk.testpmd(nports=4, extra=['-i'])
    with app:
        yield app


def read_testpmd_stats(app):
    """Send 'show port stats all' to testpmd and parse its own counters per port."""
    before = app.log().count('NIC statistics for port 3')
    app.proc.stdin.write(b'show port stats all\n')
    app.proc.stdin.flush()
    wait_until(lambda: app.log().count('NIC statistics for port 3') > before, 10,
               'testpmd port stats')
    text = app.log()
    text = text[text.rfind('NIC statistics for port 0'):]
    stats = {}
    for block in re.split(r'NIC statistics for port ', text)[1:]:
        port = int(block.split()[0])
        nums = dict((k, int(v)) for k, v in re.findall(r'([A-Za-z-]+):\s+(\d+)', block))
        stats[port] = nums
    return stats


def test_list_shows_live_testpmd(dpdktel_cli, testpmd4, dpdk_release):
    out = json.loads(run(dpdktel_cli, 'list', '--json').stdout)
    mine = [i for i in out if i['prefix'] == testpmd4.prefix]
    assert len(mine) == 1, out
    assert mine[0]['state'] == 'live'
    assert mine[0]['pid'] == testpmd4.pid
    assert mine[0]['app'] == 'dpdk-testpmd'
    assert mine[0]['version'].startswith(f'DPDK {dpdk_release.name}')
    assert mine[0]['socket'] == testpmd4.socket


def test_query_port_list(dpdktel_cli, testpmd4):
    out = run(dpdktel_cli, '-p', testpmd4.prefix, 'query', '/ethdev/list').stdout
    assert json.loads(out) == {'/ethdev/list': [0, 1, 2, 3]}
    raw = run(dpdktel_cli, '-p', testpmd4.prefix, 'query', '--raw', '/ethdev/list').stdout
    assert raw == '{"/ethdev/list":[0,1,2,3]}\n'


def test_ports_agree_with_testpmd(dpdktel_cli, testpmd4):
    # Forwarding runs: counters advance between two reads.
    first = json.loads(run(dpdktel_cli, '-p', testpmd4.prefix, 'ports', '--json').stdout)
    wait_until(lambda: json.loads(run(dpdktel_cli, '-p', testpmd4.prefix, 'ports',
                                      '--json').stdout)[0]['ipackets'] > first[0]['ipackets'],
               10, 'rx counters advancing')
    # Stop forwarding so that counters hold still, then compare with testpmd's own view.
    testpmd4.proc.stdin.write(b'stop\n')
    testpmd4.proc.stdin.flush()
    wait_until(lambda: 'Forward statistics for port 3' in testpmd4.log(), 10,
               'testpmd to stop forwarding')
    ours = json.loads(run(dpdktel_cli, '-p', testpmd4.prefix, 'ports', '--json').stdout)
    theirs = read_testpmd_stats(testpmd4)
    assert [p['port_id'] for p in ours] == [0, 1, 2, 3]
    for p in ours:
        t = theirs[p['port_id']]
        assert p['name'] == f'net_null{p["port_id"]}'
        assert p['link_status'] == 'up'
        assert p['ipackets'] == t['RX-packets'] > 0
        assert p['opackets'] == t['TX-packets'] > 0
        assert p['imissed'] == t['RX-missed']
        assert p['ierrors'] == t['RX-errors']
        assert p['rx_nombuf'] == t['RX-nombuf']
        assert p['oerrors'] == t['TX-errors']
        assert p['ibytes'] == t['RX-bytes']


def test_watch_prints_rates_when_piped(dpdktel_cli, testpmd4):
    out = run(dpdktel_cli, '-p', testpmd4.prefix, 'watch', '-i', '0.2', '-c', '2').stdout
    lines = out.strip().splitlines()
    assert len(lines) == 8, out  # 2 refreshes x 4 ports
    for line in lines:
        fields = dict(kv.split('=', 1) for kv in line.split()[1:])
        assert fields['link'] == 'up'
        assert float(fields['rx_pps']) > 0
    assert {l.split()[1] for l in lines} == {f'port={i}' for i in range(4)}


def test_killed_app_reported_gone_within_a_second(dpdktel_cli, dpdk_release):
    app = dpdk.testpmd(nports=2, release=dpdk_release)
    with app:
        run(dpdktel_cli, '-p', app.prefix, 'ports')
        app.kill9()
        t0 = time.monotonic()
        p = run(dpdktel_cli, '-p', app.prefix, 'ports', check=False)
        elapsed = time.monotonic() - t0
        assert p.returncode == 1
        assert f"prefix '{app.prefix}' is gone" in p.stderr
        assert 'stale socket' in p.stderr
        assert elapsed < 1.0
        out = json.loads(run(dpdktel_cli, 'list', '--json').stdout)
        assert [i['state'] for i in out if i['prefix'] == app.prefix] == ['stale']


def test_stopped_app_reported_not_running(dpdktel_cli, dpdk_release):
    app = dpdk.testpmd(nports=2, release=dpdk_release)
    with app:
        assert app.stop(signal.SIGTERM) == 0
        p = run(dpdktel_cli, '-p', app.prefix, 'ports', check=False)
        assert p.returncode == 1
        assert f"no DPDK application with prefix '{app.prefix}' is running" in p.stderr


def test_second_process_on_same_prefix_gets_index_1(dpdktel_cli, dpdk_release):
    prefix = dpdk.unique_prefix('n')
    a = dpdk.testpmd(prefix=prefix, nports=1, extra=[], release=dpdk_release)
    b = dpdk.testpmd(prefix=prefix, nports=1, extra=[], index=1, release=dpdk_release)
    for app in (a, b):  # no shared config: both may be primaries on one prefix
        app.argv.insert(app.argv.index('--'), '--no-shconf')
    with a, b:
        info = json.loads(run(dpdktel_cli, '-p', prefix, '-N', '1', 'query', '/info').stdout)
        assert info['/info']['pid'] == b.pid
        info0 = json.loads(run(dpdktel_cli, '-p', prefix, 'query', '/info').stdout)
        assert info0['/info']['pid'] == a.pid
        listed = json.loads(run(dpdktel_cli, 'list', '--json').stdout)
        mine = sorted((i['index'], i['pid']) for i in listed if i['prefix'] == prefix)
        assert mine == [(0, a.pid), (1, b.pid)]


class ServerThread:
    """tests/tools/server_thread connected to an application's socket: the thread of the
    application libdpdktel measures as the one serving it, held until close()."""

    def __init__(self, build_dir, socket_path):
        tool = os.path.join(build_dir, 'tests', 'tools', 'server_thread')
        self.proc = subprocess.Popen([tool, socket_path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # printed once connected (5 s connect timeout)
        assert line.startswith('tid '), (line, self.proc.stderr.read() if not line else '')
        self.tid = int(line.split()[1])

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(10) == 0


def test_server_thread_is_the_one_serving_us(build_dir, dpdk_release):
    """The thread whose CPU time libdpdktel counts as what its requests cost the application
    (telemetry/appcpu.c) is a thread of the application named after DPDK's v2 listener, not
    the listener, and it ends when our connection does: DPDK's thread for our connection.
    A second client's is its own."""
    app = dpdk.testpmd(nports=2, release=dpdk_release)
    with app:
        first = ServerThread(build_dir, app.socket)
        task = f'/proc/{app.pid}/task/{first.tid}'
        with open(f'{task}/comm') as f:
            name = f.read().strip()
        assert 'telemet' in name and name.endswith('-v2'), name
        # The second client connects clock ticks after the first thread started (its start
        # time, field 22 of stat, in ticks since boot), so that the two are told apart.
        with open(f'{task}/stat') as f:
            started = int(f.read().rsplit(')', 1)[1].split()[19])
        hz = os.sysconf('SC_CLK_TCK')

        def now_ticks():
            with open('/proc/uptime') as f:
                return float(f.read().split()[0]) * hz
        wait_until(lambda: now_ticks() >= started + 2, 5, 'two clock ticks after the first')
        second = ServerThread(build_dir, app.socket)
        assert second.tid != first.tid
        first.close()
        wait_until(lambda: not os.path.exists(task), 5, f'thread {first.tid} ended with us')
        assert os.path.exists(f'/proc/{app.pid}/task/{second.tid}')
        second.close()
        wait_until(lambda: not os.path.exists(f'/proc/{app.pid}/task/{second.tid}'), 5,
                   f'thread {second.tid} ended with the second client')


def test_usage_errors_exit_2(dpdktel_cli):
    assert run(dpdktel_cli, check=False).returncode == 2
    assert run(dpdktel_cli, 'frobnicate', check=False).returncode == 2
    assert run(dpdktel_cli, '-t', 'soon', 'list', check=False).returncode == 2
    assert run(dpdktel_cli, '-s', '/x', '-p', 'y', 'ports', check=False).returncode == 2
    p = run(dpdktel_cli, '-p', 'x', 'query', 'noslash', check=False)
    assert p.returncode == 2 and 'invalid command' in p.stderr
    assert run(dpdktel_cli, '--help').stdout.startswith('Usage: dpdktel')


def test_help_after_a_command(dpdktel_cli):
    for cmd in ('list', 'query', 'ports', 'watch'):
        p = run(dpdktel_cli, cmd, '--help', check=False)
        assert p.returncode == 0 and p.stdout.startswith('Usage: dpdktel'), (cmd, p)
    assert run(dpdktel_cli, 'query', '-h', check=False).returncode == 0


def test_options_after_operands(dpdktel_cli, cli_pmd):
    """Every command takes its own options and the global ones before or after its operands,
    as --help and the man page write them ("query CMD --raw")."""
    p = cli_pmd.prefix
    raw = '{"/ethdev/list":[0,1,2,3]}\n'
    assert run(dpdktel_cli, '-p', p, 'query', '/ethdev/list', '--raw').stdout == raw
    assert run(dpdktel_cli, 'query', '/ethdev/list', '--raw', '-p', p).stdout == raw
    assert run(dpdktel_cli, 'query', '--raw', '-p', p, '/ethdev/list', '-t', '2').stdout == raw
    for args in (['-p', p, 'ports', '--json'], ['ports', '--json', '-p', p],
                 ['ports', '--prefix', p, '--json'], ['ports', '--json', '-s', cli_pmd.socket]):
        ports = json.loads(run(dpdktel_cli, *args).stdout)
        assert [x['port_id'] for x in ports] == [0, 1, 2, 3], args
    out = json.loads(run(dpdktel_cli, 'list', '--json', '-d', cli_pmd.runtime_dir).stdout)
    assert [i['state'] for i in out if i['prefix'] == p] == ['live']
    out = run(dpdktel_cli, 'watch', '-c', '1', '-p', p, '-i', '0.2').stdout
    assert sorted(l.split()[1] for l in out.splitlines()) == [f'port={i}' for i in range(4)]


def test_option_errors_after_operands(dpdktel_cli, cli_pmd):
    p = cli_pmd.prefix
    # Operands still counted after options moved behind them; global checks still made.
    r = run(dpdktel_cli, 'query', '/ethdev/list', '/info', '-p', p, check=False)
    assert r.returncode == 2 and 'query takes one command' in r.stderr
    r = run(dpdktel_cli, 'ports', 'extra', '--json', '-p', p, check=False)
    assert r.returncode == 2 and 'ports takes no arguments' in r.stderr
    r = run(dpdktel_cli, 'ports', '-p', p, '-s', cli_pmd.socket, check=False)
    assert r.returncode == 2 and 'cannot be combined' in r.stderr
    r = run(dpdktel_cli, 'watch', '-c', '1', '-t', 'soon', '-p', p, check=False)
    assert r.returncode == 2 and "invalid timeout 'soon'" in r.stderr
    r = run(dpdktel_cli, 'query', '/ethdev/list', '--bogus', '-p', p, check=False)
    assert r.returncode == 2 and 'bogus' in r.stderr
    # "--" ends the options: what follows is an operand even when it looks like one.
    r = run(dpdktel_cli, '-p', p, 'query', '--', '--raw', check=False)
    assert r.returncode == 2 and "invalid command '--raw'" in r.stderr


# A device name with a colour escape, a newline, a quote and a C1 CSI. No real DPDK device
# name can hold them: DPDK 22.11's telemetry escapes '"', '\\', \n, \r and \t and drops other
# control characters (lib/telemetry/telemetry_json.h, __json_format_str_to_buf()), so a
# newline does reach a client, and a server that is not DPDK 22.11 may send \u001b. The fake
# answers as DPDK 22.11 does (helpers/fakedpdk.py) but for this name.
EVIL_NAME = 'ev\x1b[31mil\nname"q\x9b'
EVIL_SHOWN = 'ev\\u001b[31mil\\u000aname\\"q\\u009b'


class EvilNames(FakeDpdk):
    def recorded(self, req):
        r = super().recorded(req)
        if req.startswith('/ethdev/info,'):
            info = json.loads(r)
            info['/ethdev/info']['name'] = EVIL_NAME
            r = json.dumps(info).encode()  # ensure_ascii: \u001b, \n, \u009b
        return r


def assert_terminal_safe(text):
    bad = [c for c in text if c != '\n' and (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0)]
    assert not bad, (bad, text)


@pytest.fixture
def evil_app():
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, 'evil'))
        with EvilNames(os.path.join(d, 'evil', 'dpdk_telemetry.v2'), nports=2) as fake:
            yield fake


def test_ports_and_watch_escape_device_names(dpdktel_cli, evil_app):
    out = run(dpdktel_cli, '-s', evil_app.path, 'ports', '--json').stdout
    assert_terminal_safe(out)
    assert [p['name'] for p in json.loads(out)] == [EVIL_NAME] * 2
    assert f'"name":"{EVIL_SHOWN}"' in out
    out = run(dpdktel_cli, '-s', evil_app.path, 'ports').stdout
    assert_terminal_safe(out)
    assert len(out.splitlines()) == 3 and out.count(f' {EVIL_SHOWN} ') == 2, out
    out = run(dpdktel_cli, '-s', evil_app.path, 'watch', '-i', '0.1', '-c', '1').stdout
    assert_terminal_safe(out)
    assert out.count(f' name={EVIL_SHOWN} link=up ') == 2, out
