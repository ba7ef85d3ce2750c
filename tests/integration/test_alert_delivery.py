"""Alerts delivered to a person, live: dpdktel-fwd on net_tap ports -> collectd with both
plugins and write_prometheus -> Prometheus with our scrape job and rules -> Alertmanager with
grafana/alertmanager/alertmanager.yml -> a webhook receiver on loopback (helpers/alertmanager).

The example config is run as it is, but for the receivers (every one a path of the webhook)
and its group_wait/group_interval (1 s and 2 s instead of 10 s-1 m and 1-10 min), so the
whole test takes about a minute and a half; the rules keep their `for:` (20 s, 30 s).

- A tap port taken down: exactly one firing DpdkLinkDown is paged (and mailed), with the
  port's labels and an actionable summary; after link up, exactly one resolved.
- The forwarder killed while port 0 is down and paged: DpdkInstanceDown is paged, and port
  0's DpdkLinkDown, which the rules drop at once, is not reported resolved (inhibited).
  After DpdkInstanceDown has been delivered, link-down and lcore-stall alerts of that
  instance (as a rule of your own would send them, with the labels the real alerts carry)
  are inhibited and not delivered within a group_interval, while the same alerts of another
  application are.
"""
import os
import shutil
import subprocess
import tempfile
import time

from helpers import dpdk
from helpers.alertmanager import Alertmanager, Webhook, matches, send_alerts_to
from helpers.collectd import Collectd
from helpers.pipeline import collectd_config
from helpers.process import free_port
from helpers.prom import Prometheus
from helpers.wait import wait_until

HOST = 'amhost'
INSTANCE = 'edge1'
PAGER, MAIL = 'dpdktel-pager', 'dpdktel-mail'
GROUP_WAIT, GROUP_INTERVAL = 1, 2


def notifications_with(hook, receiver, status, **labels):
    """The notifications to `receiver` that hold an alert in `status` matching `labels`."""
    return [(t, p) for t, r, p in hook.received(receiver)
            if any(a['status'] == status and matches(a['labels'], labels)
                   for a in p['alerts'])]


def test_link_down_paged_once_instance_down_hides_its_ports(build_dir, source_dir, fwd_bin):
    tag = os.getpid() % 10000
    ifaces = [f'dta{tag}a', f'dta{tag}b']
    app = dpdk.fwd(fwd_bin, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                   app_args=['--idle-sleep-us', '100'])
    wp_port = free_port()
    with Webhook() as hook, app:
        cd = Collectd(build_dir, source_dir, collectd_config(INSTANCE, app.socket, wp_port),
                      hostname=HOST, ours=('dpdktel_stats', 'dpdktel_events'),
                      system_plugins=('write_prometheus',))
        try:
            cd.start()
            with Alertmanager(hook.url, group_wait=f'{GROUP_WAIT}s',
                              group_interval=f'{GROUP_INTERVAL}s') as am:
                prom = Prometheus([f'127.0.0.1:{wp_port}'])
                send_alerts_to(prom, am)
                with prom:
                    prom.wait_for_target()
                    wait_until(lambda: len(prom.query(
                        f'collectd_dpdktel_events_link_status{{dpdk_instance="{INSTANCE}"}}'
                        ' == 1')) == 2, 30, 'both links up in Prometheus')
                    wait_until(lambda: prom.api('alertmanagers')['activeAlertmanagers'], 10,
                               'Prometheus sending to Alertmanager')
                    port = {'alertname': 'DpdkLinkDown', 'instance': HOST,
                            'dpdk_instance': INSTANCE, 'port': '1'}

                    t_down = time.monotonic()
                    subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'down'], check=True)
                    wait_until(lambda: notifications_with(hook, PAGER, 'firing', **port), 60,
                               'DpdkLinkDown paged')
                    t_paged = time.monotonic()
                    # Its `for: 20s`, then one evaluation and the route's group_wait.
                    assert t_paged - t_down >= 20
                    page = notifications_with(hook, PAGER, 'firing', **port)[0][1]
                    (a,) = [a for a in page['alerts'] if a['labels']['alertname'] ==
                            'DpdkLinkDown']
                    assert a['labels']['severity'] == 'critical'
                    # With the device name dpdktel_stats publishes (port_info).
                    assert a['annotations']['summary'] == \
                        f'Link down on port 1 (net_tap1) of {INSTANCE} on {HOST}'
                    assert a['annotations']['runbook_url'] == 'docs/alerts.md#dpdklinkdown'
                    assert page['groupLabels'] == {'instance': HOST, 'dpdk_instance': INSTANCE}
                    # Port 0 stays up: never in a message.
                    assert not [x for x in hook.alerts() if x[3].get('port') == '0']

                    subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'up'], check=True)
                    wait_until(lambda: notifications_with(hook, PAGER, 'resolved', **port), 30,
                               'DpdkLinkDown resolved on the pager')
                    wait_until(lambda: notifications_with(hook, MAIL, 'resolved', **port), 30,
                               'DpdkLinkDown resolved in the mailbox')
                    # Once each, to the pager and (continue: true) the mailbox.
                    for receiver in (PAGER, MAIL):
                        for status in ('firing', 'resolved'):
                            got = notifications_with(hook, receiver, status, **port)
                            assert len(got) == 1, (receiver, status, hook.received())

                    # Port 0 down and paged, then the forwarder killed with port 0 still down:
                    # the application is down, its ports are not, and port 0 is not "resolved"
                    # either (nobody knows its link now). The rules take port 0 out at once,
                    # DpdkInstanceDown waits for its 30 s: DpdkInstanceUnreachable, firing at
                    # once and routed nowhere, is what inhibits the resolution meanwhile.
                    port0 = dict(port, port='0')
                    subprocess.run(['ip', 'link', 'set', 'dev', ifaces[0], 'down'], check=True)
                    wait_until(lambda: notifications_with(hook, PAGER, 'firing', **port0), 60,
                               'DpdkLinkDown of port 0 paged')
                    # and mailed: the mailbox's route has timers of its own, and its message
                    # about port 0 may leave a moment after the page (seen once): sent after
                    # the kill, it would look like a consequence of it.
                    wait_until(lambda: notifications_with(hook, MAIL, 'firing', **port0), 60,
                               'DpdkLinkDown of port 0 mailed')
                    t_kill = time.monotonic()
                    app.kill9()
                    down = {'alertname': 'DpdkInstanceDown', 'instance': HOST,
                            'dpdk_instance': INSTANCE}
                    wait_until(lambda: notifications_with(hook, PAGER, 'firing', **down), 90,
                               'DpdkInstanceDown paged')
                    print(f'link down paged after {t_paged - t_down:.1f} s, instance down '
                          f'after {time.monotonic() - t_kill:.1f} s')
                    # What a port or lcore alert of the dead instance would carry (the labels
                    # of the real page above), and the same for another application.
                    consequences = [
                        dict(port, alertname='DpdkLinkDown', severity='critical'),
                        dict(port, alertname='DpdkLcoreStalled', severity='critical',
                             port=None, lcore='1'),
                    ]
                    consequences = [{k: v for k, v in c.items() if v is not None}
                                    for c in consequences]
                    controls = [dict(c, dpdk_instance='other') for c in consequences]
                    t_posted = time.monotonic()
                    am.post([{'labels': dict(c, job='dpdktel')}
                             for c in consequences + controls])
                    for c in controls:
                        wait_until(lambda: notifications_with(hook, PAGER, 'firing', **c), 30,
                                   f'the control {c} paged')
                    for c in consequences:
                        got = am.alert(**c)
                        assert got and got['status']['inhibitedBy'], got
                    # One more group_interval for a message of the dead instance's group.
                    time.sleep(GROUP_INTERVAL + 1)  # the window in which none may come
                    after_kill = [x for x in hook.alerts(since=t_kill)
                                  if x[3].get('dpdk_instance') == INSTANCE and
                                  x[2] == 'firing']
                    assert {x[3]['alertname'] for x in after_kill} == {'DpdkInstanceDown'}, \
                        after_kill
                    assert t_posted > t_kill
                    # No new DpdkLinkDown message at all since the link came back, and port 0
                    # neither repeated nor resolved.
                    assert len(notifications_with(hook, PAGER, 'firing', **port)) == 1
                    assert len(notifications_with(hook, PAGER, 'firing', **port0)) == 1
                    for receiver in (PAGER, MAIL):
                        assert not notifications_with(hook, receiver, 'resolved', **port0), \
                            hook.received(receiver)
                    # DpdkInstanceUnreachable (severity info) reaches no receiver.
                    assert not [x for x in hook.alerts()
                                if x[3]['alertname'] == 'DpdkInstanceUnreachable']
        finally:
            cd.cleanup()


def test_collectd_routes_link_down_failure_to_a_command(build_dir, source_dir, fwd_bin):
    """docs/examples/dpdktel-notify.conf with docs/examples/dpdktel-notify, as shipped: only
    the paths of the script and of the page command are replaced (the page command records
    when it ran and with what). Real collectd runs it as nobody through the exec plugin."""
    examples = os.path.join(source_dir, 'docs', 'examples')
    work = tempfile.mkdtemp(prefix='dtel-notify-')
    try:
        os.chmod(work, 0o755)
        out = os.path.join(work, 'pages')
        os.mkdir(out)
        os.chmod(out, 0o777)  # the page command runs as nobody
        script = os.path.join(work, 'dpdktel-notify')
        shutil.copy(os.path.join(examples, 'dpdktel-notify'), script)
        page = os.path.join(work, 'page-oncall')
        with open(page, 'w') as f:
            f.write('#!/bin/sh\n'
                    f'f={out}/$(date +%s%N)-$$\n'
                    '{ date +%s.%N; echo "$DTEL_TIME"; echo "$*"; } >"$f.tmp" && '
                    'mv "$f.tmp" "$f"\n')
        os.chmod(script, 0o755)
        os.chmod(page, 0o755)
        with open(os.path.join(examples, 'dpdktel-notify.conf')) as f:
            conf = f.read()
        assert '"/usr/local/bin/dpdktel-notify"' in conf and '/usr/local/bin/page-oncall' in conf
        conf = conf.replace('/usr/local/bin/dpdktel-notify', script).replace(
            '/usr/local/bin/page-oncall', page)

        def pages():
            got = []
            for name in sorted(os.listdir(out)):
                if not name.endswith('.tmp'):
                    with open(os.path.join(out, name)) as f:
                        ran, when, args = f.read().split('\n')[:3]
                    got.append((float(ran), float(when), args))
            return got

        tag = os.getpid() % 10000
        ifaces = [f'dtn{tag}a', f'dtn{tag}b']
        app = dpdk.fwd(fwd_bin, vdevs=[f'net_tap{i},iface={n}' for i, n in enumerate(ifaces)],
                       app_args=['--idle-sleep-us', '100'])
        with app:
            block = f'  <Instance "{INSTANCE}">\n    SocketPath "{app.socket}"\n  </Instance>\n'
            cd = Collectd(build_dir, source_dir,
                          f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n{block}'
                          f'</Plugin>\n' + conf, hostname=HOST, ours=('dpdktel_events',),
                          system_plugins=('exec',))
            try:
                cd.start()
                cd.wait_value(f'dpdktel_events-{INSTANCE}.port1/link_status',
                              lambda row: row[1] == [1.0], 30, 'port 1 up in collectd')
                t_down = time.time()
                subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'down'], check=True)
                want = f'FAILURE {INSTANCE}.port1 on {HOST}: Link down on {INSTANCE} port 1 (net_tap1)'
                (ran, when, args), = wait_until(
                    lambda: [p for p in pages() if p[2] == want], 10,
                    f'the page command run with {want!r}', interval=0.005)
                # Within a second of the notification (its own time), and of the port going down.
                assert ran - when < 1.0, (ran, when)
                assert ran - t_down < 1.0, (ran, t_down)
                print(f'page command ran {ran - when:.3f} s after the notification, '
                      f'{ran - t_down:.3f} s after ip link set down')
                subprocess.run(['ip', 'link', 'set', 'dev', ifaces[1], 'up'], check=True)
                resolved = wait_until(
                    lambda: [p for p in pages() if p[2].startswith(
                        f'--resolve OKAY {INSTANCE}.port1 on {HOST}: Link up on {INSTANCE} port 1')],
                    10, 'the OKAY to the page command with --resolve')
                assert len(resolved) == 1
                # The link down paged once; nothing else paged (the INFO and value traffic
                # of the plugins reaches no command).
                assert [p[2] for p in pages()] == [want, resolved[0][2]], pages()
                assert 'Cowardly refusing' not in cd.log()
            finally:
                cd.cleanup()
    finally:
        shutil.rmtree(work, ignore_errors=True)
