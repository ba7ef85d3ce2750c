"""The overview dashboard's instance health queries give each instance state its own value.

The panels "Instances down", "Instances not responding" and "Instance state" of the
generated dpdktel-overview.json are evaluated by `promtool test rules` (promql_expr_test)
over one instance of each kind, with the dashboard's variables on "All" (`.+`, as Grafana
sends an include-all variable). The series are those dpdktel_events and dpdktel_stats
dispatch (docs/metrics.md): a hung application has up 0 and not_responding 1 (dpdktel_events
sets both at the same poll), a gone one up 0 and not_responding 0, and an instance that only
dpdktel_stats watches has no not_responding series at all.
"""
import json
import os
import shutil
import subprocess

import pytest
import yaml

from helpers import promql

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

OVERVIEW = os.path.join(ROOT, 'grafana', 'dashboards', 'dpdktel-overview.json')
ALL = {'instance': '.+', 'dpdk_instance': '.+'}


def labels(dpdk_instance):
    return f'job="dpdktel",instance="hostA",dpdk_instance="{dpdk_instance}"'


# instance -> (events up, events not_responding, stats up); None: no such series.
STATES = {'fine': (1, 0, 1), 'gone': (0, 0, 0), 'hung': (0, 1, 0), 'statsonly': (None, None, 1)}
SERIES = [(f'collectd_dpdktel_{metric}{{{labels(name)}}}', f'{value}x6')
          for name, values in STATES.items()
          for metric, value in zip(('events_up', 'events_not_responding', 'stats_up'), values)
          if value is not None]


def panel_expr(title):
    with open(OVERVIEW) as f:
        d = json.load(f)
    panels = [p for top in d['panels'] for p in [top] + top.get('panels', [])]
    (p,) = [p for p in panels if p['title'] == title]
    (t,) = p['targets']
    return promql.substitute(t['expr'], ALL)


def run_promtool(tmp_path, exprs):
    """exprs: [(expr, [(labels, value)])]; promtool's output when a value differs."""
    promtool = shutil.which('promtool')
    if not promtool:
        pytest.skip('promtool not installed (Debian package prometheus)')
    (tmp_path / 'none.rules.yml').write_text('groups: []\n')
    test = {'rule_files': ['none.rules.yml'], 'evaluation_interval': '10s',
            'tests': [{'interval': '10s',
                       'input_series': [{'series': s, 'values': v} for s, v in SERIES],
                       'promql_expr_test': [
                           {'expr': e, 'eval_time': '30s',
                            'exp_samples': [{'labels': lb, 'value': v} for lb, v in samples]}
                           for e, samples in exprs]}]}
    path = tmp_path / 'overview.test.yml'
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    r = subprocess.run([promtool, 'test', 'rules', str(path)], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_down_and_not_responding_are_counted_apart(tmp_path):
    rc, out = run_promtool(tmp_path, [
        (panel_expr('Instances down'), [('{}', 1)]),  # gone only
        (panel_expr('Instances not responding'), [('{}', 1)]),  # hung only
        (panel_expr('Instances up'), [('{}', 2)]),  # fine and statsonly
    ])
    assert rc == 0, out


def test_instance_state_maps_each_state(tmp_path):
    want = [(f'{{{labels("fine")}}}', 1), (f'{{{labels("gone")}}}', 0),
            (f'{{{labels("hung")}}}', 2),
            # the `or` fallback keeps the name of the series it takes (legends ignore it)
            (f'collectd_dpdktel_stats_up{{{labels("statsonly")}}}', 1)]
    rc, out = run_promtool(tmp_path, [(panel_expr('Instance state'), want)])
    assert rc == 0, out
    with open(OVERVIEW) as f:
        d = json.load(f)
    (p,) = [p for top in d['panels'] for p in [top] + top.get('panels', [])
            if p['title'] == 'Instance state']
    texts = {k: o['text'] for m in p['fieldConfig']['defaults']['mappings']
             for k, o in m['options'].items()}
    assert texts == {'0': 'DOWN', '1': 'UP', '2': 'NOT RESPONDING'}
