"""The monitoring chain, live, with collectdctl standing in for the plugins.

Real collectd (unixsock + write_prometheus on a free loopback port) is fed every identifier
of docs/metrics.md with `collectdctl putval`, as dpdktel_stats and dpdktel_events will
dispatch them; real Prometheus 2.42 scrapes it with the dpdktel job of
grafana/prometheus/prometheus.yml and evaluates dpdktel.rules.yml every second. This proves
on the real write_prometheus -> Prometheus path: the metric names of docs/metrics.md, the
relabelling into dpdk_instance/port/lcore (with an instance name that contains a dot),
DpdkLinkDown and DpdkLcoreStalled firing for the right port and lcore only and clearing,
and every dashboard query returning data. When the plugins land, the end-to-end test
replaces the feeder with them.
"""
import os
import re
import threading
import time

import pytest

from helpers import metricsdoc
from helpers.collectd import Collectd
from helpers.dashboards import dashboard_queries, only
from helpers.process import free_port
from helpers.prom import Prometheus
from helpers.wait import wait_until

SOURCE = os.path.abspath(os.environ.get('DTEL_SOURCE_DIR',
                                        os.path.join(os.path.dirname(__file__), '../..')))

HOST = 'hostA'
INSTANCE = 'lab.edge1'  # a dot: the relabel regexes must anchor the .portN suffix
PORTS = (0, 1)
LCORES = (1, 2)
DOWN_PORT, STALLED_LCORE = 1, 2
# Sample type instances for the table cells of docs/metrics.md that are not literal.
TYPE_INSTANCE_SAMPLES = {'q<Q>': ['q0', 'q1'], 'heap<ID>': ['heap0'],
                         'the xstat name': ['rx_good_packets', 'rx_q0_errors'],
                         'the pool name': ['mb_pool_0'],
                         # <Command> blocks (docs/dpdktel_stats.md, "Values of any command")
                         '<name>.<key>': ['fwd_lcores.heartbeat.lcore1'],
                         'the ring name': ['MP_mb_pool_0'],
                         # info values: names in the type instance (docs/metrics.md, "Names")
                         # {e}: the port's number, so each port has a device of its own
                         '<device>,<driver>,<mac>,<numa>': ['net_tap{e},net_tap,02:00:00:00:00:0{e},0'],
                         '<role>,<cpus>,<numa>': ['RTE,2-3_8,0'],
                         '<dpdk>,<program>,<pid>,<dpdktel>,<app_pid>':
                             ['24.11.6,dpdk-testpmd,4242,0.1.0,1'],
                         # device classes: the device, its part, the counter
                         'cryptodev<ID>.<counter>': ['cryptodev0.enqueued_count'],
                         'dmadev<ID>.vchan<V>.<counter>': ['dmadev0.vchan0.completed'],
                         'eventdev<ID>.<name>': ['eventdev0.dev_rx'],
                         'eventdev<ID>.port<P>.<name>': ['eventdev0.port1.port_1_rx'],
                         'eventdev<ID>.queue<Q>.<name>': ['eventdev0.queue0.qid_0_tx'],
                         'rawdev<ID>.<name>': ['rawdev0.xstat_0'],
                         # drops: a driver counter that refines a reason (drops.tsv)
                         '<reason>.<xstat>': ['rx_missed.rx_priority0_dropped'],
                         # lcore_rx_queue: rx queue 0 of each port, each polled by every
                         # lcore here (the feeder's lcores and ports are not paired)
                         '<port>,<queue>': ['0,0', '1,0']}
# Counters that stay flat, so that only the alerts under test fire.
FLAT_COUNTERS = {'if_errors', 'if_rx_dropped', 'if_tx_dropped', 'queue_errors', 'restarts',
                 'reconnects', 'drops'}


class Feeder:
    """Putvals every identifier of docs/metrics.md once a second from a thread.

    State the test changes: which ports are down, which lcores stalled. Counters advance
    with time; link_changes and stalls count the changes the test makes.
    """

    def __init__(self, collectd, rows):
        self.c = collectd
        self.rows = rows
        self.lock = threading.Lock()
        self.down, self.stalled = set(), set()
        self.link_changes = {p: 0 for p in PORTS}
        self.stalls = {lc: 0 for lc in LCORES}
        self.t0 = time.time()
        self.rounds = 0
        self.error = None
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def set_link(self, port, up):
        with self.lock:
            if up == (port in self.down):
                self.link_changes[port] += 1
            (self.down.discard if up else self.down.add)(port)

    def set_stalled(self, lcore, stalled):
        with self.lock:
            if stalled and lcore not in self.stalled:
                self.stalls[lcore] += 1
            (self.stalled.add if stalled else self.stalled.discard)(lcore)

    def _value(self, row, ds, entity):
        t = time.time() - self.t0
        if row.kind == 'DERIVE':
            if row.type in FLAT_COUNTERS:
                return 0
            if row.type == 'link_changes':
                return self.link_changes[entity]
            if row.type == 'stalls':
                return self.stalls[entity]
            rate = {'if_octets': 1_250_000, 'queue_octets': 625_000, 'lcore_cycles':
                    2_000_000_000 if ds == 'total' else 800_000_000}.get(row.type, 1000)
            return int(rate * t)
        gauges = {
            'link_status': 0 if entity in self.down else 1,
            'link_speed': 0 if entity in self.down else 10000,
            'lcore_state': 3 if entity in self.stalled else 1,
            'heartbeat_age': 0.5 if entity in self.stalled else 0.001,
            'link_flapping': 0, 'up': 1, 'not_responding': 0, 'uptime': int(t) + 100,
            'port_mtu': 1500, 'port_queues': 2, 'percent': 42, 'duration': 0.002,
            # Within the bounds of docs/alerts.md, "Timing": DpdkTelemetryDegraded quiet.
            'poll_interval': 1, 'detection_bound': 0.22,
        }
        # Half of each pool in use, rings a tenth full: the memory alerts stay quiet.
        if row.type == 'ring_entries' and ds == 'used':
            return 100
        return gauges.get(row.type, 1000)

    def value_lists(self):
        with self.lock:
            for row in self.rows:
                entities = {'port': PORTS, 'lcore': LCORES, 'instance': [None]}[row.scope]
                tis = []
                for ti in row.type_instances or ['']:
                    tis += TYPE_INSTANCE_SAMPLES.get(ti, [ti])
                for e in entities:
                    pi = INSTANCE if e is None else f'{INSTANCE}.{row.scope}{e}'
                    for ti in tis:
                        ti = ti.replace('{e}', str(e))
                        ident = f'{HOST}/{row.plugin}-{pi}/{row.type}' + (f'-{ti}' if ti else '')
                        vals = ':'.join(str(self._value(row, ds, e)) for ds in row.data_sources)
                        yield ident, f'N:{vals}'

    def _run(self):
        while not self.stop_event.is_set():
            start = time.monotonic()
            try:
                self.c.putvals(list(self.value_lists()), interval=1)
                self.rounds += 1
            except Exception as e:  # reported by check(), not lost in the thread
                self.error = e
                return
            self.stop_event.wait(max(0, 1 - (time.monotonic() - start)))

    def check(self):
        if self.error:
            raise self.error

    def start(self):
        self.thread.start()
        wait_until(lambda: self.check() or self.rounds >= 1, 20, 'first feeder round')

    def stop(self):
        self.stop_event.set()
        self.thread.join(10)


@pytest.fixture(scope='module')
def rows():
    rs = metricsdoc.parse(os.path.join(SOURCE, 'docs', 'metrics.md'))
    for r in rs:
        for ti in r.type_instances:
            assert re.fullmatch(r'\w+', ti) or ti in TYPE_INSTANCE_SAMPLES, (
                f'docs/metrics.md line {r.line}: add a sample for type instance {ti!r}')
    return rs


@pytest.fixture(scope='module')
def chain(rows, build_dir, source_dir):
    wp_port = free_port()
    body = f'LoadPlugin write_prometheus\n<Plugin write_prometheus>\n  Host "127.0.0.1"\n' \
           f'  Port "{wp_port}"\n</Plugin>\n'
    # Timeout 5: a feeder round late by a few seconds on a loaded machine must not make
    # values vanish (and DpdkTelemetryStale go pending).
    # One write thread keeps the values of one identifier in order.
    collectd = Collectd(build_dir, source_dir, body, system_plugins=('write_prometheus',),
                        ours=(), csv=False, timeout=5, write_threads=1, hostname=HOST,
                        http_port=wp_port)
    feeder = prom = None
    try:
        collectd.start()
        feeder = Feeder(collectd, rows)
        feeder.start()
        prom = Prometheus([f'127.0.0.1:{wp_port}']).start()
        prom.wait_for_target()
        yield collectd, feeder, prom
    finally:
        if feeder:
            feeder.stop()
        if prom:
            prom.cleanup()
        collectd.cleanup()


def series_labels(prom, metric):
    return [s['metric'] for s in prom.query(metric)]


def test_every_documented_metric_arrives_relabelled(chain, rows):
    collectd, feeder, prom = chain
    names = sorted({n for r in rows for n in r.metric_names()})
    wait_until(lambda: feeder.check() or all(prom.query(n) for n in names), 30,
               'every docs/metrics.md metric in Prometheus')
    base = {'instance': HOST, 'dpdk_instance': INSTANCE, 'job': 'dpdktel'}
    # A name documented both with and without a type instance (app_load and app_load-budget)
    # has series with the label and one without.
    untyped = {n for r in rows if not r.type_instances for n in r.metric_names()}
    # A name documented for ports and for the instance (dpdktel_events' poll_interval) has
    # series of both: each row is checked against those of its scope.
    scopes = {}
    for r in rows:
        for name in r.metric_names():
            scopes.setdefault(name, set()).add(r.scope)

    def of_scope(labels, scope):
        return scope == ('port' if 'port' in labels else 'lcore' if 'lcore' in labels
                         else 'instance')
    for r in rows:
        for name in r.metric_names():
            for labels in series_labels(prom, name):
                if len(scopes[name]) > 1 and not of_scope(labels, r.scope):
                    continue
                labels = dict(labels)
                assert labels.pop('__name__') == name
                assert not {'dpdktel_stats', 'dpdktel_events', '__dpdktel_pi'} & set(labels), \
                    labels
                extra = {k: labels.pop(k) for k in ('port', 'lcore', 'type') if k in labels}
                assert labels == base, (name, labels)
                # port only on port values, lcore only on lcore values, with their ids.
                ids = {'port': {str(p) for p in PORTS}, 'lcore': {str(lc) for lc in LCORES}}
                for scope in ('port', 'lcore'):
                    if r.scope == scope:
                        assert extra.get(scope) in ids[scope], (name, extra)
                    else:
                        assert scope not in extra, (name, extra)
                if r.type_instances and name not in untyped:
                    assert 'type' in extra, (name, extra)
                if r.type_instances and 'type' in extra and all(
                        re.fullmatch(r'\w+', ti) for ti in r.type_instances):
                    assert extra['type'] in {ti for x in rows if name in x.metric_names()
                                             for ti in x.type_instances}, (name, extra)


def test_link_down_and_stall_fire_for_their_port_and_lcore_then_clear(chain):
    collectd, feeder, prom = chain
    # Traffic on every port first, so the utilisation of the port going down has a past.
    wait_until(lambda: feeder.check() or len(prom.query(
        'dpdktel:port_rx_utilisation:ratio_rate1m')) == len(PORTS), 30, 'utilisation recorded')
    t_down = time.time()
    feeder.set_link(DOWN_PORT, up=False)
    feeder.set_stalled(STALLED_LCORE, True)

    # for: 20s, evaluated every second.
    def firing_both():
        feeder.check()
        fs = prom.firing()
        return only(fs, 'DpdkLinkDown') and only(fs, 'DpdkLcoreStalled') and fs
    firing = wait_until(firing_both, 60, 'DpdkLinkDown and DpdkLcoreStalled firing')
    fired_after = time.time() - t_down
    assert fired_after >= 20, f'fired after {fired_after:.1f}s, before its for: 20s'
    base = {'severity': 'critical', 'job': 'dpdktel', 'instance': HOST,
            'dpdk_instance': INSTANCE}
    link = only(firing, 'DpdkLinkDown')
    assert [a['labels'] for a in link] == [dict(base, alertname='DpdkLinkDown',
                                                port=str(DOWN_PORT))]
    # The device name joined from port_info (a template query in the rule's annotation).
    assert link[0]['annotations']['summary'] == \
        f'Link down on port {DOWN_PORT} (net_tap{DOWN_PORT}) of {INSTANCE} on {HOST}'
    assert link[0]['annotations']['runbook_url'] == 'docs/alerts.md#dpdklinkdown'
    stall = only(firing, 'DpdkLcoreStalled')
    assert [a['labels'] for a in stall] == [dict(base, alertname='DpdkLcoreStalled',
                                                 lcore=str(STALLED_LCORE))]
    # Nothing else, not even pending: no stale data, no drops, no flap, no restart.
    assert sorted(a['labels']['alertname'] for a in prom.alerts()) == \
        ['DpdkLcoreStalled', 'DpdkLinkDown'], prom.alerts()

    # While it fires, every dashboard query has data: range queries over the run (as a
    # panel or an annotation shows them), instant ones now.
    values = {'instance': HOST, 'dpdk_instance': INSTANCE, 'port': str(DOWN_PORT),
              'lcore': str(STALLED_LCORE),
              'grafana': {'__rate_interval': '4s', '__interval': '1s',
                          '__range': f'{int(time.time() - feeder.t0) + 1}s'}}
    queries, var_queries = dashboard_queries(values)
    assert len(queries) > 40
    empty = queries

    def all_have_data():
        # The alert queries' last range step can be just before the first firing sample:
        # ask again (only those still empty) until each has data or the deadline passes.
        nonlocal empty
        empty = [(where, expr, instant) for where, expr, instant in empty
                 if not (prom.query(expr) if instant else prom.query_range(expr, feeder.t0))]
        return not empty
    try:
        wait_until(all_have_data, 10, 'every dashboard query returning data')
    except AssertionError:
        raise AssertionError('queries without data:\n' +
                             '\n'.join(f'{w}: {e}' for w, e, _ in empty)) from None
    for where, match, label, want in var_queries:
        got = prom.label_values(label, match, start=feeder.t0)
        assert want in got, f'{where}: label_values({match}, {label}) = {got}'

    # Back up and running: both clear at the next evaluations.
    feeder.set_link(DOWN_PORT, up=True)
    feeder.set_stalled(STALLED_LCORE, False)
    wait_until(lambda: feeder.check() or not prom.alerts(), 20, 'all alerts cleared')
