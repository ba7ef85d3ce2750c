"""Debian's Alertmanager for tests, fed by our example config, and a webhook receiver.

The configuration is grafana/alertmanager/alertmanager.yml itself: its routing tree (matchers,
group_by, repeat_interval, continue) and inhibit_rules are kept as they are; only every
receiver is pointed at a webhook on loopback and the tree's group_wait/group_interval are
shortened, so a test sees in seconds what users get in minutes. Gossip is off (no cluster
port) unless the node is one of a cluster (cluster_args, helpers/ha.py). The process is ended
by PID and its directory removed (helpers/process.py Daemon).

    with Webhook() as hook, Alertmanager(hook.url) as am:
        am.post([{'labels': {...}}])
        hook.wait_for(lambda n: ..., 10, 'a notification')
"""
import copy
import datetime
import http.server
import json
import os
import tempfile
import threading
import time
import urllib.request

import yaml

from .process import WebDaemon

SOURCE = os.environ.get('DTEL_SOURCE_DIR',
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../..'))
CONFIG = os.path.join(os.path.abspath(SOURCE), 'grafana', 'alertmanager', 'alertmanager.yml')
BINARY = '/usr/bin/prometheus-alertmanager'


def load_example(path=CONFIG):
    with open(path) as f:
        return yaml.safe_load(f)


def delivery_config(webhook_url, group_wait='1s', group_interval='2s', path=CONFIG):
    """The example config with every receiver that delivers a webhook to webhook_url (the receiver's name
    appended as a path, so the test sees which receiver got what) and short timings (None:
    the example's own)."""
    doc = copy.deepcopy(load_example(path))

    def shorten(route):
        for key, value in (('group_wait', group_wait), ('group_interval', group_interval)):
            if key in route and value is not None:
                route[key] = value
        for r in route.get('routes', []):
            shorten(r)
    shorten(doc['route'])
    # A receiver without any *_configs delivers nothing, and stays so.
    doc['receivers'] = [{'name': r['name'],
                         'webhook_configs': [{'url': f'{webhook_url}/{r["name"]}',
                                              'send_resolved': True}]}
                        if set(r) != {'name'} else r for r in doc['receivers']]
    doc['global'] = {k: v for k, v in doc.get('global', {}).items() if not k.startswith('smtp_')}
    return doc


class Webhook:
    """An HTTP server on 127.0.0.1 that records every POST: notifications as
    (monotonic time, receiver name, payload)."""

    def __init__(self):
        self.notifications = []
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                with hook.lock:
                    hook.notifications.append((time.monotonic(), self.path.strip('/'),
                                               json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server.server_address[1]}'

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def received(self, receiver=None):
        """[(t, receiver, payload)], in the order they came."""
        with self.lock:
            return [n for n in self.notifications if receiver is None or n[1] == receiver]

    def alerts(self, receiver=None, since=0.0):
        """Every alert of every notification: [(t, receiver, status, labels, annotations)]."""
        return [(t, r, a['status'], a['labels'], a['annotations'])
                for t, r, p in self.received(receiver) if t >= since for a in p['alerts']]


def matches(labels, want):
    return all(labels.get(k) == v for k, v in want.items())


class Alertmanager(WebDaemon):
    def __init__(self, webhook_url=None, config=None, binary=BINARY, cluster_args=(),
                 log_level='warn', **timings):
        """config: a config dict; default: delivery_config(webhook_url, **timings).
        cluster_args: the --cluster.* flags of a node of a cluster (helpers/ha.py); none:
        gossip off. log_level debug: each flush of a group and each notification sent."""
        self.cluster_args = list(cluster_args)
        self.log_level = log_level
        self.dir = tempfile.mkdtemp(prefix='dtel-alertmanager-')
        self.config = config if config is not None else delivery_config(webhook_url, **timings)
        self.config_path = os.path.join(self.dir, 'alertmanager.yml')
        with open(self.config_path, 'w') as f:
            yaml.safe_dump(self.config, f, sort_keys=False)
        self.log_path = os.path.join(self.dir, 'alertmanager.log')
        self.binary = binary
        self.proc = None
        self.port = None

    name = 'alertmanager'

    def args(self, port):
        """Its command line but the program: what ARGS= of its /etc/default file would say."""
        return [f'--config.file={self.config_path}',
                f'--storage.path={os.path.join(self.dir, "data")}',
                f'--web.listen-address=127.0.0.1:{port}'] + (
                    self.cluster_args or ['--cluster.listen-address=']) + [
                        f'--log.level={self.log_level}']

    def argv(self, port):
        return [self.binary] + self.args(port)

    def _request(self, path, data=None):
        req = urllib.request.Request(self.url + '/api/v2/' + path, method='POST' if data
                                     is not None else 'GET',
                                     data=None if data is None else json.dumps(data).encode(),
                                     headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body else None

    def post(self, alerts):
        """Send alerts as Prometheus does ({labels, annotations}; startsAt now by default)."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat()
        self._request('alerts', [dict({'startsAt': now, 'annotations': {}}, **a)
                                 for a in alerts])

    def alerts(self):
        """GET /api/v2/alerts: every alert it has, with status.state (active, suppressed)
        and status.inhibitedBy."""
        return self._request('alerts')

    def alert(self, **labels):
        found = [a for a in self.alerts() if matches(a['labels'], labels)]
        return found[0] if len(found) == 1 else None

    def status(self):
        """GET /api/v2/status: its cluster as {name, status (ready, settling), peers}."""
        return self._request('status')

    def prometheus_config(self):
        """The `alerting` section for a Prometheus that sends here."""
        return {'alertmanagers': [{'static_configs': [{'targets': [f'127.0.0.1:{self.port}']}]}]}


def send_alerts_to(prom, am):
    """Add an `alerting` section pointing at `am` to a Prometheus (helpers/prom.py) that has
    not been started yet."""
    with open(prom.config_path) as f:
        doc = yaml.safe_load(f)
    doc['alerting'] = am.prometheus_config()
    with open(prom.config_path, 'w') as f:
        yaml.safe_dump(doc, f, sort_keys=False)
