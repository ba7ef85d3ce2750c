"""The highly available monitoring set we ship, run on loopback: two Prometheus servers
(grafana/prometheus/prometheus-ha-a.yml, -b.yml) and two Alertmanagers in a cluster
(grafana/alertmanager/prometheus-alertmanager.mon-a, .mon-b) with
grafana/alertmanager/alertmanager.yml, for tests and scripts/demo --ha.

The shipped files are used as they are but for:
- addresses: the scrape targets (a test's collectd), the Alertmanagers' web and gossip
  addresses (free loopback ports), the receivers (a webhook: helpers/alertmanager.py);
- timing values, where `timings` gives them (None keeps the shipped value): the scrape and
  evaluation intervals, the routes' group_wait and group_interval, the `for:` of DpdkLinkDown
  (in a copy of the rules, nothing else of them changed), --cluster.peer-timeout and
  --cluster.settle-timeout.
check() runs grafana/check_ha.py on exactly the files the processes get, before they start.
Every process is ended by PID and its directory removed (helpers/process.py Daemon).

    with HAMonitoring(['127.0.0.1:9103'], hook.url, FAST) as ha:
        ha.proms[0].wait_for_target()
        ha.wait_cluster()
"""
import importlib.util
import os
import re
import shutil
import socket
import tempfile
import urllib.request

import yaml

from .alertmanager import Alertmanager
from .process import free_port
from .prom import RULES, Prometheus
from .wait import wait_until

SOURCE = os.path.abspath(os.environ.get(
    'DTEL_SOURCE_DIR', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../..')))
CHECK_HA = os.path.join(SOURCE, 'grafana', 'check_ha.py')
PROMETHEUS = [os.path.join(SOURCE, 'grafana', 'prometheus', f'prometheus-ha-{n}.yml')
              for n in 'ab']
NODES = [os.path.join(SOURCE, 'grafana', 'alertmanager', f'prometheus-alertmanager.mon-{n}')
         for n in 'ab']

# What the shipped files say, but scrape and evaluate every second (as every live test
# here does).
SHIPPED = dict(scrape_interval='1s', evaluation_interval='1s', link_down_for=None,
               group_wait=None, group_interval=None, peer_timeout=None, settle_timeout=None)


def check_ha():
    """grafana/check_ha.py as a module."""
    spec = importlib.util.spec_from_file_location('check_ha', CHECK_HA)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def free_gossip_port():
    """A loopback port free for TCP and UDP both: Alertmanager gossips on both."""
    for _ in range(50):
        port = free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind(('127.0.0.1', port))
            except OSError:
                continue
        return port
    raise RuntimeError('no loopback port free for both TCP and UDP')


def rules_copy(path, link_down_for):
    """dpdktel.rules.yml with only the `for:` of DpdkLinkDown replaced, written to path."""
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    found = [r for g in doc['groups'] for r in g['rules'] if r.get('alert') == 'DpdkLinkDown']
    assert len(found) == 1, found
    found[0]['for'] = link_down_for
    with open(path, 'w') as f:
        yaml.safe_dump(doc, f, sort_keys=False, width=1000)
    return path


def prometheus_config(shipped, targets, alertmanagers, rules, scrape_interval=None,
                      evaluation_interval=None):
    """A shipped HA config with the test's addresses, rules copy and intervals."""
    with open(shipped) as f:
        doc = yaml.safe_load(f)
    job = next(j for j in doc['scrape_configs'] if j['job_name'] == 'dpdktel')
    job['static_configs'] = [{'targets': list(targets)}]
    if scrape_interval:
        job['scrape_interval'] = job['scrape_timeout'] = scrape_interval
    if evaluation_interval:
        doc['global']['evaluation_interval'] = evaluation_interval
    doc['rule_files'] = [rules]
    doc['alerting']['alertmanagers'] = [{'static_configs': [{'targets': list(alertmanagers)}]}]
    return doc


def cluster_args(node, listen, peers, peer_timeout=None, settle_timeout=None):
    """The --cluster.* flags of a shipped node file with the test's addresses and timings."""
    replace = {'--cluster.listen-address': [listen], '--cluster.peer': list(peers)}
    if peer_timeout:
        replace['--cluster.peer-timeout'] = [peer_timeout]
    if settle_timeout:
        replace['--cluster.settle-timeout'] = [settle_timeout]
    flags = check_ha().parse_flags(check_ha().read_args(node))
    assert set(replace) - {'--cluster.settle-timeout'} <= set(flags), flags
    return [f'{name}={v}' for name, values in flags.items() if name.startswith('--cluster.')
            for v in replace.get(name, values)]


class HAMonitoring:
    """Two Prometheus servers (proms) and two clustered Alertmanagers (ams) on 127.0.0.1."""

    def __init__(self, targets, webhook_url, timings=None, log_level='warn'):
        """log_level: the Alertmanagers' (debug: what each flush did, for a test's failure
        messages: trace())."""
        t = dict(SHIPPED, **(timings or {}))
        self.timings = t
        self.dir = tempfile.mkdtemp(prefix='dtel-ha-')
        rules = RULES
        if t['link_down_for']:
            rules = rules_copy(os.path.join(self.dir, 'dpdktel.rules.yml'), t['link_down_for'])
        self.am_ports = [free_port() for _ in NODES]
        gossip = [f'127.0.0.1:{free_gossip_port()}' for _ in NODES]
        self.ams = [Alertmanager(webhook_url, group_wait=t['group_wait'],
                                 group_interval=t['group_interval'],
                                 cluster_args=cluster_args(
                                     node, gossip[i], gossip[:i] + gossip[i + 1:],
                                     t['peer_timeout'], t['settle_timeout']),
                                 log_level=log_level)
                    for i, node in enumerate(NODES)]
        # What /etc/default/prometheus-alertmanager would say on each node, for check_ha.py.
        self.node_files = []
        for am, port, node in zip(self.ams, self.am_ports, NODES):
            path = os.path.join(am.dir, os.path.basename(node))
            with open(path, 'w') as f:
                f.write('ARGS="' + ' '.join(am.args(port)) + '"\n')
            self.node_files.append(path)
        webs = [f'127.0.0.1:{p}' for p in self.am_ports]
        self.proms = [Prometheus(None, config=prometheus_config(
            shipped, targets, webs, rules, t['scrape_interval'], t['evaluation_interval']))
                      for shipped in PROMETHEUS]

    def check(self, probe=False):
        """grafana/check_ha.py on the files these processes get: its lines (none when the
        set is one pair and one cluster)."""
        return check_ha().check([p.config_path for p in self.proms], self.node_files,
                                do_probe=probe, timeout=1.0)

    def start(self):
        errors = self.check()
        assert not errors, '\n'.join(errors)
        for am, port in zip(self.ams, self.am_ports):
            am.start(port=port)
        for p in self.proms:
            p.start()
        return self

    def start_am(self, i):
        """Start node i again where the Prometheus servers and its peer expect it."""
        return self.ams[i].start(port=self.am_ports[i])

    def wait_cluster(self, timeout=60):
        """Until every running node has settled and sees every running node."""
        def settled():
            up = [am for am in self.ams if am.running()]
            return all(s['cluster']['status'] == 'ready' and
                       len(s['cluster']['peers']) == len(up)
                       for s in (am.status() for am in up))
        return wait_until(settled, timeout, 'the Alertmanagers settled in one cluster')

    def by_position(self):
        """The running nodes in the order they wait before sending (--cluster.peer-timeout
        times their position): the gossip names sorted, as Alertmanager's
        cluster.Peer.Position() does."""
        up = [am for am in self.ams if am.running()]
        return sorted(up, key=lambda am: am.status()['cluster']['name'])

    def trace(self, *words):
        """The log lines of each node that hold any of `words` (log_level debug: "flushing"
        with the group's labels, "Notify success", memberlist's "Suspect" and "Marking")."""
        return '\n'.join(f'{os.path.basename(node)}: {line}'
                         for am, node in zip(self.ams, NODES) for line in am.log().splitlines()
                         if any(w in line for w in words))

    def am_by_url(self, url):
        """The node whose external URL (a webhook payload's externalURL) this is."""
        port = int(re.search(r':(\d+)/?$', url).group(1))
        return self.ams[self.am_ports.index(port)]

    def cleanup(self):
        for d in self.proms + self.ams:
            d.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc):
        self.cleanup()


def metric(url, name):
    """The sum of a metric's samples on a /metrics page (0 when it has none)."""
    with urllib.request.urlopen(url + '/metrics', timeout=5) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(' ', 1)[1]) for line in text.splitlines()
               if line.startswith(name) and line[len(name)] in ' {')
