"""Many hosts, one collector: three "DPDK hosts" in network namespaces, each with
dpdktel-fwd and a collectd (both plugins, the network plugin as a signed client), sending to
a central collectd (network server + write_prometheus) scraped by Prometheus with our
rules. No address is set outside the test's own namespaces."""
import os
import shutil
import tempfile

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.netns import Namespaces, ip
from helpers.prom import Prometheus
from helpers.wait import wait_until

HOSTS = ('hostA', 'hostB', 'hostC')
NET = '10.77.0'
SECRET = 'dpdktel-test-secret'


def host_conf(sock, central):
    return (f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  MemoryStats false\n'
            f'  <Instance "edge">\n    SocketPath "{sock}"\n  </Instance>\n</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.05\n'
            f'  <Instance "edge">\n    SocketPath "{sock}"\n  </Instance>\n</Plugin>\n'
            f'LoadPlugin network\n<Plugin network>\n  <Server "{central}" "25826">\n'
            f'    SecurityLevel Sign\n    Username "dpdktel"\n    Password "{SECRET}"\n'
            f'  </Server>\n</Plugin>\n')


def central_conf(listen, auth, wp_port):
    return (f'LoadPlugin network\n<Plugin network>\n  <Listen "{listen}" "25826">\n'
            f'    SecurityLevel Sign\n    AuthFile "{auth}"\n  </Listen>\n</Plugin>\n'
            f'LoadPlugin write_prometheus\n<Plugin write_prometheus>\n  Host "127.0.0.1"\n'
            f'  Port "{wp_port}"\n</Plugin>\n')


@pytest.fixture
def topology():
    tag = os.getpid() % 10000
    with Namespaces() as nss:
        central = nss.add(f'dtc{tag}')
        ip('link', 'add', 'br0', 'type', 'bridge', ns=central)
        ip('addr', 'add', f'{NET}.1/24', 'dev', 'br0', ns=central)
        ip('link', 'set', 'br0', 'up', ns=central)
        hosts = {}
        for i, name in enumerate(HOSTS):
            ns = nss.add(f'dth{tag}{i}')
            nss.veth(ns, 'eth0', central, f'v{i}')
            ip('link', 'set', f'v{i}', 'master', 'br0', ns=central)
            ip('addr', 'add', f'{NET}.{i + 2}/24', 'dev', 'eth0', ns=ns)
            hosts[name] = ns
        yield central, hosts


def test_three_hosts_one_prometheus(build_dir, source_dir, fwd_bin, topology):
    central, hosts = topology
    base = tempfile.mkdtemp(prefix='dtel-hosts-')
    apps, daemons = {}, []
    try:
        for i, (name, ns) in enumerate(hosts.items()):
            app = dpdk.fwd(fwd_bin, prefix=f'h{i}', runtime_base=os.path.join(base, name),
                           netns=ns, vdevs=[f'net_tap{p},iface=dtap{p}' for p in range(2)],
                           app_args=['--idle-sleep-us', '1000'])
            apps[name] = app.start(timeout=60)
        auth = os.path.join(base, 'auth')
        with open(auth, 'w') as f:
            f.write(f'dpdktel: {SECRET}\n')
        wp_port = 9103
        # WriteThreads 1, as docs/deployment.md says for a central collectd: a host's
        # network plugin sends the values of two reads in one packet when its buffer was not
        # full at the first, and several write threads then store them in either order
        # ("uc_update: Value too old", which fails any test at Collectd.stop()).
        center = Collectd(build_dir, source_dir, central_conf(f'{NET}.1', auth, wp_port),
                          hostname='central', ours=(), system_plugins=('network', 'write_prometheus'),
                          netns=central, write_threads=1)
        daemons.append(center)
        center.start()
        for name, ns in hosts.items():
            cd = Collectd(build_dir, source_dir, host_conf(apps[name].socket, f'{NET}.1'),
                          hostname=name, ours=('dpdktel_stats', 'dpdktel_events'),
                          system_plugins=('network',), netns=ns)
            daemons.append(cd)
            cd.start()
        with Prometheus([f'127.0.0.1:{wp_port}'], netns=central) as prom:
            prom.wait_for_target()
            # The dashboards' host variable: every host, through the central collectd.
            wait_until(lambda: set(prom.label_values(
                'instance', 'collectd_dpdktel_events_up')) >= set(HOSTS), 30,
                'all three hosts in Prometheus')
            got = {(s['instance'], s['dpdk_instance'], s['port'])
                   for s in prom.series('collectd_dpdktel_events_link_status')}
            assert got == {(h, 'edge', str(p)) for h in HOSTS for p in range(2)}, got
            # A link down on hostB fires DpdkLinkDown for hostB only.
            ip('link', 'set', 'dtap1', 'down', ns=hosts['hostB'])
            firing = wait_until(lambda: [a for a in prom.firing()
                                         if a['labels']['alertname'] == 'DpdkLinkDown'], 60,
                                'DpdkLinkDown')
            assert [(a['labels']['instance'], a['labels']['port']) for a in firing] == \
                [('hostB', '1')]
            ip('link', 'set', 'dtap1', 'up', ns=hosts['hostB'])
            wait_until(lambda: not [a for a in prom.firing()
                                    if a['labels']['alertname'] == 'DpdkLinkDown'], 30,
                       'DpdkLinkDown cleared')
            # hostC cut off: its series go stale (absent), they do not turn into zeros.
            ip('link', 'set', 'eth0', 'down', ns=hosts['hostC'])
            # Each series goes stale on its own: the central collectd expires every value
            # two intervals after it last came, and they came at different times.
            for metric in ('collectd_dpdktel_events_up', 'collectd_dpdktel_events_link_status'):
                wait_until(lambda: not prom.query(f'{metric}{{instance="hostC"}}'), 30,
                           f'hostC {metric} stale')
            assert len(prom.query('collectd_dpdktel_events_up{instance=~"hostA|hostB"}')) == 2
            assert not prom.query('collectd_dpdktel_events_up == 0')
            stale = wait_until(lambda: [a for a in prom.alerts()
                                        if a['labels']['alertname'] == 'DpdkTelemetryStale'],
                               30, 'DpdkTelemetryStale pending')
            assert {a['labels']['instance'] for a in stale} == {'hostC'}
            assert not [a for a in prom.firing() if a['labels']['alertname'] == 'DpdkInstanceDown']
    finally:
        for d in daemons:
            d.cleanup()
        for app in apps.values():
            app.cleanup()
        shutil.rmtree(base, ignore_errors=True)
