#!/usr/bin/python3
"""Every dpdktel alert is complete: labelled, annotated, documented and unit-tested.

- every alert the design asks for (link, flapping, lcore, instance, staleness, drops, memory,
  saturation, queue imbalance, loss budget, degraded telemetry) is there;
- each has a severity label (critical, warning, info) and summary, description and
  runbook_url annotations, the runbook pointing at its own section of docs/alerts.md;
- docs/alerts.md has a section for each alert and none for an alert that does not exist;
- the promtool tests show each alert firing at least once and staying quiet at least once,
  and name no alert the rules do not have (promtool passes `exp_alerts: []` for a typo).

    check_alerts.py --rules grafana/prometheus/dpdktel.rules.yml --docs docs/alerts.md \
        grafana/prometheus/tests/*.test.yml [--alertmanager grafana/alertmanager/alertmanager.yml]

With --alertmanager, also the example Alertmanager config: every alert name its routes and
inhibit rules name exists (a misspelt name in an inhibit rule silently hides nothing), and
every label they match, group or compare on is one the alerts carry.
"""
import argparse
import os
import re
import sys

import yaml

REQUIRED = ['DpdkLinkDown', 'DpdkLinkFlapping', 'DpdkLcoreStalled', 'DpdkLcoreExited',
            'DpdkInstanceDown', 'DpdkInstanceNotResponding', 'DpdkInstanceRestarted',
            'DpdkTelemetryStale', 'DpdkRxMissedRising', 'DpdkRxNoMbuf', 'DpdkTxDropsRising', 'DpdkPortErrors',
            'DpdkMempoolNearlyExhausted', 'DpdkRingNearlyFull',
            # issue 28: why is it dropping
            'DpdkMempoolExhaustionForecast', 'DpdkLcoreSaturated', 'DpdkRxQueueImbalance',
            'DpdkLossBudgetBurn', 'DpdkLossBudgetSlowBurn',
            # issue 31: telemetry read more slowly than the rules assume
            'DpdkTelemetryDegraded']
SEVERITIES = {'critical', 'warning', 'info'}
ANNOTATIONS = ('summary', 'description', 'runbook_url')


def slug(heading):
    """The anchor GitHub (and most Markdown renderers) give a heading."""
    s = re.sub(r'[^a-z0-9 _-]', '', heading.strip().lower())
    return s.replace(' ', '-')


def check(rules_file, docs_file, test_files):
    errors = []
    with open(rules_file) as f:
        rules = yaml.safe_load(f)
    alerts = {}
    for g in rules['groups']:
        for r in g['rules']:
            if 'alert' in r:
                if r['alert'] in alerts:
                    errors.append(f'{r["alert"]}: defined twice')
                alerts[r['alert']] = r
    with open(docs_file) as f:
        sections = {slug(m.group(1)): m.group(1).strip()
                    for m in re.finditer(r'^## (.+)$', f.read(), re.M)}
    docs_name = os.path.basename(docs_file)
    for name in REQUIRED:
        if name not in alerts:
            errors.append(f'{name}: missing from {os.path.basename(rules_file)}')
    for name, r in alerts.items():
        if not re.fullmatch(r'Dpdk[A-Z][A-Za-z]+', name):
            errors.append(f'{name}: alert names are CamelCase and start with Dpdk')
        sev = r.get('labels', {}).get('severity')
        if sev not in SEVERITIES:
            errors.append(f'{name}: severity {sev!r}, expected one of {sorted(SEVERITIES)}')
        ann = r.get('annotations', {})
        for key in ANNOTATIONS:
            if not ann.get(key):
                errors.append(f'{name}: no {key} annotation')
        want = f'docs/alerts.md#{slug(name)}'
        if ann.get('runbook_url') and ann['runbook_url'] != want:
            errors.append(f'{name}: runbook_url {ann["runbook_url"]!r}, expected {want!r}')
        if slug(name) not in sections:
            errors.append(f'{name}: no "## {name}" section in {docs_name}')
    for anchor, heading in sections.items():
        if heading.startswith('Dpdk') and heading not in alerts:
            errors.append(f'{docs_name}: section "{heading}" for an alert the rules do not have')

    fires, quiet = set(), set()
    for path in test_files:
        with open(path) as f:
            doc = yaml.safe_load(f)
        for t in doc.get('tests', []):
            for case in t.get('alert_rule_test', []):
                name = case.get('alertname')
                if name not in alerts:
                    errors.append(f'{os.path.basename(path)}: test {t.get("name")!r} checks '
                                  f'{name!r}, which the rules do not define')
                (fires if case.get('exp_alerts') else quiet).add(name)
    for name in alerts:
        if name not in fires:
            errors.append(f'{name}: no test shows it firing (an alert_rule_test with exp_alerts)')
        if name not in quiet:
            errors.append(f'{name}: no test shows it staying quiet (exp_alerts: [])')
    return errors


# The labels a dpdktel alert can carry: the rule's own, and the series' (docs/alerts.md).
ALERT_LABELS = {'alertname', 'severity', 'job', 'instance', 'dpdk_instance', 'port', 'lcore',
                'stretched'}
MATCHER = re.compile(r'\s*(\w+)\s*(=~|!~|!=|=)\s*"(.*)"\s*$')


def alert_names(rules_file):
    with open(rules_file) as f:
        rules = yaml.safe_load(f)
    return {r['alert'] for g in rules['groups'] for r in g['rules'] if 'alert' in r}


def check_alertmanager(rules_file, am_file):
    errors = []
    alerts = alert_names(rules_file)
    with open(am_file) as f:
        doc = yaml.safe_load(f)
    name = os.path.basename(am_file)

    def matchers(where, items):
        for m in items or []:
            mm = MATCHER.match(m)
            if not mm:
                errors.append(f'{name} {where}: cannot read matcher {m!r}')
                continue
            label, op, value = mm.groups()
            if label not in ALERT_LABELS:
                errors.append(f'{name} {where}: label {label!r} is on no dpdktel alert '
                              f'(expected one of {sorted(ALERT_LABELS)})')
            if label != 'alertname':
                continue
            if op in ('=', '!='):
                wanted = [value]
            elif re.fullmatch(r'[A-Za-z]+(\|[A-Za-z]+)*', value):
                wanted = value.split('|')
            else:
                if not any(re.fullmatch(value, a) for a in alerts):
                    errors.append(f'{name} {where}: alertname{op}"{value}" matches no alert')
                continue
            for a in wanted:
                if a not in alerts:
                    errors.append(f'{name} {where}: alert {a!r} is not in '
                                  f'{os.path.basename(rules_file)}')

    def labels(where, names):
        for label in names or []:
            if label not in ALERT_LABELS:
                errors.append(f'{name} {where}: label {label!r} is on no dpdktel alert')

    def route(r, where):
        matchers(where, r.get('matchers'))
        labels(f'{where} group_by', r.get('group_by'))
        for i, sub in enumerate(r.get('routes', [])):
            route(sub, f'{where}.routes[{i}]')
    route(doc['route'], 'route')
    for i, rule in enumerate(doc.get('inhibit_rules', [])):
        where = f'inhibit_rules[{i}]'
        matchers(f'{where} source_matchers', rule.get('source_matchers'))
        matchers(f'{where} target_matchers', rule.get('target_matchers'))
        labels(f'{where} equal', rule.get('equal'))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rules', required=True)
    ap.add_argument('--docs', required=True)
    ap.add_argument('--alertmanager')
    ap.add_argument('tests', nargs='+')
    args = ap.parse_args()
    errors = check(args.rules, args.docs, args.tests)
    if args.alertmanager:
        errors += check_alertmanager(args.rules, args.alertmanager)
    for e in errors:
        print(e)
    print(f'check_alerts: {len(errors)} problems', file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
