#!/usr/bin/python3
"""Every query of the dashboards is the one recorded in a fixture, unless changed on purpose.

The fixture (tests/grafana/fixtures/dashboard-queries.json) holds the PromQL of every panel
target (with its legend, instant and format), variable and annotation of the dashboards as
grafana/generate_dashboards.py wrote them before the dashboards became TypeScript
(grafana/src/); the typed program must make the same. A query that differs from its record,
or a recorded one that is gone, fails; a new panel's queries are listed and pass. When a
query changes on purpose, record it again in the same commit:

    check_dashboard_queries.py --fixture tests/grafana/fixtures/dashboard-queries.json \
        [--update] grafana/dashboards/*.json
"""
import argparse
import json
import sys


def queries(dashboard):
    """{where: record} of one dashboard: its panels' targets, variables and annotations."""
    out = {}

    def put(where, record):
        if where in out:
            raise ValueError(f'{dashboard["uid"]}: two queries are both {where}')
        out[where] = record

    panels = [p for top in dashboard.get('panels', []) for p in [top] + top.get('panels', [])]
    for p in panels:
        for t in p.get('targets', []):
            put(f'panel {p["title"]!r} {t["refId"]}', {
                'expr': t['expr'], 'legendFormat': t.get('legendFormat', ''),
                'instant': bool(t.get('instant')), 'format': t.get('format', 'time_series')})
    for v in dashboard.get('templating', {}).get('list', []):
        if v.get('type') == 'query':
            q = v['query']
            put(f'variable {v["name"]}', {'expr': q.get('query') if isinstance(q, dict) else q})
    for a in dashboard.get('annotations', {}).get('list', []):
        if 'expr' in a:
            put(f'annotation {a["name"]!r}', {'expr': a['expr']})
    return out


def record(paths):
    """{uid: {where: record}} of the dashboard files."""
    out = {}
    for path in paths:
        with open(path) as f:
            d = json.load(f)
        out[d['uid']] = queries(d)
    return out


def compare(recorded, current):
    """(problems, new): what differs from the record or is gone, and what is not recorded."""
    problems, new = [], []
    for uid, qs in sorted(recorded.items()):
        have = current.get(uid)
        if have is None:
            problems.append(f'{uid}: the dashboard is gone')
            continue
        for where, want in qs.items():
            got = have.get(where)
            if got is None:
                problems.append(f'{uid}: {where} is gone (was {want["expr"]!r})')
            elif got != want:
                diff = ', '.join(f'{k} {want.get(k)!r} -> {got.get(k)!r}'
                                 for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k))
                problems.append(f'{uid}: {where} changed: {diff}')
    for uid, qs in sorted(current.items()):
        new += [f'{uid}: {where}' for where in qs if where not in recorded.get(uid, {})]
    return problems, new


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fixture', required=True)
    ap.add_argument('--update', action='store_true', help='record the queries of the dashboards')
    ap.add_argument('dashboards', nargs='+')
    args = ap.parse_args()
    current = record(args.dashboards)
    if args.update:
        with open(args.fixture, 'w') as f:
            f.write(json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False) + '\n')
        return 0
    with open(args.fixture) as f:
        recorded = json.load(f)
    problems, new = compare(recorded, current)
    for line in new:
        print(f'new, not in the fixture: {line}')
    for line in problems:
        print(line)
    total = sum(len(qs) for qs in recorded.values())
    if problems:
        print(f'check_dashboard_queries: {len(problems)} of {total} recorded queries differ; if '
              f'on purpose, run {sys.argv[0]} --fixture {args.fixture} --update '
              f'{" ".join(args.dashboards)}', file=sys.stderr)
        return 1
    print(f'check_dashboard_queries: {total} recorded queries unchanged, {len(new)} new',
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
