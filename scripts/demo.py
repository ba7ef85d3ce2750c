"""The dpdktel demo: the whole pipeline on this machine, on loopback, until Ctrl-C.

dpdktel-fwd on two net_tap ports with frames flowing in (net_null without /dev/net/tun),
collectd with dpdktel_stats, dpdktel_events and write_prometheus, Prometheus with the
dpdktel scrape job and rules, and Alertmanager with grafana/alertmanager/alertmanager.yml
(its receivers pointed at the demo itself). Every 2 s it prints each port's link, packet and
drop rates, each lcore's state, the firing alerts (from Prometheus), the notifications
Alertmanager delivered to each receiver and the notifications collectd got.
With --scenario it also takes a link down, injects a stall and shows both fire and clear.
With --ha the monitoring is the highly available variant of grafana/ (helpers/ha.py): two
Prometheus servers (prometheus-ha-a.yml, -b.yml) and two Alertmanagers in a cluster
(prometheus-alertmanager.mon-a, .mon-b), each delivery printed with the node that sent it.
Run through scripts/demo, which bootstraps and builds first.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SOURCE, 'tests', 'pylib'))  # the shared test helpers
os.environ.setdefault('DTEL_SOURCE_DIR', SOURCE)
from helpers import dpdk  # noqa: E402
from helpers.alertmanager import Alertmanager, Webhook, send_alerts_to  # noqa: E402
from helpers.collectd import Collectd  # noqa: E402
from helpers.ha import HAMonitoring  # noqa: E402
from helpers.pipeline import Traffic, collectd_config  # noqa: E402
from helpers.process import free_port  # noqa: E402
from helpers.prom import Prometheus  # noqa: E402

STATES = {0: 'STARTING', 1: 'RUNNING', 2: 'IDLE', 3: 'STALLED', 4: 'EXITED'}
# --scenario timeline, in seconds after the pipeline is up.
LINK_DOWN_AT, LINK_UP_AT = 10, 45
STALL_AT_MS, STALL_FOR_MS = 55000, 35000


def can_tap():
    return os.path.exists('/dev/net/tun')


def start_forwarder(build, scenario, ifaces):
    fwd_bin = os.path.join(build, 'fwd', 'dpdktel-fwd')
    args = ['--mac-mode', 'swap', '--idle-sleep-us', '200']
    if scenario:
        args += ['--fault', f'stall:1:{STALL_AT_MS}:{STALL_FOR_MS}']
    if ifaces:
        vdevs = [f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)]
    else:
        vdevs = ['net_null0', 'net_null1']
    app = dpdk.fwd(fwd_bin, prefix=f'demo{os.getpid()}', vdevs=vdevs, app_args=args)
    return app.start(timeout=60)


def by(results, label):
    return {r['metric'].get(label): float(r['value'][1]) for r in results}


def rate(v):
    for unit, div in (('M', 1e6), ('k', 1e3)):
        if v >= div:
            return f'{v / div:.1f}{unit}'
    return f'{v:.0f}'


def deliveries(hook, seen, sender=None):
    """Lines for what Alertmanager delivered since the last call: receiver, status, alert
    (and, for a cluster, sender(externalURL): the node that sent it)."""
    lines = []
    got = hook.received()
    for _, receiver, payload in got[seen:]:
        by = f' (sent by {sender(payload["externalURL"])})' if sender else ''
        for a in payload['alerts']:
            lb = a['labels']
            where = ' '.join(f'{k}={lb[k]}' for k in ('port', 'lcore') if k in lb)
            lines.append(f'  delivered to {receiver}{by}: {a["status"].upper()} '
                         f'{lb["alertname"]}{" " + where if where else ""}: '
                         f'{a["annotations"].get("summary", "")}')
    return lines, len(got)


def summary(prom, cd, seen_notes, hook, seen_deliveries, sender=None):
    q = prom.query
    link = by(q('collectd_dpdktel_events_link_status{dpdk_instance="demo"}'), 'port')
    # Rates over the last 10 s (the dashboards use the 1-minute recording rules).
    sel = '{dpdk_instance="demo"}[10s]'
    rx = by(q(f'rate(collectd_dpdktel_stats_if_packets_rx_total{sel})'), 'port')
    tx = by(q(f'rate(collectd_dpdktel_stats_if_packets_tx_total{sel})'), 'port')
    drops = by(q(f'sum by (port) (rate(collectd_dpdktel_stats_if_rx_dropped_total{sel})) + '
                 f'sum by (port) (rate(collectd_dpdktel_stats_if_errors_tx_total{sel}))'), 'port')
    lcores = by(q('collectd_dpdktel_events_lcore_state{dpdk_instance="demo"}'), 'lcore')
    lines = [time.strftime('%H:%M:%S')]
    for p in sorted(link, key=int):
        lines.append(f'  port {p}: link {"up" if link[p] else "DOWN":4}  rx {rate(rx.get(p, 0)):>6} pps'
                     f'  tx {rate(tx.get(p, 0)):>6} pps  drops {rate(drops.get(p, 0)):>5}/s')
    for lc in sorted(lcores, key=int):
        lines.append(f'  lcore {lc}: {STATES.get(int(lcores[lc]), "?")}')
    firing = sorted({(a['labels']['alertname'], a['labels'].get('port') or
                      a['labels'].get('lcore') or '') for a in prom.firing()})
    lines.append('  alerts firing: ' + (', '.join(f'{n} {w}'.strip() for n, w in firing)
                                         if firing else 'none'))
    delivered, seen_deliveries = deliveries(hook, seen_deliveries, sender)
    lines += delivered
    notes = cd.notifications()
    for n in notes[seen_notes:]:
        lines.append(f'  notification {n["severity"]}: {n["message"]}')
    print('\n'.join(lines), flush=True)
    return len(notes), seen_deliveries


def scenario_step(t, ifaces, done):
    if not ifaces:
        return
    for at, state in ((LINK_DOWN_AT, 'down'), (LINK_UP_AT, 'up')):
        if t >= at and at not in done:
            done.add(at)
            print(f'scenario: ip link set dev {ifaces[1]} {state}', flush=True)
            subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], state], check=False)


def run(args):
    build = os.path.abspath(args.build)
    ifaces = [f'dtdemo{os.getpid() % 1000}{i}' for i in range(2)] if can_tap() else []
    if not ifaces:
        print('demo: no /dev/net/tun here: using net_null ports (no link changes, no traffic '
              'from outside)', flush=True)
    app = start_forwarder(build, args.scenario, ifaces)
    traffic = Traffic(ifaces[0], per_tick=10) if ifaces else None
    wp_port = free_port()
    cd = Collectd(build, SOURCE, collectd_config('demo', app.socket, wp_port), hostname='demo',
                  ours=('dpdktel_stats', 'dpdktel_events'), system_plugins=('write_prometheus',))
    # The example routing and inhibition as they are (group_wait 10 s for critical alerts,
    # 1 min for warnings); only the receivers are the demo's webhook, which prints.
    hook = Webhook().start()
    ha = prom = am = sender = None
    if args.ha:
        # The shipped HA files: only addresses replaced, and 1 s scrapes and evaluations.
        ha = HAMonitoring([f'127.0.0.1:{wp_port}'], hook.url)
        prom = ha.proms[0]
        sender = lambda url: 'mon-' + 'ab'[ha.ams.index(ha.am_by_url(url))]  # noqa: E731
    else:
        prom = Prometheus([f'127.0.0.1:{wp_port}'])
        am = Alertmanager(hook.url, group_wait=None, group_interval=None)
    try:
        cd.start()
        if ha:
            ha.start()
            for p in ha.proms:
                p.wait_for_target()
            ha.wait_cluster()
        else:
            am.start()
            send_alerts_to(prom, am)
            prom.start()
            prom.wait_for_target()
        print(f'demo: dpdktel-fwd pid {app.pid}, telemetry socket {app.socket}')
        print(f'demo: collectd (dpdktel_stats, dpdktel_events) metrics: '
              f'http://127.0.0.1:{wp_port}/metrics')
        if ha:
            for p, name in zip(ha.proms, 'AB'):
                print(f'demo: Prometheus {name} of the pair (prometheus-ha-{name.lower()}.yml): '
                      f'{p.url}  (alerts: {p.url}/alerts)')
            for a, name in zip(ha.ams, ('mon-a', 'mon-b')):
                print(f'demo: Alertmanager {name} of the cluster (alertmanager.yml, '
                      f'prometheus-alertmanager.{name}): {a.url}')
            print('demo: the cluster has settled; what it delivers to dpdktel-pager and '
                  'dpdktel-mail is printed below, with the node that sent it')
        else:
            print(f'demo: Prometheus with the dpdktel rules: {prom.url}  '
                  f'(alerts: {prom.url}/alerts)')
            print(f'demo: Alertmanager with grafana/alertmanager/alertmanager.yml: {am.url}  '
                  '(what it delivers to dpdktel-pager and dpdktel-mail is printed below)')
        print(f'demo: dashboards to import into a Grafana of yours: {SOURCE}/grafana/dashboards')
        print(f'demo: try  {build}/telemetry/dpdktel -p {app.prefix} ports')
        if args.scenario:
            print(f'demo: scenario: port 1 down at +{LINK_DOWN_AT}s, up at +{LINK_UP_AT}s; '
                  f'lcore 1 stalls from +{STALL_AT_MS // 1000}s for {STALL_FOR_MS // 1000}s '
                  '(alerts fire after their for: of 20 s)')
        print('demo: Ctrl-C stops everything\n', flush=True)
        t0, seen, seen_am, done = time.time(), 0, 0, set()
        while args.seconds is None or time.time() - t0 < args.seconds:
            if args.scenario:
                scenario_step(time.time() - t0, ifaces, done)
            seen, seen_am = summary(prom, cd, seen, hook, seen_am, sender)
            time.sleep(2)
    finally:
        if traffic:
            traffic.close()
        if ha:
            ha.cleanup()
        else:
            prom.cleanup()
            am.cleanup()
        hook.stop()
        cd.cleanup()
        app.cleanup()
        print('demo: stopped dpdktel-fwd, collectd, Prometheus and Alertmanager and removed '
              'their state',
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.environ.get('DTEL_BUILD_DIR', 'build'))
    ap.add_argument('--scenario', action='store_true',
                    help='take a link down and inject a stall, then watch them clear')
    ap.add_argument('--ha', action='store_true',
                    help='two Prometheus servers and two clustered Alertmanagers')
    ap.add_argument('--for', dest='seconds', type=float, default=None,
                    help='stop by itself after SECONDS')
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        run(args)
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
