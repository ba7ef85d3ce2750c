"""No page lost and none doubled when a monitoring server dies (issue 33): the highly
available set of grafana/ live on loopback. dpdktel-fwd with two net_tap ports -> collectd
with both plugins and write_prometheus -> two Prometheus servers (prometheus-ha-a.yml,
-b.yml) -> two Alertmanagers in a cluster (prometheus-alertmanager.mon-a, .mon-b, running
alertmanager.yml) -> one webhook that records every delivery and which node sent it.

The shipped files run with only addresses and timing values replaced (helpers/ha.py):
scrape and evaluation every 1 s (10 s shipped), DpdkLinkDown's `for:` 2 s (20 s),
group_wait 2 s and group_interval 3 s (pager: 10 s and 1 min), --cluster.peer-timeout 2 s
(15 s). grafana/check_ha.py passes on those very files before anything starts.

The scenarios share the processes and restart only what one kills. Each is one incident of
port 1 under a collectd host name of its own (collectd restarted with it): Alertmanager keeps
an alert group for up to 30 s after its last alert resolved, each node on its own ticker, so
a second incident of the same group could meet a group one node still has and the other not;
a new name starts a new group on both nodes at once, as a first incident does. They run
in the order of the file: 1, 2, 5, 3, 4.

"Exactly one" is counted once every node that could still send has passed the point where it
would. Both nodes flush a new group at the same moment (each made it when the same push of
alerts came in), and the second sends --cluster.peer-timeout later unless the first's
notification has reached its log by then: a second page would come within peer-timeout of
the first. So a count waits for that window, plus a second, and for each running node to
have checked its notification log again (alertmanager_nflog_queries_total grown by both
receivers, pager and mail; other groups of the node count too, hence the window as well).
"""
import os
import signal
import subprocess
import time

import pytest

from helpers import dpdk
from helpers.alertmanager import Webhook, matches
from helpers.collectd import Collectd
from helpers.ha import HAMonitoring, metric
from helpers.pipeline import collectd_config
from helpers.process import end, free_port
from helpers.wait import Fatal, wait_until

INSTANCE = 'edge1'
PAGER, MAIL = 'dpdktel-pager', 'dpdktel-mail'
RECEIVERS = (PAGER, MAIL)
GROUP_WAIT, GROUP_INTERVAL, PEER_TIMEOUT = 2, 3, 2
TIMINGS = dict(scrape_interval='1s', evaluation_interval='1s', link_down_for='2s',
               group_wait=f'{GROUP_WAIT}s', group_interval=f'{GROUP_INTERVAL}s',
               peer_timeout=f'{PEER_TIMEOUT}s')
RESULTS = []


class Rig:
    def __init__(self, build_dir, source_dir, app, ifaces, hook):
        self.build_dir, self.source_dir = build_dir, source_dir
        self.app, self.ifaces, self.hook = app, ifaces, hook
        self.wp_port = free_port()
        self.ha = HAMonitoring([f'127.0.0.1:{self.wp_port}'], hook.url, TIMINGS, 'debug')
        self.cd = None
        self.host = None

    # collectd ------------------------------------------------------------------------------

    def start_collectd(self):
        self.cd = Collectd(self.build_dir, self.source_dir,
                           collectd_config(INSTANCE, self.app.socket, self.wp_port),
                           hostname=self.host, ours=('dpdktel_stats', 'dpdktel_events'),
                           system_plugins=('write_prometheus',), http_port=self.wp_port)
        self.cd.start()

    def use_host(self, host):
        """collectd again, as `host`; until both servers see port 1 up there."""
        if self.cd:
            self.cd.cleanup()
        self.host = host
        self.start_collectd()
        self.ensure_up()
        self.wait_link(1)
        return host

    def wait_link(self, value):
        q = (f'collectd_dpdktel_events_link_status{{instance="{self.host}",'
             f'dpdk_instance="{INSTANCE}",port="1"}} == {value}')
        for p in self.ha.proms:
            if p.running():
                wait_until(lambda: p.query(q), 30, f'{q} in {p.url}')
        return time.monotonic()

    # the monitoring set --------------------------------------------------------------------

    def ensure_up(self):
        """Start again what a scenario killed; until both nodes form one cluster."""
        for p in self.ha.proms:
            if not p.running():
                p.start()
        for i, am in enumerate(self.ha.ams):
            if not am.running():
                self.ha.start_am(i)
        for p in self.ha.proms:
            p.wait_for_target()
            wait_until(lambda: len(p.api('alertmanagers')['activeAlertmanagers']) == 2, 30,
                       f'{p.url} sending to both Alertmanagers')
        self.ha.wait_cluster()

    def running_ams(self):
        return [am for am in self.ha.ams if am.running()]

    def dedup_counts(self, ams=None):
        return {am: metric(am.url, 'alertmanager_nflog_queries_total')
                for am in (ams or self.running_ams())}

    def wait_decided(self, since, t_flush, window=PEER_TIMEOUT + 1):
        """Until `window` s after a flush at t_flush, and each node of `since`
        (dedup_counts()) still running has checked its log for both receivers since: it
        has sent or decided not to."""
        for am, before in since.items():
            if am.running():
                wait_until(lambda: metric(am.url, 'alertmanager_nflog_queries_total') >=
                           before + len(RECEIVERS), 30, f'{am.url} checked its log')
        time.sleep(max(0.0, t_flush + window - time.monotonic()))  # the window itself

    # the link and what was delivered ---------------------------------------------------------

    def link(self, state):
        subprocess.run(['ip', 'link', 'set', 'dev', self.ifaces[1], state], check=True)
        return time.monotonic()

    def got(self, receiver, status, since=0.0):
        """[(t, node)] of the notifications to `receiver` holding port 1's DpdkLinkDown of
        the current host in `status`."""
        want = {'alertname': 'DpdkLinkDown', 'instance': self.host,
                'dpdk_instance': INSTANCE, 'port': '1'}
        got = [(t, self.ha.am_by_url(p['externalURL']),
                [a for a in p['alerts'] if a['status'] == status and
                 matches(a['labels'], want)]) for t, r, p in self.hook.received(receiver)
               if t >= since and r == receiver]
        # One alert, not one per server: the replica label is dropped before sending.
        for _, _, alerts in got:
            if len(alerts) > 1 or any('replica' in a['labels'] for a in alerts):
                raise Fatal(f'the alert of each server, not one alert: {alerts}')
        return [(t, am) for t, am, alerts in got if alerts]

    def wait_got(self, status, what, timeout=60):
        return wait_until(lambda: self.got(PAGER, status), timeout, what)[0]

    def deliveries(self):
        """What the webhook got for the current host, for failure messages: one line each,
        when, to which receiver, from which node, which alerts in which status."""
        return '\n'.join(
            f'{t:.3f} {r} from {self.node_name(self.ha.am_by_url(p["externalURL"]))}: ' +
            ', '.join(f'{a["labels"]["alertname"]} port {a["labels"].get("port")} '
                      f'{a["status"]}' for a in p['alerts'])
            for t, r, p in self.hook.received()
            if p['groupLabels'].get('instance') == self.host) + '\nthe nodes:\n' + \
            self.ha.trace(f'instance=\\"{self.host}\\"', 'Notify success', 'Suspect',
                          'Marking') + '\n' + self.unreachable()

    def unreachable(self):
        """When each running server saw the application unreachable (up 0: DpdkLinkDown
        is then not claimed, and resolves) in the last 5 minutes, and collectd's
        notifications about it: a count that is off because of that is not the cluster's."""
        lines = []
        for p in self.ha.proms:
            if not p.running():
                continue
            for s in p.query_range(f'collectd_dpdktel_events_up{{instance="{self.host}"}} == 0'
                                   f' or collectd_dpdktel_stats_up{{instance="{self.host}"}} == 0',
                                   time.time() - 300):
                lines.append(f'{p.url}: {s["metric"].get("__name__")} 0 at '
                             f'{[round(float(t), 1) for t, _ in s["values"]]}')
        if self.cd:
            lines += [f'collectd: {line}' for line in self.cd.log().splitlines()
                      if 'DPDK application' in line]
        return 'up 0 (the application unreachable):\n' + '\n'.join(lines or ['never'])

    def counts(self, status):
        return {r: len(self.got(r, status)) for r in RECEIVERS}

    def node_name(self, am):
        return 'mon-' + 'ab'[self.ha.ams.index(am)]


def kill(daemon):
    """SIGKILL by PID: a crash, not a shutdown (an Alertmanager told to stop leaves the
    cluster politely)."""
    end(daemon.proc, signal.SIGKILL)


def record(rig, scenario, t_down, fire, t_up, resolved):
    RESULTS.append((scenario, fire[0] - t_down, rig.counts('firing')[PAGER],
                    resolved[0] - t_up, rig.counts('resolved')[PAGER], rig.node_name(fire[1]),
                    rig.node_name(resolved[1])))


@pytest.fixture(scope='module')
def rig(request, build_dir, source_dir, fwd_bin):
    tag = os.getpid() % 10000
    ifaces = [f'dth{tag}a', f'dth{tag}b']
    app = dpdk.fwd(fwd_bin, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                   app_args=['--idle-sleep-us', '100'])
    with Webhook() as hook, app:
        r = Rig(build_dir, source_dir, app, ifaces, hook)
        try:
            with r.ha:
                yield r
        finally:
            if r.cd:
                r.cd.cleanup()
    if RESULTS:
        lines = ['scenario                            page after  pages  resolved after  '
                 'resolutions  paged by  resolved by']
        lines += [f'{s:35} {fire:8.1f} s  {n_fire:5}  {res:12.1f} s  {n_res:11}  {by:8}  {rby}'
                  for s, fire, n_fire, res, n_res, by, rby in RESULTS]
        # Shown with the result, also when the tests pass (meson's log keeps it).
        with request.config.pluginmanager.getplugin('capturemanager').global_and_fixture_disabled():
            print('\n' + '\n'.join(lines))


def page_and_resolve(rig, scenario, before_down=None):
    """Port 1 down until paged, then up until resolved; exactly one of each, to the pager
    and (continue: true) the mailbox, once every node has decided."""
    counts = rig.dedup_counts()
    t_down = rig.link('down')
    if before_down:
        before_down()
    fire = rig.wait_got('firing', 'DpdkLinkDown paged')
    rig.wait_decided(counts, fire[0])
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    counts = rig.dedup_counts()
    t_up = rig.link('up')
    resolved = rig.wait_got('resolved', 'DpdkLinkDown resolved')
    rig.wait_decided(counts, resolved[0])
    assert rig.counts('resolved') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    record(rig, scenario, t_down, fire, t_up, resolved)
    return fire, resolved


def test_1_both_up_one_page_and_one_resolution(rig):
    """Both servers fire and both nodes get both alerts: one page, one resolution."""
    rig.use_host('ha-s1')
    # Each node's peer answers and each node sees both (check_ha.py --probe).
    assert rig.ha.check(probe=True) == []
    fire, _ = page_and_resolve(rig, '1 all up')
    # The first node in the cluster's order sends; the second found its notification.
    assert fire[1] is rig.ha.by_position()[0]


def test_2_one_prometheus_down_still_one_page(rig):
    rig.use_host('ha-s2')
    kill(rig.ha.proms[1])
    page_and_resolve(rig, '2 Prometheus B killed before')
    assert not rig.ha.proms[1].running()


def test_5_collectd_restart_while_down_is_no_flap(rig):
    """collectd restarted while the link stays down, in the worst case: down long enough
    that each server misses a scrape and every series of it goes stale. No resolution and
    no second page; both servers keep the alert firing since the same moment."""
    rig.use_host('ha-s5')
    counts = rig.dedup_counts()
    t_down = rig.link('down')
    fire = rig.wait_got('firing', 'DpdkLinkDown paged')
    rig.wait_decided(counts, fire[0])

    def active_since():
        return sorted((p.url, a['activeAt']) for p in rig.ha.proms for a in p.firing(
            'DpdkLinkDown') if a['labels']['instance'] == rig.host)
    before = wait_until(lambda: len(active_since()) == 2 and active_since(), 10,
                        'DpdkLinkDown firing in both servers')
    rig.cd.stop()
    for p in rig.ha.proms:
        wait_until(lambda: p.query('up{job="dpdktel"} == 0'), 30, f'a failed scrape in {p.url}')
    rig.cd.cleanup()
    rig.start_collectd()
    counts = rig.dedup_counts()
    t_back = rig.wait_link(0)
    # A resolution sent to the nodes when the series went stale would be delivered at their
    # next flush (within a group_interval), by the second node within its peer-timeout.
    rig.wait_decided(counts, t_back, GROUP_INTERVAL + PEER_TIMEOUT + 1)
    assert active_since() == before
    assert rig.counts('resolved') == {PAGER: 0, MAIL: 0}, rig.deliveries()
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    counts = rig.dedup_counts()
    t_up = rig.link('up')
    resolved = rig.wait_got('resolved', 'DpdkLinkDown resolved')
    rig.wait_decided(counts, resolved[0])
    assert rig.counts('resolved') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    record(rig, '5 collectd restarted while down', t_down, fire, t_up, resolved)


def test_3_alertmanager_killed_after_paging_no_second_page(rig):
    """The node that paged is killed while the alert fires: the survivor, which has its
    notification in its log, does not page again, and sends the resolution once."""
    rig.use_host('ha-s3')
    counts = rig.dedup_counts()
    t_down = rig.link('down')
    fire = rig.wait_got('firing', 'DpdkLinkDown paged')
    sender = fire[1]
    (survivor,) = [am for am in rig.ha.ams if am is not sender]
    rig.wait_decided(counts, fire[0])  # the survivor found the page in its log
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    counts = rig.dedup_counts([survivor])
    t_kill = time.monotonic()
    kill(sender)
    # Its next flush, alone (a group_interval later, and its peer-timeout wait while it
    # still counts the dead node as a peer).
    rig.wait_decided(counts, t_kill, GROUP_INTERVAL + PEER_TIMEOUT + 1)
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    counts = rig.dedup_counts()
    t_up = rig.link('up')
    resolved = rig.wait_got('resolved', 'DpdkLinkDown resolved by the survivor')
    rig.wait_decided(counts, resolved[0])
    assert resolved[1] is survivor
    assert rig.counts('resolved') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    record(rig, '3 paging Alertmanager killed after', t_down, fire, t_up, resolved)


def test_4_alertmanager_killed_before_group_wait_ends_other_pages(rig):
    """The node that would page is killed shortly before its group_wait ends: the other,
    finding no notification in the log after its peer-timeout wait, pages."""
    rig.use_host('ha-s4')  # starts the node killed above: both run, in one cluster
    first, second = rig.ha.by_position()
    want = {'alertname': 'DpdkLinkDown', 'instance': rig.host, 'port': '1'}
    t_down = rig.link('down')
    wait_until(lambda: first.alert(**want), 30, f'the alert in {first.url}', interval=0.005)
    t_got = time.monotonic()
    # The fault: the alert's group_wait started when the node got it.
    time.sleep(max(0.0, t_got + GROUP_WAIT - 0.5 - time.monotonic()))
    assert not rig.got(PAGER, 'firing'), 'paged before the kill: too late to test the take-over'
    kill(first)
    fire = rig.wait_got('firing', 'DpdkLinkDown paged by the other node')
    assert fire[1] is second
    # Sent after the other's own group_wait and its wait for the first (peer-timeout).
    assert fire[0] - t_got >= GROUP_WAIT
    counts = rig.dedup_counts()
    t_up = rig.link('up')
    resolved = rig.wait_got('resolved', 'DpdkLinkDown resolved')
    rig.wait_decided(counts, resolved[0])
    assert resolved[1] is second
    assert rig.counts('firing') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    assert rig.counts('resolved') == {PAGER: 1, MAIL: 1}, rig.deliveries()
    record(rig, '4 paging Alertmanager killed before', t_down, fire, t_up, resolved)
