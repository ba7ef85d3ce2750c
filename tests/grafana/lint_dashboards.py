#!/usr/bin/python3
"""Structural lint of the dpdktel Grafana dashboards, their PromQL and the alert rules.

Grafana is not in Debian, so this is what stands for "the dashboards load and make sense":
the conventions of docs/grafana.md (after grafana/dashboard-linter's rules), every query
parsed by promtool with Grafana's variables replaced by sample values, and every metric name
checked against docs/metrics.md. Each problem is one line `file: where: [check] message`;
the exit status is 1 when there is any.

    lint_dashboards.py --metrics docs/metrics.md --rules grafana/prometheus/dpdktel.rules.yml \
        [--provisioning grafana/provisioning \
         --prometheus-config grafana/prometheus/prometheus.yml] grafana/dashboards/*.json
"""
import argparse
import json
import os
import re
import sys

import yaml

# The shared test helpers (tests/pylib/helpers/__init__.py), for runs without meson.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from helpers import metricsdoc, promql  # noqa: E402

DS_REF = {'type': 'prometheus', 'uid': '${datasource}'}
BUILTIN_ANNOTATION_DS = {'type': 'grafana', 'uid': '-- Grafana --'}
SCHEMA_VERSIONS = range(39, 43)
# Series Prometheus makes itself, not collectd: the alert state and the scrape's health.
BUILTIN_METRICS = {'ALERTS', 'up'}
# Labels the scrape job and the rules produce (prometheus.yml, dpdktel.rules.yml).
KNOWN_LABELS = {'instance', 'dpdk_instance', 'port', 'lcore', 'type', 'job', 'alertname',
                'alertstate', 'severity', '__name__',
                # made by the recording rules: a drop's reason, an lcore's rx queue
                'reason', 'queue'}
# The variable each scope's label is filtered by, in chain order.
CHAIN = ['instance', 'dpdk_instance']
SCOPE_VARIABLE = {'port': 'port', 'lcore': 'lcore'}
# Unit ids from Grafana's valueFormats (the ones a dashboard of ours might use).
KNOWN_UNITS = {
    'none', 'short', 'percent', 'percentunit', 'bool', 'bool_on_off', 'bool_yes_no',
    'bytes', 'decbytes', 'bits', 'decbits', 'kbytes', 'mbytes', 'gbytes',
    'pps', 'bps', 'Bps', 'binBps', 'binbps', 'Kbits', 'Mbits', 'Gbits', 'KBs', 'MBs', 'GBs',
    'cps', 'ops', 'reqps', 'rps', 'wps', 'iops',
    'ns', 'µs', 'ms', 's', 'm', 'h', 'd', 'dtdurations', 'dtdurationms', 'dateTimeAsIso',
    'hertz', 'counts', 'hex', 'hex0x', 'string',
}
PANEL_KINDS_WITHOUT_DATA = {'row', 'text', 'news', 'dashlist', 'alertlist'}


class Linter:
    def __init__(self, metrics_doc, rules_file, promtool='promtool'):
        self.errors = []
        self.promtool = promtool
        rows = metricsdoc.parse(metrics_doc)
        self.scopes = metricsdoc.metric_scopes(rows)
        self.rules_file = rules_file
        with open(rules_file) as f:
            self.rules = yaml.safe_load(f)
        self.recorded = {r['record'] for g in self.rules['groups'] for r in g['rules']
                         if 'record' in r}
        for name in self.recorded:
            m = re.match(r'dpdktel:(port|lcore|instance)_', name)
            self.scopes[name] = m.group(1) if m else 'instance'
        self.syntax_queue = []  # (file, where, expr) for one promtool run

    def error(self, path, where, check, msg):
        self.errors.append((os.path.basename(path), where, check, msg))

    # -- PromQL, shared by dashboards and rules -----------------------------------------

    def check_expr(self, path, where, expr, variables=None, series_only=False):
        """variables: {name: multi?} of the dashboard, or None for rule expressions.
        series_only: the selector of a label_values() variable query, which lists series
        and reads no value, so the counter and matcher-chain checks do not apply."""
        try:
            a = promql.analyse(expr)
        except promql.LexError as e:
            self.error(path, where, 'promql', f'cannot read {expr!r}: {e}')
            return
        self.syntax_queue.append((path, where, promql.substitute(expr)))
        for name in sorted(promql.metric_names(a)):
            if name.startswith(('=~', '!~', '!=')):
                self.error(path, where, 'metric', f'__name__{name}: name metrics explicitly so '
                           'they can be checked against docs/metrics.md')
            elif name not in self.scopes and name not in BUILTIN_METRICS:
                self.error(path, where, 'metric', f'{name} is not in docs/metrics.md nor '
                           f'recorded by {os.path.basename(self.rules_file)}')
        labels = [l for s in a.selectors for (l, _, _) in s.matchers] + a.grouping_labels
        # label_replace() in the same expression makes its own (the info values' names).
        for label in sorted(set(labels) - KNOWN_LABELS - set(a.created_labels)):
            self.error(path, where, 'label', f'label {label!r} is not one the scrape job or '
                       f'the rules produce ({", ".join(sorted(KNOWN_LABELS))})')
        for s in a.selectors:
            if variables is not None:
                self.check_matcher_ops(path, where, s, variables)
            if series_only:
                continue
            if s.name.endswith('_total') and not (s.function in ('rate', 'irate', 'increase')
                                                  and s.range and ':' not in s.range):
                self.error(path, where, 'counter', f'{s.name} is a counter: use it only '
                           'directly inside rate(), irate() or increase() over a range')
            if variables is not None:
                self.check_dashboard_selector(path, where, s, variables)

    def check_dashboard_selector(self, path, where, s, variables):
        if s.function in ('rate', 'irate') and s.range != '$__rate_interval':
            self.error(path, where, 'rate-interval',
                       f'{s.function}({s.name}[{s.range}]): use [$__rate_interval]')
        if s.function == 'increase' and s.range not in ('$__rate_interval', '$__range'):
            self.error(path, where, 'rate-interval',
                       f'increase({s.name}[{s.range}]): use [$__rate_interval] or [$__range]')
        needed = ['instance'] if s.name == 'ALERTS' else list(CHAIN)
        scope = self.scopes.get(s.name)
        for label, var in SCOPE_VARIABLE.items():
            if scope == label and var in variables:
                needed.append(var)
        for var in needed:
            ms = s.matcher(var)
            if not any(v in (f'${var}', f'${{{var}}}') for _, v in ms):
                self.error(path, where, 'matchers',
                           f'{s.name or "selector"}: no {var} matcher on ${var}')

    def check_matcher_ops(self, path, where, s, variables):
        """=~ for a multi-value variable (Grafana joins its values into a regex), = for a
        single one (a dot in an instance name must not match any character)."""
        for label, op, value in s.matchers:
            m = re.fullmatch(r'\$\{?(\w+)\}?', value)
            if not m or m.group(1) not in variables:
                continue
            want = '=~' if variables[m.group(1)] else '='
            if op != want:
                self.error(path, where, 'matchers', f'{label}{op}"{value}": ${m.group(1)} is '
                           f'{"multi-value" if want == "=~" else "single-value"}, use {want}')

    def flush_syntax(self):
        """One promtool run for every queued expression; messages name the expression."""
        by_where = {}
        exprs = []
        for n, (path, where, expr) in enumerate(self.syntax_queue):
            key = f'e{n}'
            by_where[key] = (path, where)
            exprs.append((key, expr))
        for line in promql.check_syntax(exprs, self.promtool):
            m = re.search(r'group "(e\d+)"', line)
            path, where = by_where.get(m.group(1), ('promtool', '')) if m else ('promtool', '')
            self.error(path, where, 'promql', line)
        self.syntax_queue = []

    # -- rules -----------------------------------------------------------------------------

    def lint_rules(self):
        for g in self.rules['groups']:
            for r in g['rules']:
                name = r.get('alert') or r.get('record')
                self.check_expr(self.rules_file, f'rule {name}', r['expr'])

    # -- dashboards ------------------------------------------------------------------------

    def lint_dashboard(self, path, uids):
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            self.error(path, '', 'json', str(e))
            return
        stem = os.path.splitext(os.path.basename(path))[0]
        uid = d.get('uid')
        if not isinstance(uid, str) or not re.fullmatch(r'[A-Za-z0-9_-]{1,40}', uid):
            self.error(path, '', 'uid', f'uid {uid!r}: a fixed uid of at most 40 [A-Za-z0-9_-]')
        elif uid != stem:
            self.error(path, '', 'uid', f'uid {uid!r} differs from the file name {stem!r}')
        if 'id' not in d or d['id'] is not None:
            self.error(path, '', 'id', f'id must be null in a file (is {d.get("id", "missing")!r})')
        if d.get('schemaVersion') not in SCHEMA_VERSIONS:
            self.error(path, '', 'schema', f'schemaVersion {d.get("schemaVersion")!r}: use '
                       f'{SCHEMA_VERSIONS.start}-{SCHEMA_VERSIONS.stop - 1}')
        if 'dpdktel' not in d.get('tags', []):
            self.error(path, '', 'tags', 'tag "dpdktel" missing (the dashboard links use it)')
        if d.get('editable') is not False:
            self.error(path, '', 'editable', 'editable must be false (provisioned dashboards)')
        if not d.get('title') or not d.get('description'):
            self.error(path, '', 'title', 'dashboard title and description are required')
        self.lint_links(path, d, uids)
        self.lint_datasource_refs(path, d)
        variables = self.lint_variables(path, d)
        self.lint_panels(path, d, variables)
        self.lint_annotations(path, d, variables)

    def lint_links(self, path, d, uids):
        if not any(l.get('type') == 'dashboards' and 'dpdktel' in l.get('tags', []) and
                   l.get('includeVars') and l.get('keepTime') for l in d.get('links', [])):
            self.error(path, '', 'links', 'no dashboards link by tag "dpdktel" with includeVars '
                       'and keepTime (the cross-links between the dpdktel dashboards)')
        for url in re.findall(r'"url":\s*"([^"]*)"', json.dumps(d)):
            m = re.match(r'/d/([^/?]+)', url)
            if m and m.group(1) not in uids:
                self.error(path, '', 'links', f'link to unknown dashboard uid {m.group(1)!r}')

    def lint_datasource_refs(self, path, d):
        text = json.dumps(d)
        if '__inputs' in d or '${DS_' in text:
            self.error(path, '', 'datasource-ref', '__inputs/${DS_...} are resolved only by the '
                       'import dialog: use the datasource variable')

        def walk(node, where):
            if isinstance(node, dict):
                ds = node.get('datasource')
                if 'datasource' in node and node.get('type') != 'datasource':
                    if ds == BUILTIN_ANNOTATION_DS and node.get('builtIn') == 1:
                        pass
                    elif ds != DS_REF:
                        self.error(path, where, 'datasource-ref',
                                   f'datasource {ds!r}: use {json.dumps(DS_REF)}')
                for k, v in node.items():
                    walk(v, f'{where}/{node.get("title") or node.get("name") or k}'
                         if k in ('panels', 'targets', 'list') else where)
            elif isinstance(node, list):
                for item in node:
                    walk(item, where)

        walk(d, '')

    def lint_variables(self, path, d):
        """Returns {name: multi?} of the dashboard's variables."""
        vs = d.get('templating', {}).get('list', [])
        ds_vars = [v for v in vs if v.get('type') == 'datasource']
        if (len(ds_vars) != 1 or ds_vars[0].get('name') != 'datasource' or
                ds_vars[0].get('query') != 'prometheus' or
                ds_vars[0].get('label') != 'Data source'):
            self.error(path, 'variables', 'datasource-var', 'exactly one datasource variable, '
                       'name "datasource", label "Data source", query "prometheus"')
        names = [v.get('name') for v in vs]
        order = ['datasource'] + CHAIN
        if names[:3] != order:
            self.error(path, 'variables', 'variables',
                       f'variables start {names[:3]}: must be {order} (host -> DPDK instance)')
        variables = {}
        defined = []
        for v in vs:
            name = v.get('name')
            where = f'variable {name}'
            if v.get('type') == 'query':
                q = v.get('query')
                q = q.get('query') if isinstance(q, dict) else q
                m = re.fullmatch(r'\s*label_values\((.*),\s*(\w+)\s*\)\s*', q or '')
                if not m or m.group(2) != name:
                    self.error(path, where, 'variables', f'query {q!r}: use '
                               f'label_values(<selector>, {name})')
                else:
                    self.check_expr(path, where, m.group(1), dict(variables),
                                    series_only=True)
                    used = set(re.findall(r'\$\{?(\w+)', m.group(1)))
                    chain = names[names.index('dpdk_instance') + 1:] if 'dpdk_instance' in names \
                        else []
                    want = set(CHAIN[:CHAIN.index(name)]) if name in CHAIN else \
                        set(CHAIN) if name in chain else set()
                    if want - used:
                        self.error(path, where, 'variables', f'query does not use '
                                   f'{", ".join("$" + w for w in sorted(want - used))}: '
                                   'variables are chained host -> dpdk_instance -> port/lcore')
                    if used - set(defined):
                        self.error(path, where, 'variables', f'uses {sorted(used - set(defined))} '
                                   'before they are defined')
                if v.get('datasource') != DS_REF:
                    self.error(path, where, 'datasource-ref', 'variable query not on $datasource')
                if v.get('refresh') != 2:
                    self.error(path, where, 'variables', 'refresh must be 2 (on time range change)')
                if v.get('multi') or v.get('includeAll'):
                    if not (v.get('includeAll') and v.get('allValue') == '.+'):
                        self.error(path, where, 'variables', 'multi-value: includeAll with '
                                   'allValue ".+"')
                variables[name] = bool(v.get('multi') or v.get('includeAll'))
            defined.append(name)
        return variables

    def panels(self, d):
        for p in d.get('panels', []):
            yield p
            yield from p.get('panels', [])

    def lint_panels(self, path, d, variables):
        ids = set()
        for p in self.panels(d):
            where = f'panel {p.get("title") or p.get("id")!r}'
            pid = p.get('id')
            if pid in ids or not isinstance(pid, int):
                self.error(path, where, 'panel-id', f'panel id {pid!r} missing or repeated')
            ids.add(pid)
            if 'gridPos' not in p:
                self.error(path, where, 'panel-grid', 'no gridPos')
            if not p.get('title'):
                self.error(path, where, 'panel-title', 'no title')
            if p.get('type') in PANEL_KINDS_WITHOUT_DATA:
                continue
            if not p.get('description'):
                self.error(path, where, 'panel-description', 'no description')
            unit = p.get('fieldConfig', {}).get('defaults', {}).get('unit')
            if unit not in KNOWN_UNITS:
                self.error(path, where, 'panel-unit', f'unit {unit!r} is not a Grafana unit id '
                           'we know (fieldConfig.defaults.unit)')
            tgts = [t for t in p.get('targets', []) if t.get('expr', '').strip()]
            if not tgts:
                self.error(path, where, 'panel-targets', 'no query')
            for t in tgts:
                self.check_expr(path, f'{where} target {t.get("refId")}', t['expr'], variables)

    def lint_annotations(self, path, d, variables):
        for a in d.get('annotations', {}).get('list', []):
            if a.get('builtIn') == 1:
                continue
            expr = a.get('expr') or a.get('target', {}).get('expr')
            where = f'annotation {a.get("name")!r}'
            if not expr:
                self.error(path, where, 'panel-targets', 'annotation without a query')
                continue
            self.check_expr(path, where, expr, variables)

    # -- provisioning ----------------------------------------------------------------------

    def lint_provisioning(self, prov_dir, prometheus_config):
        ds_file = os.path.join(prov_dir, 'datasources', 'dpdktel.yaml')
        db_file = os.path.join(prov_dir, 'dashboards', 'dpdktel.yaml')
        with open(prometheus_config) as f:
            prom = yaml.safe_load(f)
        job = next((j for j in prom['scrape_configs'] if j['job_name'] == 'dpdktel'), {})
        interval = job.get('scrape_interval', prom.get('global', {}).get('scrape_interval'))
        try:
            with open(ds_file) as f:
                ds = yaml.safe_load(f)
            sources = [s for s in ds.get('datasources', []) if s.get('type') == 'prometheus']
            if ds.get('apiVersion') != 1 or len(sources) != 1 or not sources[0].get('uid'):
                self.error(ds_file, '', 'provisioning', 'apiVersion 1 and one prometheus data '
                           'source with a uid')
            elif sources[0].get('jsonData', {}).get('timeInterval') != interval:
                self.error(ds_file, '', 'provisioning', 'jsonData.timeInterval must be the '
                           f'scrape_interval of the dpdktel job ({interval}) so '
                           '$__rate_interval spans 4 scrapes')
        except (OSError, yaml.YAMLError) as e:
            self.error(ds_file, '', 'provisioning', str(e))
        try:
            with open(db_file) as f:
                db = yaml.safe_load(f)
            providers = db.get('providers', [])
            if (db.get('apiVersion') != 1 or len(providers) != 1 or
                    providers[0].get('type') != 'file' or
                    not providers[0].get('options', {}).get('path')):
                self.error(db_file, '', 'provisioning', 'apiVersion 1 and one provider of type '
                           'file with options.path')
        except (OSError, yaml.YAMLError) as e:
            self.error(db_file, '', 'provisioning', str(e))


def lint(dashboards, metrics_doc, rules_file, promtool='promtool', provisioning=None,
         prometheus_config=None):
    """Every problem as (file, where, check, message)."""
    linter = Linter(metrics_doc, rules_file, promtool)
    uids = set()
    for path in dashboards:
        try:
            with open(path) as f:
                uids.add(json.load(f).get('uid'))
        except (OSError, ValueError):
            pass
    for path in dashboards:
        linter.lint_dashboard(path, uids)
    linter.lint_rules()
    linter.flush_syntax()
    if provisioning:
        linter.lint_provisioning(provisioning, prometheus_config)
    return linter.errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--metrics', required=True, help='docs/metrics.md')
    ap.add_argument('--rules', required=True, help='grafana/prometheus/dpdktel.rules.yml')
    ap.add_argument('--promtool', default='promtool')
    ap.add_argument('--provisioning', help='grafana/provisioning')
    ap.add_argument('--prometheus-config', help='grafana/prometheus/prometheus.yml')
    ap.add_argument('dashboards', nargs='+')
    args = ap.parse_args()
    errors = lint(args.dashboards, args.metrics, args.rules, args.promtool, args.provisioning,
                  args.prometheus_config)
    for f, where, check, msg in errors:
        print(f'{f}: {where + ": " if where else ""}[{check}] {msg}')
    print(f'lint_dashboards: {len(args.dashboards)} dashboards, {len(errors)} problems',
          file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
