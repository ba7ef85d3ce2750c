"""Both plugins on one real dpdk-testpmd at 32 ports, with fast telemetry and with telemetry as
slow as a real driver's (issue 24).

The slow application is testpmd with tests/tools/dtel_slow_telemetry.so preloaded:
/ethdev/xstats answered in 15 ms and /ethdev/link_status in 2 ms, spent busy on its telemetry
thread (i40e/ice polling their firmware). Both plugins run at their defaults in a real
collectd (helpers/appload.py: port 0 is a net_tap whose link the test takes down and up;
FlapThreshold 1000 so that each change is announced). The measured window begins once the
plugins' own app_load is within MaxAppLoad (they stretch their intervals from their third round; at
most 60 s). Over the run (false notifications and failures: from collectd's start), each
variant must show:

  - no "not responding", "answers again", "gone", "back" or "restarted" notification: the
    application answers everything, however slowly;
  - no failed request in either plugin;
  - every link down reported, the p95 within the documented bound: the link poll interval in
    force + Timeout (docs/dpdktel_events.md "Detection time"; the interval is the events
    plugin's poll_interval/link at its largest over the run, PollInterval 0.02 where it
    reports none);
  - the application's telemetry threads' CPU within MaxAppLoad (default 1 % of one core)
    + 20 %, plus, for the slow application, the cost of one stats read and one link poll
    spread over the window (the budget is an average over intervals of ~10 to ~100 s:
    shorter windows hold one of each or none);
  - and then a real hang (SIGSTOP) still reported "not responding", not before
    NotRespondingPolls polls can have gone unanswered, never "gone", and "answers again"
    after SIGCONT.

testpmd of DPDK 22.11 in the main run, 25.11 in the version matrix (dpdk_release); other
releases are skipped (the request path does not depend on the release, and each variant
costs a minute). Each variant measures DTEL_APP_LOAD_SECONDS seconds (default 45; 300 for
the issue's 5-minute run). tests/bench/app_load prints the same figures as tables.
"""
import os
import time

import pytest

from helpers import appload, dpdk, slowtel, telemetry
from helpers.appload import pct

RELEASES = ('22.11', '25.11')
NPORTS = 32
SECONDS = float(os.environ.get('DTEL_APP_LOAD_SECONDS', '45'))


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


def link_interval(r):
    """The link poll interval in force over the run (s): the events plugin's
    poll_interval/link at its largest, or the default PollInterval where it reports none."""
    seen = r['values'].get('dpdktel_events/poll_interval-link')
    return max(seen) if seen else appload.POLL_INTERVAL


@pytest.mark.parametrize('speed', ['fast', 'slow'])
def test_both_plugins_on_one_application(release, speed, build_dir, source_dir):
    slow = slowtel.SLOW if speed == 'slow' else None
    with appload.Run(build_dir, source_dir, release, NPORTS, slow=slow) as run:
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
    interval = link_interval(r)
    bound = interval + appload.TIMEOUT
    p95 = pct(r['downs'], 95)
    if not r['downs'] or r['missed']:
        problems.append(f'{r["missed"]} link changes not reported within their wait, '
                        f'{len(r["downs"])} link downs reported')
    elif p95 > bound:
        problems.append(f'link down p95 {p95 * 1e3:.0f} ms over {len(r["downs"])} downs, above '
                        f'{interval * 1e3:.0f} ms (the link poll interval in force) + Timeout '
                        f'{appload.TIMEOUT * 1e3:.0f} ms: '
                        f'{sorted(round(x * 1e3) for x in r["downs"])} ms')
    # MaxAppLoad is an average over the plugins' intervals, and a slow application's are long:
    # its stats read (32 x 15 ms) comes every ~100 s, its link poll (32 x 2 ms) every ~10 s
    # or more. A window shorter than that holds one of each or none: one of each is allowed
    # on top, spread over the window (1.2 % over 45 s, 0.18 % over the 5 minutes;
    # nothing for fast telemetry, whose every batch is well under a millisecond).
    grain = NPORTS * (0.015 + 0.002) if slow else 0.0
    budget = appload.MAX_APP_LOAD * 1.2 + grain / r['seconds'] * 100
    if r['app_cpu'] > budget:
        problems.append(f'the application\'s telemetry threads used {r["app_cpu"]:.2f} % of one '
                        f'core over {r["seconds"]:.0f} s ({r["requests_per_s"]:.0f} requests/s), '
                        f'above MaxAppLoad {appload.MAX_APP_LOAD:g} % + 20 % (+ one read and '
                        f'one link poll over the window: {budget:.2f} %)')
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
    assert not problems, (f'{appload.summary(r)}\n- ' + '\n- '.join(problems) +
                          '\ncollectd\'s warnings:\n' + '\n'.join(r['warnings'][:20]) +
                          f'\ncollectd\'s log (end):\n{log[-2000:]}')
