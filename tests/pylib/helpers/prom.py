"""Debian's Prometheus for tests: on 127.0.0.1 with a free port, a temporary TSDB, our rules.

The scrape job is the `dpdktel` job of grafana/prometheus/prometheus.yml itself (relabelling,
honor_labels, honor_timestamps); only its targets and intervals are replaced, so a test
checks what users paste. Intervals default to 1 s so rules fire within seconds of their
`for:`. The process is ended by PID and its directory removed (helpers/process.py Daemon).

    with Prometheus(['127.0.0.1:9103']) as prom:
        prom.wait_for_target()
        prom.query('collectd_dpdktel_events_link_status == 0')
        prom.alerts()
"""
import copy
import json
import os
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

from .netns import exec_prefix, run_in
from .process import WebDaemon
from .wait import wait_until

SOURCE = os.environ.get('DTEL_SOURCE_DIR',
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../..'))
PROM_DIR = os.path.join(os.path.abspath(SOURCE), 'grafana', 'prometheus')
CONFIG = os.path.join(PROM_DIR, 'prometheus.yml')
RULES = os.path.join(PROM_DIR, 'dpdktel.rules.yml')
JOB = 'dpdktel'


def scrape_job(targets, scrape_interval='1s', config=CONFIG):
    """The dpdktel job of prometheus.yml, scraping `targets` ('host:port')."""
    with open(config) as f:
        doc = yaml.safe_load(f)
    job = copy.deepcopy(next(j for j in doc['scrape_configs'] if j['job_name'] == JOB))
    job['static_configs'] = [{'targets': list(targets)}]
    job['scrape_interval'] = scrape_interval
    job['scrape_timeout'] = scrape_interval  # may not exceed the interval
    return job


def make_config(targets, scrape_interval='1s', evaluation_interval='1s', rule_files=(RULES,)):
    return {
        'global': {'scrape_interval': scrape_interval,
                   'evaluation_interval': evaluation_interval},
        'rule_files': [os.path.abspath(r) for r in rule_files],
        'scrape_configs': [scrape_job(targets, scrape_interval)],
    }


class PrometheusError(AssertionError):
    pass


class Prometheus(WebDaemon):
    def __init__(self, targets, scrape_interval='1s', evaluation_interval='1s',
                 rule_files=(RULES,), binary='prometheus', netns=None, config=None):
        """config: a whole configuration (dict) instead of make_config()'s (helpers/ha.py)."""
        self.netns = netns  # run inside this network namespace (helpers/netns.py)
        self.dir = tempfile.mkdtemp(prefix='dtel-prometheus-')
        self.config_path = os.path.join(self.dir, 'prometheus.yml')
        if config is None:
            config = make_config(targets, scrape_interval, evaluation_interval, rule_files)
        with open(self.config_path, 'w') as f:
            yaml.safe_dump(config, f, sort_keys=False)
        self.log_path = os.path.join(self.dir, 'prometheus.log')
        self.binary = binary
        self.proc = None
        self.port = None

    name = 'prometheus'

    def argv(self, port):
        return exec_prefix(self.netns) + [
            self.binary, f'--config.file={self.config_path}',
            f'--storage.tsdb.path={os.path.join(self.dir, "data")}',
            f'--web.listen-address=127.0.0.1:{port}', '--log.level=warn']

    def _ready_or_exited(self):
        if self.proc.poll() is not None:
            return 'exited'
        return run_in(self.netns, self._ready)

    def api(self, path, **params):
        """GET /api/v1/<path>; the `data` of a successful reply."""
        query = urllib.parse.urlencode(params, doseq=True)
        reply = run_in(self.netns, self._get, f'{self.url}/api/v1/{path}?{query}')
        if reply.get('status') != 'success':
            raise PrometheusError(f'{path} {params}: {reply}')
        return reply['data']

    @staticmethod
    def _get(url):
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)

    def query(self, expr, at=None):
        """Instant query: the list of {metric, value}."""
        params = {'query': expr}
        if at is not None:
            params['time'] = at
        return self.api('query', **params)['result']

    def query_range(self, expr, start, end=None, step=1):
        """Range query: the list of {metric, values}."""
        return self.api('query_range', query=expr, start=start, end=end or time.time(),
                        step=step)['result']

    def series(self, match, start=None, end=None):
        params = {'match[]': match}
        if start is not None:
            params.update(start=start, end=end or time.time())
        return self.api('series', **params)

    def label_values(self, label, match, start=None, end=None):
        """What Grafana's label_values(match, label) lists."""
        return sorted({s[label] for s in self.series(match, start, end) if label in s})

    def alerts(self):
        """Active alerts (pending and firing): [{labels, annotations, state, ...}]."""
        return self.api('alerts')['alerts']

    def firing(self, alertname=None):
        return [a for a in self.alerts() if a['state'] == 'firing' and
                (alertname is None or a['labels']['alertname'] == alertname)]

    def wait_for_target(self, timeout=30):
        """Until the scrape job's every target is up."""
        def up():
            ts = self.api('targets')['activeTargets']
            return ts and all(t['health'] == 'up' for t in ts)
        return wait_until(up, timeout, f'{JOB} targets up in {self.url}/targets')
