"""Both plugins on one real dpdk-testpmd at 32 ports, with fast telemetry and with telemetry as
slow as a real driver's (issues 24 and 31).

The slow application is testpmd with tests/tools/dtel_slow_telemetry.so preloaded:
/ethdev/xstats answered in 15 ms and /ethdev/link_status in 2 ms, spent busy on its telemetry
thread (i40e/ice polling their firmware). Both plugins run at their defaults in a real
collectd (helpers/appload.py: port 0 is a net_tap whose link the test takes down and up;
FlapThreshold 1000 so that each change is announced). The measured window begins once the
plugins' own app_load is within their budgets (PollLoad + ReadLoad; at most 60 s), and it
begins and ends right after a stats read, so that it holds whole read cycles. Over the
run (false notifications and failures: from collectd's start), each variant must show:

  - no "not responding", "answers again", "gone", "back" or "restarted" notification: the
    application answers everything, however slowly;
  - no failed request in either plugin;
  - every link down reported, the p95 within the DOCUMENTED figure (docs/dpdktel_events.md,
    "Detection time"), not within what the plugin says of itself: 150 ms for fast telemetry
    (32 ports whose link answers in microseconds: at most FAST_COST of the application's CPU
    a request, else the formula, as on a VM whose wake-ups cost more); for the slow one the
    formula, every up
    port's link request cost over what PollLoad leaves after the liveness request (at least
    three quarters), plus Timeout: 32 x 2 ms at 1 %, 6.4 s to 8.5 s; the costs are those of
    one /ethdev/link_status and one /info request to the application's telemetry thread
    (the driver's 2 ms and the wake-up around it), measured by the test before collectd
    starts, or the link's as the socket sees it after the window where that is more (a
    loaded host);
  - the application's telemetry threads' CPU within PollLoad + ReadLoad (2 % of one core at
    the defaults), with 25 % for the estimate's and the measurement's noise: the link polls
    are spread over their period and the reads' xstats over several reads, so no burst of a
    whole sweep needs a window long enough to average it out;
  - for the slow one, the WARNING that up ports cannot be polled within a second, naming all
    32 of them;
  - and then a real hang (SIGSTOP) still reported "not responding", not before
    NotRespondingPolls polls can have gone unanswered, never "gone", and "answers again"
    after SIGCONT.

testpmd of DPDK 22.11 in the main run, 25.11 in the version matrix (dpdk_release); other
releases are skipped (the request path does not depend on the release, and each variant
costs a minute). Each variant measures DTEL_APP_LOAD_SECONDS seconds (default 30; 300 for
the issue's 5-minute run). tests/bench/app_load prints the same figures as tables, for more
driver profiles.
"""
import os
import time

import pytest

from helpers import appload, dpdk, slowtel, telemetry
from helpers.appload import pct

RELEASES = ('22.11', '25.11')
NPORTS = 32
SECONDS = float(os.environ.get('DTEL_APP_LOAD_SECONDS', '30'))


@pytest.fixture
def release(dpdk_release):
    if dpdk_release.name not in RELEASES:
        pytest.skip(f'DPDK {dpdk_release.version}: the application load is checked on '
                    f'{" and ".join(RELEASES)} only')
    return dpdk_release


def timed(client, cmd):
    t = time.monotonic()
    value = client.query(cmd)
    return value, time.monotonic() - t


def test_shim_delays_the_chosen_replies(release, build_dir):
    """testpmd with the shim answers /ethdev/xstats no sooner than 15 ms and
    /ethdev/link_status no sooner than 2 ms, measured by a client; the replies are intact
    and other commands are answered as usual."""
    env = slowtel.shim_env(build_dir, '/ethdev/xstats=15ms,/ethdev/link_status=2ms')
    with dpdk.testpmd(nports=2, release=release, env=env) as app, \
            telemetry.Client(app.socket) as c:
        assert ('dtel_slow_telemetry: pid ' in app.log() and
                '/ethdev/xstats 15.000 ms, /ethdev/link_status 2.000 ms (busy-wait)'
                in app.log()), app.log()
        for port in (0, 1, 0):
            xstats, took = timed(c, f'/ethdev/xstats,{port}')
            assert took >= 0.015, f'/ethdev/xstats,{port} answered after {took * 1e3:.2f} ms'
            assert 'rx_good_packets' in xstats
            link, took = timed(c, f'/ethdev/link_status,{port}')
            assert took >= 0.002, f'/ethdev/link_status,{port} after {took * 1e3:.2f} ms'
            assert link['status'] == 'UP'
        assert c.query('/ethdev/list') == [0, 1]
        assert c.query('/ethdev/stats,1')['opackets'] >= 0
        # A null reply of a delayed command is delayed too (perform_command() writes it).
        _, took = timed(c, '/ethdev/xstats,99')
        assert took >= 0.015


# The documented figures (docs/dpdktel_events.md, "Detection time"; docs/performance.md).
FAST_LINK_P95 = 0.150  # s, 32 ports whose link answers in microseconds
NOISE = 1.15  # the measurements' own noise (CPU time read from /proc around a busy host)
# The budgets are kept by the plugins' estimate of each turn's cost over 10 s windows; the
# application's CPU as /proc shows it over the window came within a quarter of it here.
CPU_NOISE = 1.25


# What "answers in microseconds" means for FAST_LINK_P95 (ns of the application's CPU a link
# request): on a VM where waking its thread costs more (seen: 250 us a request here, where the
# CI machine took 126 us), even the fast ports are dear, and the formula is the bound.
FAST_COST = 50000


def link_bound(slow, r):
    """The documented link-down bound (s) for a run: fast (where a link request costs at most
    FAST_COST; else, and for the slow one, the formula of the dear ports: the table's first
    and third cases of docs/dpdktel_events.md, "Detection time"). The formula: every up
    port's link request cost, and that of the list each of its polls adds, over what PollLoad
    leaves the link polls once the liveness request has its share, at most a quarter
    (docs/dpdktel_events.md, "The load on the application"), plus Timeout. The costs are
    what the application's telemetry thread spent on such a request, measured by the test
    before collectd started; the link's, or what the request took from the socket after the
    window where that is more: on a loaded host (the check's other phases) the thread also
    waits for a core, and the plugin, which cannot read the application's CPU time, plans
    with what it sees (seen: 2.03 ms of CPU, a down after 12.7 s against 10.2 s at load 4.7
    on 2 cores)."""
    if not slow and r['link_cost'] <= FAST_COST:
        return FAST_LINK_P95
    budget = appload.POLL_LOAD / 100
    share = budget - min(r['liveness_cost'] / 1e9 / appload.POLL_INTERVAL, budget / 4)
    # Each poll of dear ports asks the list too, and its turn wakes the application's thread
    # (the list's reply comes before the links are sent): 12 us on hardware, 0.2 ms on a VM
    # (seen: 2.25 ms links polled every 13.4 s, not within 11.2 s, at collectd Interval 10).
    # The plugin plans it once a group of ports (5 ms of their requests); the bound counts it
    # for every port, as the documented formula's upper end.
    cost = max(r['link_cost'], r['link_wall']) + r['list_cost']
    return max(FAST_LINK_P95, NPORTS * cost / 1e9 * NOISE / share + appload.TIMEOUT)


@pytest.mark.parametrize('speed', ['fast', 'slow'])
def test_both_plugins_on_one_application(release, speed, build_dir, source_dir):
    slow = slowtel.SLOW if speed == 'slow' else None
    # The link from the telemetry alone (cases a and c of docs/alerts.md "Timing"): port 0's
    # net_tap has a kernel netdev, which would be followed (case b: test_netdev_link.py), and
    # each of this test's changes, one a second, would cost a check beyond PollLoad.
    with appload.Run(build_dir, source_dir, release, NPORTS, slow=slow,
                     events_extra='  LinkNetdev false\n') as run:
        r = run.measure(SECONDS)
        print(appload.summary(r))
        nr_after, during_stop, aa_after = run.stop_check(timeout=60)
        log = run.cd.log()
    problems = []  # every check, so that one failure does not hide the others
    false = [f'{n["time"] - r["window"][0]:+.3f} s {n["message"]}' for n in r['false']]
    if false:
        problems.append(f'{len(false)} false notifications of an application that answers '
                        'everything (times from the window\'s start):\n  ' +
                        '\n  '.join(false[:20]))
    if r['failed'] != {'dpdktel_events': 0, 'dpdktel_stats': 0}:
        problems.append(f'failed requests: {r["failed"]}')
    bound = link_bound(slow, r)
    # The p95 of a dozen downs is their worst: one may be a scheduling hiccup of the busy
    # 2-core host, if within a second (a bug of the schedule costs seconds).
    downs = sorted(r['downs'])
    kept = downs[:-1] if len(downs) >= 10 and downs[-1] <= max(1.0, bound) else downs
    p95 = pct(kept, 95) if kept else 0
    if not r['downs'] or r['missed']:
        problems.append(f'{r["missed"]} link changes not reported within their wait, '
                        f'{len(r["downs"])} link downs reported')
    elif p95 > bound:
        problems.append(f'link down p95 {p95 * 1e3:.0f} ms over {len(r["downs"])} downs, above '
                        f'the documented {bound * 1e3:.0f} ms: '
                        f'{[round(x * 1e3) for x in downs]} ms')
    budget = appload.BUDGET * CPU_NOISE
    if r['app_cpu'] > budget:
        problems.append(f'the application\'s telemetry threads used {r["app_cpu"]:.2f} % of one '
                        f'core over {r["seconds"]:.0f} s ({r["requests_per_s"]:.0f} requests/s), '
                        f'above PollLoad + ReadLoad {appload.BUDGET:g} % (+ '
                        f'{(CPU_NOISE - 1) * 100:.0f} %: {budget:.2f} %)')
    # A real hang is still one: "not responding" once NotRespondingPolls polls could go
    # unanswered within Timeout (the first may have been sent just before the SIGSTOP).
    least = (appload.NOT_RESPONDING_POLLS - 1) * appload.TIMEOUT
    if nr_after is None:
        problems.append('a SIGSTOP of the application was not reported as not responding')
    elif nr_after < least:
        problems.append(f'"not responding" {nr_after:.3f} s after the SIGSTOP, before '
                        f'{appload.NOT_RESPONDING_POLLS} polls could go unanswered')
    wrong = [n['message'] for n in during_stop
             if appload.kind_of(n['message']) in ('gone', 'back', 'restarted')]
    if wrong:
        problems.append(f'the stopped application was also reported: {wrong}')
    if aa_after is None:
        problems.append('no "answers again" after the SIGCONT')
    # Every port's link is too dear to poll within a second: the one WARNING names them all
    # (it named only port 0, the first to have had four replies).
    if slow and f'the link of {NPORTS} ports (0,1,2,' not in log:
        problems.append(f'no WARNING naming the {NPORTS} ports whose link is too dear to poll '
                        'within a second')
    assert not problems, (f'{appload.summary(r)}\n- ' + '\n- '.join(problems) +
                          '\ncollectd\'s warnings:\n' + '\n'.join(r['warnings'][:20]) +
                          f'\ncollectd\'s log (end):\n{log[-2000:]}')
