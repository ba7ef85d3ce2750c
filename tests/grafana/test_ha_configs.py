"""The highly available set of grafana/ (two Prometheus servers, an Alertmanager cluster of
two) and grafana/check_ha.py, which says what promtool and amtool accept but breaks the pair.

Each bad input is the shipped file with one thing changed. Where a tool of Prometheus or
Alertmanager could judge it, the test shows that it accepts it (promtool check config, or a
real Alertmanager that starts and runs alone) and that check_ha.py names the file, the key,
the value and what is expected.
"""
import json
import os
import socket
import subprocess
import urllib.request

import pytest
import yaml

from helpers.ha import NODES, PROMETHEUS, check_ha, free_gossip_port
from helpers.process import end, free_port
from helpers.wait import wait_until

SOURCE = os.path.abspath(os.environ.get('DTEL_SOURCE_DIR', os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '../..')))
REFERENCE = os.path.join(SOURCE, 'grafana', 'prometheus', 'prometheus.yml')
DATASOURCES = os.path.join(SOURCE, 'grafana', 'provisioning', 'datasources', 'dpdktel-ha.yaml')
RULES = os.path.join(SOURCE, 'grafana', 'prometheus', 'dpdktel.rules.yml')
ch = check_ha()


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


@pytest.fixture
def pair(tmp_path):
    """Copies of the shipped Prometheus configs (rules beside them) to spoil one by one."""
    paths = []
    for p in PROMETHEUS:
        dst = tmp_path / os.path.basename(p)
        dst.write_text(open(p).read())
        paths.append(str(dst))
    (tmp_path / 'dpdktel.rules.yml').write_text(open(RULES).read())
    return paths


def save(path, doc):
    with open(path, 'w') as f:
        yaml.safe_dump(doc, f, sort_keys=False)


def node_file(tmp_path, name, words):
    path = tmp_path / name
    path.write_text('ARGS="' + ' \\\n'.join(words) + '"\n')
    return str(path)


def errors(prom, nodes=NODES, **kw):
    return ch.check(prom, nodes, reference=REFERENCE, **kw)


def promtool_accepts(path):
    p = subprocess.run(['promtool', 'check', 'config', path], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr


def test_shipped_set_is_one_pair_and_one_cluster():
    assert errors(PROMETHEUS, datasources=DATASOURCES) == []
    # The two files differ in the replica label only; the job is prometheus.yml's.
    a, b = (load(p) for p in PROMETHEUS)
    assert a['global']['external_labels'] == {'replica': 'a'}
    b['global']['external_labels']['replica'] = 'a'
    assert a == b
    ref = ch.job_of(load(REFERENCE))
    assert ch.without_targets(ch.job_of(a)) == ch.without_targets(ref)


def test_replica_label_missing_from_one_server(pair):
    doc = load(pair[1])
    del doc['global']['external_labels']
    save(pair[1], doc)
    promtool_accepts(pair[1])
    assert errors(pair) == [
        f'{pair[1]}: global.external_labels.replica is missing: each server of the pair '
        'needs its own value (for example replica: a and replica: b) to tell their copies '
        'apart']


def test_both_servers_with_the_same_replica(pair):
    doc = load(pair[1])
    doc['global']['external_labels']['replica'] = 'a'
    save(pair[1], doc)
    promtool_accepts(pair[1])
    assert errors(pair) == [
        f"{pair[1]}: global.external_labels.replica = 'a' is also the value of {pair[0]}: "
        'each server needs its own']


def test_replica_sent_to_alertmanager(pair):
    doc = load(pair[0])
    del doc['alerting']['alert_relabel_configs']
    save(pair[0], doc)
    promtool_accepts(pair[0])
    (e,) = errors(pair)
    assert e.startswith(f"{pair[0]}: alerting.alert_relabel_configs = None does not drop the "
                        "label 'replica'"), e
    assert 'pages twice' in e and 'labeldrop' in e


def test_servers_that_differ(pair):
    doc = load(pair[1])
    doc['rule_files'] = []
    doc['alerting']['alertmanagers'][0]['static_configs'][0]['targets'].pop()
    save(pair[1], doc)
    got = errors(pair)
    assert [e.split(' = ')[0] for e in got[:2]] == [f'{pair[1]}: rule_files',
                                                   f'{pair[1]}: alerting.alertmanagers targets']
    # ... and the node it no longer sends to is named.
    assert got[2:] == [f"{pair[1]}: alerting.alertmanagers targets = ['192.0.2.11:9093'] lack "
                       f'the Alertmanager of {NODES[1]} (192.0.2.12:9093): an alert must reach '
                       'every node']


def test_job_that_is_not_the_shipped_one(pair):
    for p in pair:
        doc = load(p)
        doc['scrape_configs'][0]['honor_timestamps'] = True
        save(p, doc)
    got = errors(pair)
    assert got == [f'{p}: the dpdktel job differs from the one of {REFERENCE} in more than its '
                   'targets: expected the same relabelling, intervals and honor_* settings'
                   for p in pair]


def test_peer_that_is_no_node(tmp_path):
    """A typo in a peer's port: amtool has nothing to say (peers are not in the config file)
    and a real Alertmanager starts with it, alone; check_ha.py names it."""
    words = ch.read_args(NODES[0])
    bad = [w.replace('--cluster.peer=192.0.2.12:9094', '--cluster.peer=192.0.2.12:9049')
           for w in words]
    nodes = [node_file(tmp_path, 'mon-a', bad), NODES[1]]
    assert errors(PROMETHEUS, nodes) == [
        f"{nodes[0]}: --cluster.peer = '192.0.2.12:9049' is no --cluster.listen-address (or "
        "advertise address) of the other nodes, so nothing of the cluster answers there; "
        "expected one of ['192.0.2.12:9094']",
        f'{nodes[0]}: no --cluster.peer=192.0.2.12:9094 ({NODES[1]}): list every other node, '
        'so that this one rejoins whichever is up']
    # What Alertmanager does with a peer where nothing answers: it runs, alone.
    web, gossip, dead = free_port(), free_gossip_port(), free_gossip_port()
    log = tmp_path / 'alertmanager.log'
    with open(log, 'w') as out:
        p = subprocess.Popen(['prometheus-alertmanager',
                              f'--config.file={SOURCE}/grafana/alertmanager/alertmanager.yml',
                              f'--storage.path={tmp_path}/data',
                              f'--web.listen-address=127.0.0.1:{web}',
                              f'--cluster.listen-address=127.0.0.1:{gossip}',
                              f'--cluster.peer=127.0.0.1:{dead}'],
                             stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: urlopen_status(web), 30, 'Alertmanager answering')
        assert p.poll() is None
    finally:
        end(p)
    assert 'unable to join gossip mesh' in log.read_text()


def urlopen_status(port):
    with urllib.request.urlopen(f'http://127.0.0.1:{port}/api/v2/status', timeout=2) as r:
        return json.load(r)['cluster']


def test_peer_that_does_not_answer(tmp_path):
    """A well-formed cluster whose peer is not running: --probe says so, before the node
    that needs it starts."""
    a, b = free_gossip_port(), free_gossip_port()
    nodes = [node_file(tmp_path, 'mon-a', ['--config.file=/etc/prometheus/alertmanager.yml',
                                           f'--cluster.listen-address=127.0.0.1:{a}',
                                           f'--cluster.peer=127.0.0.1:{b}']),
             node_file(tmp_path, 'mon-b', ['--config.file=/etc/prometheus/alertmanager.yml',
                                           f'--cluster.listen-address=127.0.0.1:{b}',
                                           f'--cluster.peer=127.0.0.1:{a}'])]
    got = []
    ch.probe([ch.Node(n) for n in nodes], 1.0, got)
    assert got == [f"{nodes[0]}: --cluster.peer = '127.0.0.1:{b}' does not answer (Connection "
                   'refused): start that node first, or fix the address',
                   f"{nodes[1]}: --cluster.peer = '127.0.0.1:{a}' does not answer (Connection "
                   'refused): start that node first, or fix the address']
    # Something listening there answers.
    with socket.socket() as s:
        s.bind(('127.0.0.1', b))
        s.listen()
        got = []
        ch.probe([ch.Node(nodes[0])], 1.0, got)
        assert got == []


@pytest.mark.parametrize('listen, expected', [
    ('', "--cluster.listen-address = '' turns gossip off: the node would page on its own"),
    ('mon-a.example.org:9094', "--cluster.listen-address = 'mon-a.example.org:9094': expected "
     'an IP address and port'),
    ('0.0.0.0:9094', "--cluster.listen-address = '0.0.0.0:9094' with no "
     '--cluster.advertise-address'),
])
def test_listen_addresses_that_break_the_cluster(tmp_path, listen, expected):
    words = [w if not w.startswith('--cluster.listen-address=') else
             f'--cluster.listen-address={listen}' for w in ch.read_args(NODES[0])]
    nodes = [node_file(tmp_path, 'mon-a', words), NODES[1]]
    got = errors(PROMETHEUS, nodes)
    assert any(e.startswith(f'{nodes[0]}: {expected}') for e in got), got


def test_command_line_names_each_problem(pair):
    doc = load(pair[1])
    del doc['global']['external_labels']
    save(pair[1], doc)
    p = subprocess.run(['/usr/bin/python3', os.path.join(SOURCE, 'grafana', 'check_ha.py'),
                        '--prometheus'] + pair, capture_output=True, text=True, timeout=30)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith(f'check_ha: {pair[1]}: global.external_labels.replica is '
                               'missing'), p.stdout
    ok = subprocess.run(['/usr/bin/python3', os.path.join(SOURCE, 'grafana', 'check_ha.py'),
                         '--datasources', DATASOURCES], capture_output=True, text=True,
                        timeout=30)
    assert ok.returncode == 0 and ok.stdout == (
        'check_ha: 2 Prometheus servers and 2 Alertmanagers make one pair and one cluster\n')
