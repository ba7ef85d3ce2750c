"""dpdktel_events in a real collectd against real DPDK applications on net_tap ports."""
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import yaml

from helpers import dpdk, threads
from helpers.collectd import Collectd
from helpers.notes import Notes
from helpers.wait import wait_until


def events_config(path, extra=''):
    return ('LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n'
            f'{extra}  <Instance "tap">\n    SocketPath "{path}"\n  </Instance>\n</Plugin>\n')


def tap_pmd(tag, release):
    """testpmd of `release` on two net_tap ports; returns the app and the kernel iface
    names."""
    ifaces = [f'dt{tag}{os.getpid() % 10000}{i}' for i in range(2)]
    app = dpdk.testpmd(nports=2, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                       release=release)
    return app, ifaces


def ip_link(iface, state):
    subprocess.run(['ip', 'link', 'set', 'dev', iface, state], check=True)


def notes(cd, plugin='dpdktel_events'):
    return [n for n in cd.notifications() if n.get('plugin') == plugin]


def wait_note(cd, text, timeout=10, since=0):
    """The last notification containing text, among those after the first `since`."""
    return wait_until(lambda: [n for n in notes(cd)[since:] if text in n['message']], timeout,
                      f'notification "{text}"')[-1]


class OneAtATime:
    """Processes that tests of this module share: one set at a time, started on first use
    and ended when another set is asked for (or the module ends). Tests run grouped by DPDK
    release, in file order, so each set starts once per release, and no two busy testpmds
    compete for this machine's two CPUs."""

    def __init__(self):
        self.key = self.stack = self.value = None

    def get(self, key, start):
        """start(stack) -> value, entering its processes' contexts on stack."""
        if key != self.key:
            self.close()
            stack = contextlib.ExitStack()
            try:
                self.value = start(stack)
            except BaseException:
                stack.close()
                raise
            self.key, self.stack = key, stack
        return self.value

    def close(self):
        if self.stack is not None:
            self.key, stack, self.stack = None, self.stack, None
            stack.close()


@pytest.fixture(scope='module')
def shared():
    one = OneAtATime()
    yield one
    one.close()


@pytest.fixture
def alone(shared):
    """For a test with processes of its own: the shared ones end first."""
    shared.close()


@pytest.fixture
def tap_set(shared, dpdk_release, build_dir, source_dir):
    """testpmd of the release on two net_tap ports, and collectd watching it as "tap"."""
    def start(stack):
        app, ifaces = tap_pmd('e', dpdk_release)
        stack.enter_context(app)
        # Timeout 1: testpmd setting up its tap ports on a loaded 2-core machine can leave
        # two 0.2 s polls unanswered, which is a second outage by the plugin's rule (seen
        # once under ASan in CI).
        cd = stack.enter_context(Collectd(build_dir, source_dir,
                                          events_config(app.socket, '  Timeout 1\n'),
                                          ours=('dpdktel_events',)))
        return app, ifaces, cd
    return shared.get(('tap', dpdk_release.name), start)


@pytest.fixture
def null_set(shared, dpdk_release, build_dir, source_dir):
    """testpmd of the release, interactive on a pipe (the test can close a port), on two
    net_null ports, and collectd watching it as "pmd" with Timeout 0.2."""
    def start(stack):
        app = stack.enter_context(dpdk.testpmd(nports=2, extra=('-i',), release=dpdk_release))
        config = ('LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n'
                  f'  Timeout 0.2\n  <Instance "pmd">\n    SocketPath "{app.socket}"\n'
                  '  </Instance>\n</Plugin>\n')
        cd = stack.enter_context(Collectd(build_dir, source_dir, config,
                                          ours=('dpdktel_events',)))
        return app, cd
    return shared.get(('null', dpdk_release.name), start)


def test_link_down_and_up_on_testpmd(tap_set):
    """On every release; testpmd without --record-core-cycles has no lcore data (22.11: no
    /eal/lcore commands; 23.11 on: /eal/lcore/usage lists no lcore) and is watched for its
    links only, which one INFO line says."""
    app, ifaces, cd = tap_set
    wait_until(lambda: cd.getval('dpdktel_events-tap.port0/link_status') == {'value': 1.0},
               10, 'link_status 1 via unixsock')
    ip_link(ifaces[0], 'down')
    n = wait_note(cd, 'Link down on tap port 0')
    assert n['severity'] == 'FAILURE'
    assert n['message'] == 'Link down on tap port 0 (net_tap0)'
    assert n['plugin_instance'] == 'tap.port0' and n['type'] == 'link_status'
    wait_until(lambda: cd.getval('dpdktel_events-tap.port0/link_status') == {'value': 0.0},
               5, 'link_status 0 via unixsock')
    ip_link(ifaces[0], 'up')
    n = wait_note(cd, 'Link up on tap port 0')
    assert n['severity'] == 'OKAY'
    assert n['message'].startswith('Link up on tap port 0: 10000 Mbps full-duplex after ')
    wait_until(lambda: cd.getval('dpdktel_events-tap.port0/link_status') == {'value': 1.0},
               5, 'link_status back to 1')
    assert not [n for n in notes(cd) if 'port 1' in n['message']]
    assert cd.log().count('only its links are watched') == 1, cd.log()
    assert not [n for n in notes(cd) if 'lcore' in n['message']]


def test_instance_gone_back_restarted(tap_set):
    """One kill gives one gone/back pair (after the link test on the same testpmd)."""
    app, _, cd = tap_set
    since = len(notes(cd))
    wait_until(lambda: cd.getval('dpdktel_events-tap/up') == {'value': 1.0}, 10, 'up 1')
    old = app.pid
    app.kill9()
    n = wait_note(cd, 'DPDK application tap is gone', since=since)
    assert n['severity'] == 'FAILURE' and n['type'] == 'up'
    app.start()
    wait_note(cd, 'DPDK application tap is back after', since=since)
    n = wait_note(cd, f'DPDK application tap restarted (pid {old} → {app.pid})',
                  since=since)
    assert n['severity'] == 'WARNING'
    # One outage, one pair: no link-down per port for a gone application.
    msgs = [n['message'] for n in notes(cd)[since:]]
    assert sum('is gone' in m for m in msgs) == 1, (msgs, cd.log())
    assert sum('is back' in m for m in msgs) == 1, (msgs, cd.log())
    assert not any(m.startswith('Link') for m in msgs), msgs


def fwd_taps(fwd_bin, tag, app_args=()):
    ifaces = [f'dt{tag}{os.getpid() % 10000}{i}' for i in range(2)]
    app = dpdk.fwd(fwd_bin, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                   app_args=['--idle-sleep-us', '100'] + list(app_args))
    return app, ifaces


def test_forwarder_link_and_stall(alone, build_dir, source_dir, fwd_bin):
    # lcore 1's thread is stopped (ptrace) once collectd has seen it run, and held until the
    # stall is reported: a stall timed from the forwarder's start came before collectd's
    # first polls where collectd started slowly (ASan, a loaded machine).
    app, ifaces = fwd_taps(fwd_bin, 's')
    with app, Collectd(build_dir, source_dir, events_config(app.socket),
                       ours=('dpdktel_events',)) as cd:
        wait_until(lambda: cd.getval('dpdktel_events-tap.lcore1/lcore_state') in
                   ({'value': 1.0}, {'value': 2.0}), 30, 'lcore 1 RUNNING or IDLE')
        with threads.ThreadStop(build_dir, threads.lcore_tid(app.pid, 1)):
            n = wait_note(cd, 'lcore 1 of tap stalled: no heartbeat for ')
        assert n['severity'] == 'FAILURE'
        assert n['plugin_instance'] == 'tap.lcore1' and n['type'] == 'lcore_state'
        n = wait_note(cd, 'lcore 1 of tap recovered after ')
        assert n['severity'] == 'OKAY'
        wait_until(lambda: cd.getval('dpdktel_events-tap.lcore1/lcore_state') in
                   ({'value': 1.0}, {'value': 2.0}), 5, 'lcore RUNNING or IDLE again')
        # The episode is counted (the csv writer's raw value: a counter, not a rate).
        cd.wait_value('dpdktel_events-tap.lcore1/stalls', lambda row: row[1][0] >= 1, 5,
                      'stalls counting the episode')
        ip_link(ifaces[1], 'down')
        n = wait_note(cd, 'Link down on tap port 1 (net_tap1)')
        ip_link(ifaces[1], 'up')
        wait_note(cd, 'Link up on tap port 1: ')
        # The forwarder counts link changes itself: two, seen through /fwd/ports.
        wait_until(lambda: cd.getval('dpdktel_events-tap.port1/link_changes') is not None, 5,
                   'link_changes')
        assert 'only its links are watched' not in cd.log()


def test_forwarder_exit_fault(alone, build_dir, source_dir, fwd_bin):
    app, _ = fwd_taps(fwd_bin, 'x', ['--fault', 'exit:1:1000'])
    with app, Collectd(build_dir, source_dir, events_config(app.socket),
                       ours=('dpdktel_events',)) as cd:
        n = wait_note(cd, 'lcore 1 of tap exited')
        assert n['severity'] == 'FAILURE'
        wait_until(lambda: cd.getval('dpdktel_events-tap.lcore1/lcore_state') == {'value': 4.0},
                   5, 'lcore_state 4 (EXITED)')


def stopped_for(pid, seconds):
    """The fault itself: the whole application stops (SIGSTOP) for this long, then runs on."""
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(pid, signal.SIGCONT)


def requests_sent(cd):
    row = cd.last('dpdktel_events-pmd/telemetry_requests-sent')
    return row[1][0] if row else 0


def test_slow_reply_is_not_an_outage_and_a_hang_is_not_gone(null_set):
    """A real testpmd that stops for 0.3 s with Timeout 0.2 is no news (before: "is gone",
    then "is back after 240 ms"); one that stops for 3 s is "not responding", then "answers
    again", and never "gone": its process was alive all along."""
    app, cd = null_set
    wait_until(lambda: cd.getval('dpdktel_events-pmd/up') == {'value': 1.0}, 10, 'up 1')
    for _ in range(3):
        stopped_for(app.pid, 0.3)
        sent = requests_sent(cd)
        # Polls after it runs again, as the next collectd reads show them.
        wait_until(lambda: requests_sent(cd) > sent + 20, 10, 'polls after SIGCONT')
    msgs = [n['message'] for n in notes(cd)]
    assert not any('DPDK application' in m for m in msgs), (msgs, cd.log())
    stopped_for(app.pid, 3)
    n = wait_note(cd, 'DPDK application pmd is not responding')
    assert n['severity'] == 'FAILURE' and n['type'] == 'up'
    assert f'(pid {app.pid} alive, no reply for ' in n['message'], n['message']
    n = wait_note(cd, 'DPDK application pmd answers again after')
    assert n['severity'] == 'OKAY'
    wait_until(lambda: cd.getval('dpdktel_events-pmd/not_responding') == {'value': 0.0},
               5, 'not_responding back to 0')
    msgs = [n['message'] for n in notes(cd)]
    assert sum('not responding' in m for m in msgs) == 1, msgs
    assert not any('is gone' in m or 'is back' in m for m in msgs), (msgs, cd.log())
    # While it was hung, the value said so (the csv writer keeps every value).
    assert any(v[0] == 1.0 for _, v in cd.csv('dpdktel_events-pmd/not_responding')), \
        'not_responding was never 1'


def test_closed_port_stops_being_reported(null_set):
    """testpmd closes a port (net_null releases it: it leaves /ethdev/list): one INFO line,
    and its values stop while the other port's go on (before, they went on forever). Last
    on its testpmd: the port stays closed."""
    app, cd = null_set
    cd.wait_value('dpdktel_events-pmd.port1/link_status', what='port 1 values')
    app.proc.stdin.write(b'stop\nport stop 1\nport close 1\n')
    app.proc.stdin.flush()
    wait_until(lambda: "port 1 of DPDK application 'pmd' is no longer listed: its values "
               'stop' in cd.log(), 10, 'the INFO line for port 1')
    last1 = cd.last('dpdktel_events-pmd.port1/link_status')[0]
    # Two more reads of port 0 after the last value of port 1 was written.
    cd.wait_value('dpdktel_events-pmd.port0/link_status',
                  lambda row: row[0] > last1 + 2 * cd.interval, what='port 0 goes on')
    assert cd.last('dpdktel_events-pmd.port1/link_status')[0] == last1
    assert cd.log().count('is no longer listed') == 1


def test_forwarder_main_lcore_stall(alone, build_dir, source_dir, fwd_bin):
    """dpdktel-fwd's main lcore stops checking links for 4 s (--fault main-stall): one
    FAILURE and one OKAY, and a link that goes down meanwhile is still reported, read from
    /ethdev/link_status while /fwd/ports is stale."""
    app, ifaces = fwd_taps(fwd_bin, 'm', ['--fault', 'main-stall:3000:4000'])
    with app, Collectd(build_dir, source_dir, events_config(app.socket),
                       ours=('dpdktel_events',)) as cd:
        n = wait_note(cd, 'main lcore 0 of tap stalled: links not checked for ')
        assert n['severity'] == 'FAILURE'
        assert n['plugin_instance'] == 'tap.lcore0' and n['type'] == 'lcore_state'
        ip_link(ifaces[1], 'down')
        n = wait_note(cd, 'Link down on tap port 1 (net_tap1)', timeout=3)
        assert not [m for m in notes(cd) if 'checks the links again' in m['message']], \
            'the link-down came from /fwd/ports after the main lcore resumed'
        n = wait_note(cd, 'main lcore 0 of tap checks the links again after ')
        assert n['severity'] == 'OKAY'
        ip_link(ifaces[1], 'up')
        wait_note(cd, 'Link up on tap port 1: ')
        msgs = [m['message'] for m in notes(cd)]
        assert sum('main lcore' in m for m in msgs) == 2, msgs


# Lcore stalls of a third-party application: testpmd >= 23.11 with --record-core-cycles ----

STALL_S = 0.2
# Beyond the documented StallThreshold + 2 polls: the notification's own path, and a poll
# thread that a loaded 2-core host wakes late (seen 281 ms against 260 ms with 20 ms, DPDK
# 23.11 in the version matrix beside the Debian 13 phase and the DPDK builds). A stall
# clock that starts wrong is off by the threshold, 200 ms, or more.
STALL_SLACK = 0.060
POLL_S = 0.02


def usage_testpmd(release):
    """testpmd of `release` forwarding (io, started at once) on two net_null ports with two
    forwarding lcores, recording their cycles (/eal/lcore/usage lists lcores 1 and 2).
    Three lcores on a 2-CPU machine: --lcores maps both workers onto CPU 1 (-l 0,1,2 is
    refused there); testpmd on null ports runs stable so."""
    lcores = '0@0,1@1,2@1' if os.cpu_count() < 3 else '0-2'
    prefix = dpdk.unique_prefix('u')
    argv = (['stdbuf', '-oL', release.testpmd, f'--lcores={lcores}'] + dpdk.EAL_COMMON +
            ['--vdev=net_null0', '--vdev=net_null1', f'--file-prefix={prefix}', '--',
             '--forward-mode=io', '--auto-start', '--record-core-cycles', '--nb-cores=2'])
    if release.prefix:
        argv.append('--total-num-mbufs=155456')  # as dpdk.testpmd() does, for -m 1024
    return dpdk.DpdkApp(argv, prefix, name='testpmd', env=release.env())


@pytest.fixture
def cycles_set(shared, dpdk_release, build_dir, source_dir):
    """testpmd with cycles and collectd watching it, per release >= 23.11 (notifications
    through exec, with their own times to the millisecond)."""
    if dpdk_release.key < (23, 11):
        pytest.skip(f'DPDK {dpdk_release.version} has no /eal/lcore/usage (from 23.03) and '
                    'its testpmd names worker threads otherwise: lcore stalls of a '
                    'third-party application need DPDK >= 23.11 here')

    def start(stack):
        # exec runs the notification script as nobody: not under pytest's tmp dirs (0700).
        base = tempfile.mkdtemp(prefix='dtev-')
        stack.callback(shutil.rmtree, base, ignore_errors=True)
        notes = Notes(base)
        app = stack.enter_context(usage_testpmd(dpdk_release))
        config = (notes.config() + 'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n'
                  f'  PollInterval {POLL_S}\n  StallThreshold {STALL_S}\n'
                  f'  <Instance "pmd">\n    SocketPath "{app.socket}"\n  </Instance>\n'
                  '</Plugin>\n')
        cd = stack.enter_context(Collectd(build_dir, source_dir, config,
                                          ours=('dpdktel_events',), system_plugins=('exec',)))
        return app, cd, notes
    return shared.get(('cycles', dpdk_release.name), start)


def lcore_poll_interval(cd):
    """The lcore poll's interval in force (s), as the plugin publishes it (0: none yet)."""
    v = cd.getval('dpdktel_events-pmd/poll_interval-lcore')
    return v['value'] if v else 0.0


def test_third_party_lcore_stall(cycles_set, build_dir, dpdk_release):
    """ptrace stops forwarding lcore 1 of a running testpmd: dpdktel_events reports it
    stalled within StallThreshold + 2 × the lcore poll's interval in force + STALL_SLACK, and
    recovered once it runs again; lcore 2 forwards on and gives no notification."""
    app, cd, notes = cycles_set
    for lc in (1, 2):
        wait_until(lambda: cd.getval(f'dpdktel_events-pmd.lcore{lc}/lcore_state') ==
                   {'value': 1.0}, 15, f'lcore {lc} RUNNING')
    notes.drain()
    tid = threads.lcore_tid(app.pid, 1)
    intervals = [lcore_poll_interval(cd)]
    with threads.ThreadStop(build_dir, tid):
        stopped = time.time()  # "stopped TID" was read: the thread is stopped
        n = notes.wait(r'^lcore 1 of pmd stalled: total_cycles did not advance for ', 5)
        latency = n['time'] - stopped
    intervals.append(lcore_poll_interval(cd))
    # 2 x the lcore poll's interval in force: PollInterval, or longer where PollLoad stretches
    # it (a VM whose wake-ups cost 0.3 ms a request: seen 512 ms at 0.09 s polls); and
    # STALL_SLACK for the notification's own path and a poll thread woken late.
    bound = STALL_S + 2 * max([POLL_S] + intervals) + STALL_SLACK
    print(f'DPDK {dpdk_release.version}: lcore stall reported {latency * 1000:.0f} ms after '
          f'the thread stopped (bound {bound * 1000:.0f} ms; lcore poll every '
          f'{", ".join(f"{x * 1000:.0f}" for x in intervals)} ms)')
    assert n['Severity'] == 'FAILURE' and n['PluginInstance'] == 'pmd.lcore1', n
    assert latency <= bound, f'{latency * 1000:.0f} ms > {bound * 1000:.0f} ms'
    r = notes.wait(r'^lcore 1 of pmd recovered after ', 5)
    assert r['Severity'] == 'OKAY' and r['PluginInstance'] == 'pmd.lcore1', r
    wait_until(lambda: cd.getval('dpdktel_events-pmd.lcore1/lcore_state') == {'value': 1.0},
               5, 'lcore 1 RUNNING again')
    others = [m for m in notes.all() if 'lcore 1 ' not in m['message']]
    assert not others, others
    assert 'only its links are watched' not in cd.log()
    # Over windows of a second: lcore 2 forwards on null ports, busy nearly all the time.
    busy = wait_until(lambda: cd.getval('dpdktel_events-pmd.lcore2/percent-busy'), 10,
                      'busy percent of lcore 2')
    assert 50 < busy['value'] <= 100, busy


# A restart into a hung process; link_changes across a main-lcore stall ---------------------

def listening(path):
    """Whether a process listens on the Unix socket at `path` (/proc/net/unix: flag
    __SO_ACCEPTCON, 0x10000, of a listening socket), not only bound it."""
    with open('/proc/net/unix') as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == path and int(fields[3], 16) & 0x10000:
                return True
    return False


def restart_stopped(app, timeout=30):
    """Start `app` again (same command line, same socket) and SIGSTOP it the moment its
    telemetry socket listens: a process that hangs right after its EAL made the socket (it
    never greets). DpdkApp.stop() ends it later, stopped or not."""
    app.proc = subprocess.Popen(app.argv, stdin=subprocess.DEVNULL, stdout=app.log_file,
                                stderr=subprocess.STDOUT, env=app.env, start_new_session=True)
    wait_until(lambda: app._check_alive() and listening(app.socket), timeout,
               f'{app.socket} listening', interval=0.001)
    os.kill(app.pid, signal.SIGSTOP)


def test_restart_into_hung_process(alone, build_dir, source_dir, fwd_bin):
    """dpdktel-fwd restarts into a process that stops right after its socket appears (collectd
    is stopped meanwhile, so that no poll reaches the new process before it hangs): the
    plugin says "restarted (pid A → B)", then "not responding (pid B alive, ...)" (SO_PEERCRED
    names B: it never greets), never "is gone"; B answers again once it runs. Before: the
    unanswered polls were judged by A, which had exited: "is gone (stale socket)" while B
    listened there."""
    app = dpdk.fwd(fwd_bin, app_args=['--idle-sleep-us', '100'])
    with app, Collectd(build_dir, source_dir, events_config(app.socket),
                       ours=('dpdktel_events',)) as cd:
        wait_until(lambda: cd.getval('dpdktel_events-tap/up') == {'value': 1.0}, 10, 'up 1')
        old = app.pid
        os.kill(cd.pid, signal.SIGSTOP)
        try:
            app.stop()
            restart_stopped(app)
        finally:
            os.kill(cd.pid, signal.SIGCONT)
        n = wait_note(cd, f'DPDK application tap restarted (pid {old} → {app.pid})')
        assert n['severity'] == 'WARNING'
        n = wait_note(cd, 'DPDK application tap is not responding')
        assert n['severity'] == 'FAILURE'
        assert f'(pid {app.pid} alive, no reply for ' in n['message'], n['message']
        msgs = [m['message'] for m in notes(cd)]
        assert msgs.index(next(m for m in msgs if 'restarted' in m)) < \
            msgs.index(next(m for m in msgs if 'not responding' in m)), msgs
        os.kill(app.pid, signal.SIGCONT)
        wait_note(cd, 'DPDK application tap answers again after')
        msgs = [m['message'] for m in notes(cd)]
        assert not any('is gone' in m or 'pid 0' in m for m in msgs), (msgs, cd.log())


def promtool_alerts(series, alertname, eval_s, rules):
    """Whether `alertname` of `rules` fires at `eval_s` on `series` ({selector: [value per
    second]}), by promtool test rules: 0 when it does not (the test's expectation of no
    alert holds), else the failure promtool reports."""
    test = {'rule_files': [rules], 'evaluation_interval': '1s',
            'tests': [{'interval': '1s',
                       'input_series': [{'series': sel, 'values': ' '.join(map(str, vals))}
                                        for sel, vals in series.items()],
                       'alert_rule_test': [{'eval_time': f'{eval_s}s', 'alertname': alertname,
                                            'exp_alerts': []}]}]}
    with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as f:
        yaml.safe_dump(test, f)
    try:
        p = subprocess.run(['promtool', 'test', 'rules', f.name], capture_output=True,
                           text=True, timeout=60)
    finally:
        os.unlink(f.name)
    return 0 if p.returncode == 0 else p.stdout + p.stderr


def per_second(rows, t0, t1):
    """The last value at each whole second from t0 to t1 of csv rows [(t, [v])]."""
    out, i, last = [], 0, rows[0][1][0]
    for s in range(int(t1 - t0) + 1):
        while i < len(rows) and rows[i][0] <= t0 + s:
            last = rows[i][1][0]
            i += 1
        out.append(int(last))
    return out


def test_link_changes_never_go_back_across_a_main_lcore_stall(alone, build_dir, source_dir,
                                                              fwd_bin):
    """dpdktel-fwd counts 2 link changes of port 1; its main lcore then stalls (--fault
    main-stall) and the link goes down and up meanwhile: the plugin reads those from
    /ethdev/link_status and counts them (+4), the forwarder's counter misses them (+2 when it
    is back). link_changes never goes back (+4 stays), and DpdkLinkFlapping (increase over
    10 min >= 5), evaluated by promtool on the series collectd stored, does not fire for 4
    changes. Before: 2 → 3 → 4 → 2, a counter reset to Prometheus, and the alert fired (2 +
    2 + 2 = 6). FlapThreshold 1000: the plugin's own flap detector is not what is tested."""
    # The stall 20 s after the start: the two changes before it must be counted by the
    # forwarder first, and on a loaded machine collectd's start and those changes took over
    # 10 s (the stall began before the forwarder counted them).
    app, ifaces = fwd_taps(fwd_bin, 'k', ['--fault', 'main-stall:20000:5000'])
    ident = 'dpdktel_events-tap.port1/link_changes'
    rules = os.path.join(source_dir, 'grafana', 'prometheus', 'dpdktel.rules.yml')
    with app, Collectd(build_dir, source_dir, events_config(app.socket, '  FlapThreshold 1000\n'),
                       ours=('dpdktel_events',)) as cd:
        start, (c0,) = cd.wait_value(ident, what='link_changes of port 1')
        for state, word in (('down', 'Link down on tap port 1'), ('up', 'Link up on tap port 1')):
            ip_link(ifaces[1], state)
            wait_note(cd, word)
        cd.wait_value(ident, lambda row: row[1][0] == c0 + 2, what='the forwarder counted 2')
        wait_note(cd, 'main lcore 0 of tap stalled', timeout=30)
        for state, word in (('down', 'Link down on tap port 1'), ('up', 'Link up on tap port 1')):
            ip_link(ifaces[1], state)
            wait_until(lambda: sum(word in n['message'] for n in notes(cd)) == 2, 5,
                       f'the second "{word}"')
        assert not [n for n in notes(cd) if 'checks the links again' in n['message']], \
            'the stall ended before the second down and up: this test saw nothing'
        wait_note(cd, 'main lcore 0 of tap checks the links again', timeout=15)
        end = time.time()
        cd.wait_value(ident, lambda row: row[0] > end + 2, what='values after the stall')
        rows = cd.csv(ident)
    values = [v[0] for _, v in rows]
    assert values == sorted(values), f'link_changes went back: {values}'
    assert values[-1] == c0 + 4, values
    series = per_second(rows, start, rows[-1][0])
    sel = ('collectd_dpdktel_events_link_changes_total{job="dpdktel",instance="h:9103",'
           'dpdk_instance="tap",port="1"}')
    flapping = sel.replace('link_changes_total', 'link_flapping')
    got = promtool_alerts({sel: series, flapping: [0] * len(series)}, 'DpdkLinkFlapping',
                          len(series) - 1, rules)
    assert got == 0, f'DpdkLinkFlapping fired on {series}:\n{got}'
