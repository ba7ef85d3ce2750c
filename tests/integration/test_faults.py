"""Fault tests: both plugins in a real collectd while their DPDK applications misbehave.

A forwarder killed and restarted 20 times, fake telemetry servers that misbehave in each
way of helpers/fakedpdk.MODES next to a healthy forwarder, the 10-client cap, and a socket,
runtime dir or permission that goes away under a running collectd. The cap and the socket
removed under a live connection are the telemetry library's: those also run against testpmd
of every DPDK release of the matrix (dpdk_release: test ids end in [25.11]). Each case has its own
processes and dirs, waits on conditions with deadlines, and ends what it started by PID.
Results are recorded in docs/reliability.md.
"""
import os
import shutil
import socket
import tempfile
import time

import pytest

from helpers import dpdk, sanitizers
from helpers.collectd import Collectd
from helpers.fakedpdk import FakeDpdk
from helpers.wait import wait_until

BOTH = ('dpdktel_stats', 'dpdktel_events')
INTERVAL = 0.5
# Per-request timeouts the tests configure: a healthy instance's reads may be late by at
# most this much while a sick one next to it hangs.
STATS_TIMEOUT = 0.2
EVENTS_TIMEOUT = 0.2
# Instance-level values: the only identifiers a sick instance may have.
HEALTH = {'up', 'telemetry_requests-sent', 'telemetry_requests-failed',
          'telemetry_requests-truncated', 'telemetry_requests-invalid',
          'telemetry_requests-discarded', 'telemetry_requests-queued',
          'telemetry_requests-deferred', 'reconnects', 'restarts', 'duration-read', 'uptime',
          'not_responding', 'app_load', 'app_load-budget', 'app_load-polls',
          'app_load-reads', 'app_load-polls_budget', 'app_load-reads_budget',
          'poll_interval-read', 'poll_interval-xstats', 'poll_interval-link',
          'poll_interval-lcore'}


def instances(paths):
    return ''.join(f'  <Instance "{name}">\n    SocketPath "{path}"\n  </Instance>\n'
                   for name, path in paths.items())


# No budget (MaxAppLoad 0): these tests count the reads and polls of a healthy instance next
# to a sick one, at an Interval of 0.5 s and a PollInterval of 0.02 s; a forwarder built with
# ASan spends more than 1 % of a core answering that, and the budget would rightly stretch
# them (what the budget does is proven against real applications in test_app_load).
def both_config(paths, stats_extra='', events_extra=''):
    return (f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  Timeout {STATS_TIMEOUT}\n'
            f'  MaxAppLoad 0\n{stats_extra}{instances(paths)}</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n'
            f'  Timeout {EVENTS_TIMEOUT}\n  MaxAppLoad 0\n{events_extra}{instances(paths)}'
            f'</Plugin>\n')


def notes(cd, plugin, instance=None):
    return [n for n in cd.notifications() if n.get('plugin') == plugin and
            (instance is None or n.get('plugin_instance') == instance)]


def messages(cd, plugin, instance=None):
    return [n['message'] for n in notes(cd, plugin, instance)]


def ours_logged(cd, name):
    """Warning and error lines of our plugins about instance `name`."""
    return [l for l in cd.log().splitlines()
            if ('[warning]' in l or '[error]' in l) and 'dpdktel_' in l and f"'{name}'" in l]


def identifiers(cd, plugin, name):
    """type[-type_instance] of every value of instance `name` (and its ports and lcores)."""
    out = set()
    for ident in cd.listval():
        _, pl, ty = ident.split('/')
        if pl == f'{plugin}-{name}':
            out.add(ty)
        elif pl.startswith(f'{plugin}-{name}.'):
            out.add(pl.split('.', 1)[1] + '/' + ty)
    return out


def deltas(rows):
    return [round(b[0] - a[0], 3) for a, b in zip(rows, rows[1:])]


def check_cadence(rows, what, slack):
    """Consecutive reads of a healthy instance are one interval apart, +- slack (from the
    second read: the first one after start-up can come at any phase of the interval, and
    dpdktel_events adds a value at the instance's first poll)."""
    d = deltas(rows[1:])
    assert len(d) >= 3, (what, rows)
    assert all(INTERVAL - slack <= x <= INTERVAL + slack for x in d), (what, d)


@pytest.fixture(scope='module')
def healthy(fwd_bin):
    """A real forwarder that every case polls next to its sick instance."""
    app = dpdk.fwd(fwd_bin, app_args=['--idle-sleep-us', '100'])
    with app:
        yield app


@pytest.fixture
def tmpdir_ro():
    d = tempfile.mkdtemp(prefix='dtfault-')
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ---- kill -9 and restart, 20 times ------------------------------------------------------

RESTARTS = 20
WARMUP = 3


def test_forwarder_killed_and_restarted_20_times(build_dir, source_dir, fwd_bin):
    prefix = dpdk.unique_prefix('k')
    app = dpdk.fwd(fwd_bin, prefix=prefix, app_args=['--idle-sleep-us', '100'])
    with app, Collectd(build_dir, source_dir, both_config({'f': app.socket}),
                       interval=INTERVAL, ours=BOTH) as cd:
        cd.wait_value('dpdktel_stats-f.lcore1/lcore_packets', what='first lcore values')
        cd.wait_value('dpdktel_events-f.lcore1/lcore_state', what='first lcore state')
        rss = []
        for i in range(RESTARTS):
            old = app.pid
            app.kill9()
            wait_until(lambda: len([m for m in messages(cd, 'dpdktel_events')
                                    if m == 'DPDK application f is gone']) == i + 1, 10,
                       f'gone notification {i + 1}')
            app.start()
            ready = time.time()
            # Every value resumes at the first read after the forwarder is back: no read
            # after that shows it missing. dpdktel_events sends the values of a port, lcore
            # or instance at most once per half interval, from a poll or from a read
            # (docs/dpdktel_events.md, "One identifier, one time order"): a read that comes
            # less than that after the first poll's values skips them.
            for ident, ok in (('dpdktel_stats-f/up', lambda r: r[1] == [1]),
                              ('dpdktel_stats-f.port0/if_packets', lambda r: True),
                              ('dpdktel_stats-f.lcore1/lcore_packets', lambda r: True),
                              ('dpdktel_events-f/up', lambda r: r[1] == [1]),
                              ('dpdktel_events-f.port0/link_status', lambda r: r[1] == [1]),
                              ('dpdktel_events-f.lcore1/lcore_state', lambda r: True)):
                row = cd.wait_value(ident, lambda r: r[0] > ready, timeout=10,
                                    what=f'{ident} after restart {i + 1}')
                assert ok(row), (ident, row, i)
                late = INTERVAL / 2 if ident.startswith('dpdktel_events') else 0
                assert row[0] <= ready + INTERVAL + late + 0.1, (
                    f'{ident} resumed {row[0] - ready:.3f} s after restart {i + 1}')
            wait_until(lambda: f'DPDK application f restarted (pid {old} → {app.pid})' in
                       messages(cd, 'dpdktel_stats'), 5, f'stats restart warning {i + 1}')
            wait_until(lambda: f'DPDK application f restarted (pid {old} → {app.pid})' in
                       messages(cd, 'dpdktel_events'), 5, f'events restart warning {i + 1}')
            assert cd.running()
            rss.append(cd.rss_kib())
        # Exactly one gone/back pair and one restart warning per restart, nothing else.
        ev = messages(cd, 'dpdktel_events')
        assert sum(m == 'DPDK application f is gone' for m in ev) == RESTARTS, ev
        assert sum(m.startswith('DPDK application f is back after ') for m in ev) == RESTARTS, ev
        assert sum(m.startswith('DPDK application f restarted (pid ') for m in ev) == RESTARTS
        others = [m for m in ev if not m.startswith(('DPDK application f is gone',
                                                      'DPDK application f is back after ',
                                                      'DPDK application f restarted (pid '))]
        assert not others, others
        st = messages(cd, 'dpdktel_stats')
        assert len(st) == RESTARTS and all(m.startswith('DPDK application f restarted') for m in st)
        growth = rss[-1] - rss[WARMUP - 1]
        print(f'collectd RSS after restart {WARMUP}: {rss[WARMUP - 1]} KiB, after '
              f'{RESTARTS}: {rss[-1]} KiB, growth {growth} KiB')
        # Under ASan the allocator's quarantine holds freed memory by design: RSS says
        # nothing there (the valgrind test looks for leaks instead).
        assert growth < 1024 or sanitizers.enabled(), rss
        assert cd.running()


# ---- misbehaving telemetry servers next to a healthy forwarder ---------------------------

# What each plugin must report for a sick instance: up, and the health counter that grows.
ANSWERS = {'oversized', 'truncated', 'negative', 'non_numeric', 'deep'}  # replies came
SICK = {
    'no_greeting': 'failed', 'mute': 'failed', 'garbage': 'failed',
    'garbage_greeting': 'failed', 'close_after_greeting': 'failed',
    'oversized': 'truncated', 'truncated': 'invalid', 'negative': 'invalid',
    'non_numeric': 'invalid', 'deep': 'invalid',
}


@pytest.mark.parametrize('mode', sorted(SICK))
def test_misbehaving_server(build_dir, source_dir, healthy, tmpdir_ro, mode):
    path = os.path.join(tmpdir_ro, 'dpdk_telemetry.v2')
    with FakeDpdk(path, mode) as fake, \
            Collectd(build_dir, source_dir, both_config({'good': healthy.socket, 'bad': path}),
                     interval=INTERVAL, ours=BOTH) as cd:
        # Eight reads of the healthy instance, the sick one polled all along.
        cd.wait_value('dpdktel_stats-good/up', lambda r: len(cd.csv(
            'dpdktel_stats-good/up')) >= 8, timeout=20, what='8 reads of the healthy instance')
        assert fake.accepted > 0
        want_up = 1.0 if mode in ANSWERS else 0.0
        for plugin in BOTH:
            # Its own health values say what happened ...
            up = cd.wait_value(f'{plugin}-bad/up', lambda r: r[1] == [want_up], timeout=5,
                               what=f'{plugin} up {want_up} for {mode}')
            assert up
            counter = cd.last(f'{plugin}-bad/telemetry_requests-{SICK[mode]}')
            assert counter and counter[1][0] > 0, (plugin, mode, counter)
            # ... nothing else of it is dispatched: no port, lcore or memory value ...
            # (instance_info comes from the greeting, which these servers send right.)
            got = {i for i in identifiers(cd, plugin, 'bad') if not i.startswith('instance_info-')}
            assert got <= HEALTH, (plugin, mode, got - HEALTH)
            # ... and it is logged once, not once per read.
            lines = [l for l in ours_logged(cd, 'bad') if f'{plugin} plugin' in l]
            assert len(lines) == 1, (plugin, mode, lines)
        # The healthy instance kept its cadence and all its values.
        for plugin, timeout in (('dpdktel_stats', STATS_TIMEOUT),
                                ('dpdktel_events', EVENTS_TIMEOUT)):
            up = cd.csv(f'{plugin}-good/up')
            assert all(r[1] == [1] for r in up), (plugin, up)
            check_cadence(up, f'{plugin} good', timeout)
        assert len(cd.csv('dpdktel_stats-good.port0/if_packets')) >= 7
        assert len(cd.csv('dpdktel_stats-good.lcore1/lcore_packets')) >= 6
        # Its poll thread was not held up by the sick one's timeouts: two requests a poll
        # at 50 polls/s; waiting for a 0.2 s timeout per poll would give at most 10.
        sent = cd.csv('dpdktel_events-good/telemetry_requests-sent')
        rate = (sent[-1][1][0] - sent[1][1][0]) / (sent[-1][0] - sent[1][0])
        assert rate > 40, rate
        assert not ours_logged(cd, 'good')
        assert cd.running()


# ---- the 10-client cap -------------------------------------------------------------------

CAP_LINE = 'already serves the 10 telemetry clients DPDK allows'


def take_slot(path, timeout=5):
    """A connection to the telemetry socket at `path` that the application greeted, so holds
    one of its 10 client slots. A client that closed just before (the readiness probe of the
    helpers that start the application) holds its slot until its thread in the application
    sees the close: DPDK's lib/telemetry/telemetry.c client_handler() gives the slot back only
    when its read loop ends, and socket_listener() closes a connection at once, without a
    greeting, while 10 are counted. So a refused connection is tried again, to a deadline."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(2)
        s.connect(path)
        if s.recv(4096):
            return s
        s.close()
        assert time.monotonic() < deadline, f'no greeting within {timeout} s: fewer than 10 slots'
        time.sleep(0.01)


def client_cap(build_dir, source_dir, app, lcores=True):
    """Ten other clients hold every slot of app's telemetry: both plugins say why, publish
    up 0 and nothing else, and collect again by themselves once a slot frees."""
    others = []
    try:
        for _ in range(10):
            others.append(take_slot(app.socket))
        with Collectd(build_dir, source_dir, both_config({'f': app.socket}),
                      interval=INTERVAL, ours=BOTH) as cd:
            for plugin in BOTH:
                wait_until(lambda: [l for l in ours_logged(cd, 'f')
                                    if f'{plugin} plugin' in l and CAP_LINE in l], 10,
                           f'{plugin}: the 10-client message')
                cd.wait_value(f'{plugin}-f/up', lambda r: r[1] == [0], what=f'{plugin} up 0')
            cd.wait_value('dpdktel_stats-f/up', lambda r: len(cd.csv(
                'dpdktel_stats-f/up')) >= 4, what='4 reads while the cap is full')
            assert not [i for i in cd.listval() if '-f.' in i], cd.listval()
            # A slot frees: collection comes back by itself.
            others.pop().close()
            freed = time.time()
            for plugin in BOTH:
                cd.wait_value(f'{plugin}-f/up', lambda r: r[1] == [1] and r[0] > freed,
                              timeout=10, what=f'{plugin} up 1 after a slot freed')
            cd.wait_value('dpdktel_stats-f.port0/if_packets', lambda r: r[0] > freed)
            if lcores:
                cd.wait_value('dpdktel_events-f.lcore1/lcore_state', lambda r: r[0] > freed)
            cd.wait_value('dpdktel_events-f.port0/link_status',
                          lambda r: r[1] == [1] and r[0] > freed)
            # One line when it could not connect, one when it could again, per plugin.
            for plugin in BOTH:
                lines = [l for l in cd.log().splitlines() if f'{plugin} plugin' in l and
                         "'f'" in l and ('[warning]' in l or 'answers again' in l)]
                assert len(lines) == 2 and CAP_LINE in lines[0], lines
                assert 'answers again' in lines[1], lines
            assert cd.running()
    finally:
        for s in others:
            s.close()


def test_client_cap_filled_by_others(build_dir, source_dir, fwd_bin):
    with dpdk.fwd(fwd_bin, app_args=['--idle-sleep-us', '100']) as app:
        client_cap(build_dir, source_dir, app)


@pytest.fixture(scope='module')
def release_testpmd(dpdk_release):
    """testpmd of each DPDK release, once per release: the cap and the socket are the
    telemetry library's, which each release builds into the application."""
    with dpdk.testpmd(nports=2, release=dpdk_release) as app:
        yield app


def test_client_cap_testpmd(build_dir, source_dir, release_testpmd):
    client_cap(build_dir, source_dir, release_testpmd, lcores=False)


# ---- the socket, its dir, under a running collectd ---------------------------------------

def socket_removed(build_dir, source_dir, app):
    """The connection outlives the socket file: reading goes on."""
    with Collectd(build_dir, source_dir, both_config({'f': app.socket}),
                  interval=INTERVAL, ours=BOTH) as cd:
        wait_up(cd, 'f')
        os.unlink(app.socket)
        gone = time.time()
        for plugin in BOTH:
            cd.wait_value(f'{plugin}-f/up', lambda r: r[0] > gone + 3 * INTERVAL, timeout=10,
                          what=f'{plugin}: three reads without the socket file')
            assert all(r[1] == [1] for r in cd.csv(f'{plugin}-f/up') if r[0] > gone)
        assert not ours_logged(cd, 'f')
        assert not messages(cd, 'dpdktel_events')


def test_socket_removed_under_a_live_connection(build_dir, source_dir, fwd_bin):
    with dpdk.fwd(fwd_bin, app_args=['--idle-sleep-us', '100']) as app:
        socket_removed(build_dir, source_dir, app)


def test_socket_removed_testpmd(build_dir, source_dir, dpdk_release):
    # Its own testpmd: the module's one keeps its socket.
    with dpdk.testpmd(nports=2, release=dpdk_release) as app:
        socket_removed(build_dir, source_dir, app)


def wait_up(cd, name):
    """Both plugins read `name` (the events poll thread and the stats read callback start
    independently: one being up says nothing of the other)."""
    for plugin in BOTH:
        cd.wait_value(f'{plugin}-{name}/up', lambda r: r[1] == [1], what=f'{plugin} up 1')


def mimic_config(path, stats_extra='', events_extra=''):
    return both_config({'app': path}, stats_extra=stats_extra, events_extra=events_extra)


CLOSED = 'closed the connection: it exited or restarted'


def wait_down(cd, since, reason):
    """Both plugins log once why and publish up 0; dpdktel_events says it is gone. The line
    gives `reason`, or that the application closed the connection when a request was on
    its way when the connections dropped (the outage then began as an exit)."""
    for plugin in BOTH:
        wait_until(lambda: [l for l in ours_logged(cd, 'app')
                            if f'{plugin} plugin' in l and (reason in l or CLOSED in l)], 10,
                   f'{plugin}: "{reason}"')
        cd.wait_value(f'{plugin}-app/up', lambda r: r[1] == [0] and r[0] > since,
                      what=f'{plugin} up 0')
    wait_until(lambda: 'DPDK application app is gone' in messages(cd, 'dpdktel_events'), 5,
               'gone notification')


def wait_back(cd, since):
    for plugin in BOTH:
        cd.wait_value(f'{plugin}-app/up', lambda r: r[1] == [1] and r[0] > since, timeout=10,
                      what=f'{plugin} up 1 again')
        wait_until(lambda: [l for l in cd.log().splitlines() if f'{plugin} plugin' in l and
                            "'app'" in l and 'answers again' in l], 5, f'{plugin} answers again')
    cd.wait_value('dpdktel_stats-app.port0/if_packets', lambda r: r[0] > since,
                  what='port values again')
    wait_until(lambda: any(m.startswith('DPDK application app is back after ')
                           for m in messages(cd, 'dpdktel_events')), 5, 'back notification')


def test_socket_file_removed_and_back(build_dir, source_dir, tmpdir_ro):
    path = os.path.join(tmpdir_ro, 'dpdk_telemetry.v2')
    with FakeDpdk(path) as fake, Collectd(build_dir, source_dir, mimic_config(path),
                                           interval=INTERVAL, ours=BOTH) as cd:
        wait_up(cd, 'app')
        # The socket file goes and the application's connections drop (as when it exits).
        fake.unbind()
        fake.drop_clients()
        wait_down(cd, time.time(), 'is not running (no socket)')
        t = time.time()
        fake.bind()
        wait_back(cd, t)
        # Gone and back: one line each, per plugin.
        for plugin in BOTH:
            assert len([l for l in ours_logged(cd, 'app') if f'{plugin} plugin' in l]) == 1


def test_runtime_dir_removed_and_back(build_dir, source_dir, tmpdir_ro):
    """The whole runtime dir goes: the configured instance is down, discovery says it cannot
    read the dir; both recover when dir and socket are back."""
    runtime = os.path.join(tmpdir_ro, 'dpdk')
    prefix_dir = os.path.join(runtime, 'dtrt')
    os.makedirs(prefix_dir)
    path = os.path.join(prefix_dir, 'dpdk_telemetry.v2')
    discover = f'  Discover true\n  RuntimeDir "{runtime}"\n'
    with FakeDpdk(path) as fake, Collectd(build_dir, source_dir,
                                           mimic_config(path, discover, discover),
                                           interval=INTERVAL, ours=BOTH) as cd:
        wait_up(cd, 'app')
        fake.unbind()
        fake.drop_clients()
        shutil.rmtree(runtime)
        wait_down(cd, time.time(), 'is not running (no socket)')
        for plugin in BOTH:
            wait_until(lambda: f'{plugin} plugin: cannot read the DPDK runtime dir {runtime}'
                       in cd.log(), 5, f'{plugin} runtime dir message')
        t = time.time()
        os.makedirs(prefix_dir)
        fake.bind()
        wait_back(cd, t)
        for plugin in BOTH:
            wait_until(lambda: f'{plugin} plugin: reading {runtime} again' in cd.log(), 5,
                       f'{plugin} runtime dir back')
        # Once per plugin, however many passes found it missing.
        assert cd.log().count('cannot read the DPDK runtime dir') == 2
        # The socket was collected once, under its configured name.
        assert not [i for i in cd.listval() if '-dtrt' in i]
