"""The queries of our Grafana dashboards, as Grafana would send them to Prometheus."""
import json
import os
import re

from . import promql

SOURCE = os.path.abspath(os.environ.get('DTEL_SOURCE_DIR', os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')))

DASHBOARDS = [os.path.join(SOURCE, 'grafana', 'dashboards', f'dpdktel-{n}.json')
              for n in ('overview', 'port', 'lcores')]


def only(alerts, name):
    return [a for a in alerts if a['labels']['alertname'] == name]


def grafana_value(value, multi):
    """A variable's value as Grafana puts it into a Prometheus query: multi-value and
    include-all variables are regex-escaped (twice, for the PromQL string)."""
    return re.sub(r'([\\^$*+?.()|{}\[\]])', r'\\\\\1', value) if multi else value


def dashboard_queries(values):
    """Every (where, expr, instant) of the dashboards, and their variable queries, with
    the variables filled in as Grafana would."""
    queries, var_queries = [], []
    for path in DASHBOARDS:
        with open(path) as f:
            d = json.load(f)
        name = os.path.basename(path)
        vs = {v['name']: (v.get('multi') or v.get('includeAll')) for v in
              d['templating']['list'] if v['type'] == 'query'}
        subst = dict(values['grafana'])
        subst.update({k: grafana_value(values[k], multi) for k, multi in vs.items()})
        for v in d['templating']['list']:
            if v['type'] == 'query':
                m = re.fullmatch(r'label_values\((.*), (\w+)\)', v['query'])
                var_queries.append((f'{name} variable {v["name"]}',
                                    promql.substitute(m.group(1), subst), m.group(2),
                                    values[v['name']]))
        panels = [p for top in d['panels'] for p in [top] + top.get('panels', [])]
        for p in panels:
            for t in p.get('targets', []):
                queries.append((f'{name} panel {p["title"]!r} {t["refId"]}',
                                promql.substitute(t['expr'], subst), t.get('instant', False)))
        for a in d['annotations']['list']:
            if 'expr' in a:
                queries.append((f'{name} annotation {a["name"]!r}',
                                promql.substitute(a['expr'], subst), False))
    return queries, var_queries
