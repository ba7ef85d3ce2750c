#!/usr/bin/python3
"""Check a highly available dpdktel monitoring set before it starts: a pair (or more) of
Prometheus servers and a cluster of Alertmanagers (docs/deployment.md, "Topology 4").

    grafana/check_ha.py                   the shipped example (prometheus-ha-a.yml, -b.yml,
                                          alertmanager/prometheus-alertmanager.mon-a, .mon-b)
    grafana/check_ha.py --prometheus A.yml B.yml --alertmanager /etc/default/... [...]
    grafana/check_ha.py ... --probe       also ask each --cluster.peer whether it answers,
                                          and each running Alertmanager whether it sees all
                                          its peers (run it on a node, peers started)

`promtool check config` and `amtool check-config` check each file alone. What they accept but
breaks the pair is checked here: a Prometheus without its own `replica` external label, or
one that sends it to Alertmanager (each alert then comes twice, as two alerts, and pages
twice); servers whose jobs, rules or Alertmanagers differ; an Alertmanager that does not
gossip, or whose peer is no node of the cluster or does not answer (it then runs alone and
pages on its own). An Alertmanager node is its /etc/default/prometheus-alertmanager file
(ARGS="..."), as Debian's unit passes it. Each problem is one line naming the file, the key,
the value and what is expected; the exit status is 1 if there is any.
"""
import argparse
import ipaddress
import json
import os
import re
import shlex
import socket
import sys
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPLICA = 'replica'
JOB = 'dpdktel'
DEFAULT_PROMETHEUS = [os.path.join(HERE, 'prometheus', f'prometheus-ha-{n}.yml') for n in 'ab']
DEFAULT_ALERTMANAGER = [os.path.join(HERE, 'alertmanager', f'prometheus-alertmanager.mon-{n}')
                        for n in 'ab']
DEFAULT_REFERENCE = os.path.join(HERE, 'prometheus', 'prometheus.yml')
DEFAULT_DATASOURCES = os.path.join(HERE, 'provisioning', 'datasources', 'dpdktel-ha.yaml')


# -- reading --------------------------------------------------------------------------------

def read_args(path):
    """The words of ARGS="..." in an /etc/default file, as Debian's unit gives them to the
    program: EnvironmentFile= takes the value (a backslash at the end of a line continues
    it; quotes are removed), and the unquoted $ARGS of ExecStart= splits it at spaces."""
    with open(path) as f:
        text = re.sub(r'\\\n', '', f.read())
    for line in text.splitlines():
        m = re.match(r'\s*ARGS=(.*)$', line)
        if m:
            return ' '.join(shlex.split(m.group(1))).split()
    raise ValueError(f'{path}: no ARGS="..." line')


def parse_flags(args):
    """{flag: [values]} of `--flag=value` words (Alertmanager's kingpin flags)."""
    flags = {}
    for word in args:
        name, eq, value = word.partition('=')
        if not name.startswith('--') or not eq:
            raise ValueError(f'{word!r}: expected --flag=value')
        flags.setdefault(name, []).append(value)
    return flags


class Node:
    """One Alertmanager of the cluster, from its ARGS."""

    def __init__(self, path, args=None):
        self.path = path
        self.flags = parse_flags(read_args(path) if args is None else args)

    def flag(self, name, default=None):
        values = self.flags.get(name)
        return values[-1] if values else default

    @property
    def listen(self):
        return self.flag('--cluster.listen-address', '0.0.0.0:9094')  # kingpin's default

    @property
    def address(self):
        """Where the other nodes reach this one: --cluster.advertise-address or the listen
        address."""
        return self.flag('--cluster.advertise-address') or self.listen

    @property
    def peers(self):
        return self.flags.get('--cluster.peer', [])

    @property
    def web(self):
        """host:port of its API, the host being its cluster address's."""
        port = self.flag('--web.listen-address', ':9093').rpartition(':')[2]
        return f'{split(self.address)[0]}:{port}'


def split(addr):
    host, _, port = addr.rpartition(':')
    return host.strip('[]'), port


def load_yaml(path, errors):
    try:
        with open(path) as f:
            return yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        errors.append(f'{path}: cannot read: {e}')
        return None


def resolve(addr):
    """The set of (ip, port) an address names; empty when it does not resolve."""
    host, port = split(addr)
    try:
        return {(ai[4][0], port) for ai in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (socket.gaierror, UnicodeError):
        return set()


# -- Prometheus ---------------------------------------------------------------------------

def drops_replica(cfgs):
    """Whether alert_relabel_configs take the replica label off every alert."""
    for c in cfgs or []:
        if c.get('action') == 'labeldrop' and re.fullmatch(str(c.get('regex', '')), REPLICA):
            return True
    return False


def am_targets(doc):
    alerting = doc.get('alerting') or {}
    return sorted(t for am in alerting.get('alertmanagers') or []
                  for sc in am.get('static_configs') or [] for t in sc.get('targets') or [])


def without_targets(job):
    return {k: v for k, v in job.items() if k != 'static_configs'}


def job_of(doc, name=JOB):
    return next((j for j in doc.get('scrape_configs') or [] if j.get('job_name') == name), None)


def check_prometheus(paths, docs, reference, errors):
    replicas = {}
    for path, doc in zip(paths, docs):
        ext = (doc.get('global') or {}).get('external_labels') or {}
        value = ext.get(REPLICA)
        if value in (None, ''):
            errors.append(f'{path}: global.external_labels.{REPLICA} is missing: each server of '
                          f'the pair needs its own value (for example {REPLICA}: a and '
                          f'{REPLICA}: b) to tell their copies apart')
        elif value in replicas:
            errors.append(f'{path}: global.external_labels.{REPLICA} = {value!r} is also the '
                          f'value of {replicas[value]}: each server needs its own')
        else:
            replicas[value] = path
        relabel = (doc.get('alerting') or {}).get('alert_relabel_configs')
        if not drops_replica(relabel):
            errors.append(f'{path}: alerting.alert_relabel_configs = {relabel!r} does not drop '
                          f'the label {REPLICA!r}: the alerts of the two servers then differ, '
                          f'Alertmanager takes them for two alerts and pages twice; expected '
                          f'- {{action: labeldrop, regex: {REPLICA}}}')
        if not am_targets(doc):
            errors.append(f'{path}: alerting.alertmanagers has no target: expected every '
                          'Alertmanager of the cluster')
        if job_of(doc) is None:
            errors.append(f'{path}: scrape_configs has no job {JOB!r}: expected the dpdktel job '
                          'of prometheus.yml')
    first, base = paths[0], docs[0]
    same = (('global.external_labels (but replica)', lambda d: {
                k: v for k, v in ((d.get('global') or {}).get('external_labels') or {}).items()
                if k != REPLICA}),
            ('global.evaluation_interval', lambda d: (d.get('global') or {}).get(
                'evaluation_interval')),
            ('rule_files', lambda d: d.get('rule_files')),
            ('scrape_configs', lambda d: d.get('scrape_configs')),
            ('alerting.alertmanagers targets', am_targets))
    for path, doc in zip(paths[1:], docs[1:]):
        for key, get in same:
            if get(doc) != get(base):
                errors.append(f'{path}: {key} = {get(doc)!r} differs from {first} '
                              f'({get(base)!r}): the servers of a pair must be the same')
    if reference is not None:
        ref = job_of(reference[1])
        for path, doc in zip(paths, docs):
            job = job_of(doc)
            if ref and job and without_targets(job) != without_targets(ref):
                errors.append(f'{path}: the {JOB} job differs from the one of {reference[0]} '
                              'in more than its targets: expected the same relabelling, '
                              'intervals and honor_* settings')


# -- Alertmanager ---------------------------------------------------------------------------

def check_node_address(node, errors):
    listen = node.listen
    if listen == '':
        errors.append(f'{node.path}: --cluster.listen-address = \'\' turns gossip off: the node '
                      'would page on its own; expected an IP address and port (10.0.0.1:9094)')
        return False
    host, port = split(listen)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        errors.append(f'{node.path}: --cluster.listen-address = {listen!r}: expected an IP '
                      'address and port (the gossip library binds to an address, not a name)')
        return False
    if not port.isdigit():
        errors.append(f'{node.path}: --cluster.listen-address = {listen!r}: expected a port')
        return False
    if ip.is_unspecified and not node.flag('--cluster.advertise-address'):
        errors.append(f'{node.path}: --cluster.listen-address = {listen!r} with no '
                      '--cluster.advertise-address: the node would guess the address its '
                      'peers reach it at; expected this node\'s own IP address')
        return False
    return True


def same_config(a, b):
    """The same path, or (both here) the same content."""
    if a == b:
        return True
    try:
        with open(a) as fa, open(b) as fb:
            return yaml.safe_load(fa) == yaml.safe_load(fb)
    except (OSError, TypeError, yaml.YAMLError):
        return False


def check_alertmanagers(nodes, prometheus_targets, errors):
    """prometheus_targets: [(path, [host:port])] of each Prometheus."""
    ok = [n for n in nodes if check_node_address(n, errors)]
    by_addr = {}
    for n in ok:
        if n.address in by_addr:
            errors.append(f'{n.path}: cluster address {n.address!r} is also the one of '
                          f'{by_addr[n.address].path}: each node needs its own')
        by_addr[n.address] = n
    resolved = {a: resolve(a) for a in by_addr}
    for n in ok:
        others = [m for m in ok if m is not n]
        if not n.peers:
            errors.append(f'{n.path}: no --cluster.peer: the node would not join the others; '
                          f'expected one flag for each of {[m.address for m in others]}')
        for peer in n.peers:
            match = [m for m in others if peer == m.address or
                     (resolve(peer) & resolved[m.address])]
            if not match:
                what = ('is the node itself' if peer == n.address else
                        'is no --cluster.listen-address (or advertise address) of the other '
                        'nodes, so nothing of the cluster answers there')
                errors.append(f'{n.path}: --cluster.peer = {peer!r} {what}; expected one of '
                              f'{[m.address for m in others]}')
        listed = {m.address for p in n.peers for m in others
                  if p == m.address or resolve(p) & resolved[m.address]}
        for m in others:
            if n.peers and m.address not in listed:
                errors.append(f'{n.path}: no --cluster.peer={m.address} ({m.path}): list every '
                              'other node, so that this one rejoins whichever is up')
        if not same_config(n.flag('--config.file'), nodes[0].flag('--config.file')):
            errors.append(f'{n.path}: --config.file = {n.flag("--config.file")!r} differs from '
                          f'the one of {nodes[0].path}: every node runs the same routing')
    for path, targets in prometheus_targets:
        for n in ok:
            if n.web not in targets:
                errors.append(f'{path}: alerting.alertmanagers targets = {targets!r} lack the '
                              f'Alertmanager of {n.path} ({n.web}): an alert must reach every '
                              'node')


def probe(nodes, timeout, errors):
    """Each --cluster.peer answers on TCP; each running node lists every node as a peer."""
    for n in nodes:
        for peer in n.peers:
            host, port = split(peer)
            try:
                with socket.create_connection((host, int(port)), timeout=timeout):
                    pass
            except (OSError, ValueError) as e:
                errors.append(f'{n.path}: --cluster.peer = {peer!r} does not answer '
                              f'({e.strerror or e}): start that node first, or fix the address')
    for n in nodes:
        url = f'http://{n.web}/api/v2/status'
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                cluster = json.load(r).get('cluster') or {}
        except (OSError, ValueError):
            continue  # not running (yet): its peers were asked above
        seen = len(cluster.get('peers') or [])
        if seen != len(nodes):
            errors.append(f'{n.path}: the Alertmanager at {n.web} sees {seen} node(s) of the '
                          f'cluster (status {cluster.get("status")!r}), expected {len(nodes)}')


def check_datasources(path, prometheus_docs, errors):
    doc = load_yaml(path, errors)
    if doc is None:
        return
    sources = [s for s in doc.get('datasources') or [] if s.get('type') == 'prometheus']
    uids = [s.get('uid') for s in sources]
    if len(sources) < 2 or len(set(uids)) != len(uids) or None in uids:
        errors.append(f'{path}: datasources = {uids!r}: expected one Prometheus data source '
                      'with a uid of its own for each server of the pair')
    job = job_of(prometheus_docs[0]) or {}
    interval = job.get('scrape_interval')
    for s in sources:
        got = (s.get('jsonData') or {}).get('timeInterval')
        if interval and got != interval:
            errors.append(f'{path}: {s.get("uid")}: jsonData.timeInterval = {got!r}: expected '
                          f'the scrape_interval of the {JOB} job, {interval!r}')


def check(prometheus, alertmanager, reference=None, datasources=None, do_probe=False,
          timeout=2.0, node_args=None):
    """Every problem found, as lines. node_args: {path: [words]} to use instead of reading
    those files' ARGS."""
    errors = []
    docs = [load_yaml(p, errors) for p in prometheus]
    ref = None
    if reference:
        ref_doc = load_yaml(reference, errors)
        ref = (reference, ref_doc) if ref_doc is not None else None
    nodes = []
    for p in alertmanager:
        try:
            nodes.append(Node(p, (node_args or {}).get(p)))
        except (OSError, ValueError) as e:
            errors.append(f'{p}: {e}')
    if len(prometheus) < 2 or len(alertmanager) < 2:
        errors.append(f'{len(prometheus)} Prometheus config(s) and {len(alertmanager)} '
                      'Alertmanager node(s): expected at least two of each')
    if errors:
        return errors
    check_prometheus(prometheus, docs, ref, errors)
    check_alertmanagers(nodes, [(p, am_targets(d)) for p, d in zip(prometheus, docs)], errors)
    if datasources:
        check_datasources(datasources, docs, errors)
    if do_probe and not errors:
        probe(nodes, timeout, errors)
    return errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--prometheus', nargs='+', default=DEFAULT_PROMETHEUS, metavar='YML')
    ap.add_argument('--alertmanager', nargs='+', default=DEFAULT_ALERTMANAGER,
                    metavar='DEFAULTS', help='each node\'s /etc/default/prometheus-alertmanager')
    ap.add_argument('--reference', default=DEFAULT_REFERENCE,
                    help='the single-server prometheus.yml whose dpdktel job the pair must have '
                    '("" for none)')
    ap.add_argument('--datasources', default=None,
                    help=f'a Grafana provisioning file for the pair (the example: '
                    f'{os.path.relpath(DEFAULT_DATASOURCES, os.path.dirname(HERE))})')
    ap.add_argument('--probe', action='store_true',
                    help='also connect to every peer, and ask running nodes for their peers')
    ap.add_argument('--timeout', type=float, default=2.0, help='seconds per probe')
    args = ap.parse_args(argv)
    errors = check(args.prometheus, args.alertmanager, args.reference or None,
                   args.datasources, args.probe, args.timeout)
    for e in errors:
        print(f'check_ha: {e}')
    if not errors:
        print(f'check_ha: {len(args.prometheus)} Prometheus servers and '
              f'{len(args.alertmanager)} Alertmanagers make one pair and one cluster'
              f'{", every peer answers" if args.probe else ""}')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
