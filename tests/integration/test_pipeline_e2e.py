"""The whole pipeline, live: dpdktel-fwd on net_tap ports -> collectd with both plugins and
write_prometheus -> Prometheus with our scrape config and rules -> the dashboards' queries.

A link taken down fires DpdkLinkDown and clears when it comes back, an injected stall fires
DpdkLcoreStalled and clears, a killed forwarder fires DpdkInstanceDown; while alerts fire,
every dashboard query returns data, and every metric the dashboards and rules use is in
docs/metrics.md and in the live scrape.

It runs with the forwarder of the build under test (DPDK 22.11), and scripts/check runs it
again with DTEL_FWD_BINARY / DTEL_FWD_DPDK_PREFIX naming dpdktel-fwd built against DPDK 25.11
(the plugins stay the main build's).
"""
import json
import os
import re
import subprocess
import time

import yaml

from helpers import dpdk, metricsdoc, promql, telemetry
from helpers.collectd import Collectd
from helpers.dashboards import DASHBOARDS, dashboard_queries, only
from helpers.pipeline import Traffic, collectd_config
from helpers.process import free_port
from helpers.prom import RULES, Prometheus
from helpers.wait import wait_until

HOST = 'e2ehost'
# Metrics that DPDK releases before these do not send (docs/metrics.md): the forwarder of
# such a release has none, and the dashboard queries over them have no data there.
SINCE = {'collectd_dpdktel_stats_mempool_use_': (23, 3),
         'collectd_dpdktel_stats_ring_entries_': (24, 3)}
STALL_AFTER_MS, STALL_FOR_MS = 12000, 55000


def used_metrics():
    """Metric names in the dashboards and alert/recording rules, and the rules' own."""
    exprs = []
    for path in DASHBOARDS:
        with open(path) as f:
            d = json.load(f)
        for top in d['panels']:
            for p in [top] + top.get('panels', []):
                exprs += [t['expr'] for t in p.get('targets', [])]
        exprs += [a['expr'] for a in d['annotations']['list'] if 'expr' in a]
        exprs += [re.fullmatch(r'label_values\((.*), (\w+)\)', v['query']).group(1)
                  for v in d['templating']['list'] if v['type'] == 'query']
    with open(RULES) as f:
        rules = [r for g in yaml.safe_load(f)['groups'] for r in g['rules']]
    exprs += [r['expr'] for r in rules]
    recorded = {r['record'] for r in rules if 'record' in r}
    names = set()
    for e in exprs:
        names |= set(promql.metric_names(promql.analyse(promql.substitute(e))))
    return names - recorded - {'ALERTS', 'up'}


def test_pipeline(build_dir, source_dir, fwd_bin):
    tag = os.getpid() % 10000
    ifaces = [f'dte{tag}a', f'dte{tag}b']
    app = dpdk.fwd(fwd_bin, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                   app_args=['--mac-mode', 'swap', '--idle-sleep-us', '100', '--fault',
                             f'stall:1:{STALL_AFTER_MS}:{STALL_FOR_MS}'])
    wp_port = free_port()
    traffic = None
    with app:
        # The forwarder is the one of the release under test (scripts/check runs this file
        # again with DTEL_FWD_BINARY from build-dpdk-25.11.2): its greeting says so.
        release = dpdk.build_release()
        with telemetry.Client(app.socket) as c:
            assert c.greeting['version'] == f'DPDK {release.version}', (c.greeting, release)
        t_start = time.time()
        traffic = Traffic(ifaces[0])
        cd = Collectd(build_dir, source_dir, collectd_config('edge1', app.socket, wp_port), hostname=HOST,
                      ours=('dpdktel_stats', 'dpdktel_events'),
                      system_plugins=('write_prometheus',))
        try:
            cd.start()
            with Prometheus([f'127.0.0.1:{wp_port}']) as prom:
                prom.wait_for_target()
                wait_until(lambda: prom.query('collectd_dpdktel_stats_queue_packets_rx_total'),
                           30, 'per-queue series in Prometheus')
                # Every metric the dashboards and rules use: documented, and scraped live.
                documented = {n for r in metricsdoc.parse(
                    os.path.join(source_dir, 'docs', 'metrics.md')) for n in r.metric_names()}
                names = used_metrics()
                assert names and not (names - documented), names - documented
                absent = [p for p, since in SINCE.items() if release.key < since]
                live_names = {n for n in names if not any(n.startswith(p) for p in absent)}
                # The utilisation of the port going down needs a past with its link up.
                wait_until(lambda: len(prom.query(
                    'dpdktel:port_rx_utilisation:ratio_rate1m')) == 2, 30,
                    'utilisation recorded for both ports')
                t_down = time.time()
                subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'down'], check=True)

                def firing_both():
                    fs = prom.firing()
                    return only(fs, 'DpdkLinkDown') and only(fs, 'DpdkLcoreStalled') and fs
                firing = wait_until(firing_both, 90, 'DpdkLinkDown and DpdkLcoreStalled')
                assert time.time() - t_down >= 20  # their for: 20s
                link = only(firing, 'DpdkLinkDown')
                assert [(a['labels']['dpdk_instance'], a['labels']['port'],
                         a['labels']['instance']) for a in link] == [('edge1', '1', HOST)]
                stall = only(firing, 'DpdkLcoreStalled')
                assert [(a['labels']['lcore']) for a in stall] == ['1']
                live = set(prom.api('label/__name__/values'))
                assert not (live_names - live), f'not in the live scrape: {live_names - live}'
                values = {'instance': HOST, 'dpdk_instance': 'edge1', 'port': '1',
                          'lcore': '1',
                          'grafana': {'__rate_interval': '4s', '__interval': '1s',
                                      '__range': f'{int(time.time() - t_start) + 1}s'}}
                queries, var_queries = dashboard_queries(values)
                queries = [q for q in queries if not any(p in q[1] for p in absent)]
                empty = queries

                def all_have_data():
                    nonlocal empty
                    empty = [(w, e, i) for w, e, i in empty
                             if not (prom.query(e) if i else prom.query_range(e, t_start))]
                    return not empty
                try:
                    wait_until(all_have_data, 20, 'every dashboard query returning data')
                except AssertionError:
                    raise AssertionError('queries without data:\n' + '\n'.join(
                        f'{w}: {e}' for w, e, _ in empty)) from None
                for where, match, label, want in var_queries:
                    got = prom.label_values(label, match, start=t_start)
                    assert want in got, f'{where}: {got}'
                # The link comes back, the stall ends: both clear.
                subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'up'], check=True)
                wait_until(lambda: not only(prom.firing(), 'DpdkLinkDown'), 30,
                           'DpdkLinkDown cleared')
                wait_until(lambda: not only(prom.firing(), 'DpdkLcoreStalled'), 60,
                           'DpdkLcoreStalled cleared')
                # The notifications behind them, in collectd.
                msgs = [n['message'] for n in cd.notifications()]
                assert 'Link down on edge1 port 1 (net_tap1)' in msgs
                assert any(m.startswith('lcore 1 of edge1 stalled') for m in msgs)
                assert any(m.startswith('lcore 1 of edge1 recovered after') for m in msgs)
                # The forwarder killed: the whole instance is down, not its ports.
                traffic.close()
                traffic = None
                app.kill9()
                down = wait_until(lambda: only(prom.firing(), 'DpdkInstanceDown'), 60,
                                  'DpdkInstanceDown')
                assert [a['labels']['dpdk_instance'] for a in down] == ['edge1']
                assert not only(prom.alerts(), 'DpdkLinkDown')
        finally:
            if traffic is not None:
                traffic.close()
            cd.cleanup()
