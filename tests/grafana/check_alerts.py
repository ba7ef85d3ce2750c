#!/usr/bin/python3
"""Every dpdktel alert is complete: labelled, annotated, documented and unit-tested.

- every alert the design asks for (link, flapping, lcore, instance, staleness, drops) is there;
- each has a severity label (critical, warning, info) and summary, description and
  runbook_url annotations, the runbook pointing at its own section of docs/alerts.md;
- docs/alerts.md has a section for each alert and none for an alert that does not exist;
- the promtool tests show each alert firing at least once and staying quiet at least once,
  and name no alert the rules do not have (promtool passes `exp_alerts: []` for a typo).

    check_alerts.py --rules grafana/prometheus/dpdktel.rules.yml --docs docs/alerts.md \
        grafana/prometheus/tests/*.test.yml
"""
import argparse
import os
import re
import sys

import yaml

REQUIRED = ['DpdkLinkDown', 'DpdkLinkFlapping', 'DpdkLcoreStalled', 'DpdkLcoreExited',
            'DpdkInstanceDown', 'DpdkInstanceNotResponding', 'DpdkInstanceRestarted',
            'DpdkTelemetryStale', 'DpdkRxMissedRising', 'DpdkRxNoMbuf', 'DpdkTxDropsRising', 'DpdkPortErrors']
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rules', required=True)
    ap.add_argument('--docs', required=True)
    ap.add_argument('tests', nargs='+')
    args = ap.parse_args()
    errors = check(args.rules, args.docs, args.tests)
    for e in errors:
        print(e)
    print(f'check_alerts: {len(errors)} problems', file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
