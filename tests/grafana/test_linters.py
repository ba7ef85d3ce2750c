"""The linters themselves: each check must fail on an input broken in just that way.

lint_dashboards.py runs on fixtures/fixture-good.json (which passes) broken one rule at a
time; check_alerts.py on copies of the real rules, docs and tests, broken likewise;
check_dashboard_queries.py on the fixture with one query changed, one gone, one added. Each
case asserts the exact set of checks that fire, so a check that never fires, or one that
fires for the wrong reason, fails here.
"""
import json
import os
import shutil
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import check_alerts  # noqa: E402
import check_dashboard_queries  # noqa: E402
import lint_dashboards  # noqa: E402

FIXTURE = os.path.join(HERE, 'fixtures', 'fixture-good.json')
METRICS = os.path.join(ROOT, 'docs', 'metrics.md')
RULES = os.path.join(ROOT, 'grafana', 'prometheus', 'dpdktel.rules.yml')
ALERTS_DOC = os.path.join(ROOT, 'docs', 'alerts.md')
RULE_TESTS = os.path.join(ROOT, 'grafana', 'prometheus', 'tests')
PROVISIONING = os.path.join(ROOT, 'grafana', 'provisioning')
PROM_CONFIG = os.path.join(ROOT, 'grafana', 'prometheus', 'prometheus.yml')
AM_CONFIG = os.path.join(ROOT, 'grafana', 'alertmanager', 'alertmanager.yml')


def good():
    with open(FIXTURE) as f:
        return json.load(f)


def run_lint(tmp_path, dashboard, rules=RULES, **kw):
    path = tmp_path / 'fixture-good.json'
    path.write_text(json.dumps(dashboard))
    return lint_dashboards.lint([str(path)], METRICS, rules, **kw)


def codes(errors):
    return {e[2] for e in errors}


def ts(d):
    return d['panels'][1]


def set_expr(expr):
    def mutate(d):
        ts(d)['targets'][0]['expr'] = expr
    return mutate


SEL = 'instance=~"$instance", dpdk_instance=~"$dpdk_instance", port=~"$port"'


def var(d, name):
    return next(v for v in d['templating']['list'] if v['name'] == name)


def set_uid(uid):
    def mutate(d):
        d['uid'] = uid
        ts(d)['fieldConfig']['defaults'].pop('links')  # it links to the old uid
    return mutate


BROKEN_DASHBOARDS = {
    'uid with a space': (set_uid('bad uid'), {'uid'}),
    'uid not the file name': (set_uid('other'), {'uid'}),
    'id set': (lambda d: d.update(id=7), {'id'}),
    'old schemaVersion': (lambda d: d.update(schemaVersion=27), {'schema'}),
    'no dpdktel tag': (lambda d: d.update(tags=['dpdk']), {'tags'}),
    'editable': (lambda d: d.update(editable=True), {'editable'}),
    'no description': (lambda d: d.pop('description'), {'title'}),
    'no cross-links': (lambda d: d.update(links=[]), {'links'}),
    'link to a dashboard that does not exist': (
        lambda d: ts(d)['fieldConfig']['defaults']['links'][0].update(url='/d/nope/x'),
        {'links'}),
    'hard-coded panel datasource': (
        lambda d: ts(d).update(datasource={'type': 'prometheus', 'uid': 'P1809F7CD0C75ACF3'}),
        {'datasource-ref'}),
    'hard-coded target datasource': (
        lambda d: ts(d)['targets'][0].update(datasource={'uid': 'prometheus'}),
        {'datasource-ref'}),
    'import-only ${DS_PROMETHEUS}': (
        lambda d: d.update(__inputs=[{'name': 'DS_PROMETHEUS', 'type': 'datasource'}]),
        {'datasource-ref'}),
    'datasource variable renamed': (lambda d: var(d, 'datasource').update(name='ds'),
                                    {'datasource-var', 'variables'}),
    'datasource variable label': (lambda d: var(d, 'datasource').update(label='DS'),
                                  {'datasource-var'}),
    'host and instance swapped': (
        lambda d: d['templating']['list'].insert(1, d['templating']['list'].pop(2)),
        {'variables'}),
    'dpdk_instance not chained to the host': (
        lambda d: var(d, 'dpdk_instance').update(
            query='label_values(collectd_dpdktel_stats_up, dpdk_instance)'),
        {'variables'}),
    'port not chained to dpdk_instance': (
        lambda d: var(d, 'port').update(query='label_values(collectd_dpdktel_stats_'
                                        'if_packets_rx_total{instance=~"$instance"}, port)'),
        {'variables'}),
    'variable refreshed only on load': (lambda d: var(d, 'port').update(refresh=1),
                                        {'variables'}),
    'multi-value variable without allValue': (lambda d: var(d, 'port').pop('allValue'),
                                              {'variables'}),
    'variable query that is not label_values': (
        lambda d: var(d, 'port').update(query='query_result(up)'), {'variables'}),
    'variable query on another data source': (
        lambda d: var(d, 'port').update(datasource={'uid': 'abc'}), {'datasource-ref'}),
    'panel without title': (lambda d: ts(d).update(title=''), {'panel-title'}),
    'panel without description': (lambda d: ts(d).pop('description'), {'panel-description'}),
    'panel without unit': (lambda d: ts(d)['fieldConfig']['defaults'].pop('unit'),
                           {'panel-unit'}),
    'panel with a made-up unit': (
        lambda d: ts(d)['fieldConfig']['defaults'].update(unit='packets/s'), {'panel-unit'}),
    'panel without query': (lambda d: ts(d).update(targets=[]), {'panel-targets'}),
    'two panels with one id': (lambda d: d['panels'][2].update(id=2), {'panel-id'}),
    'rate over a fixed range': (
        set_expr(f'rate(collectd_dpdktel_stats_if_packets_rx_total{{{SEL}}}[5m])'),
        {'rate-interval'}),
    'increase over $__interval': (
        set_expr(f'increase(collectd_dpdktel_stats_if_packets_rx_total{{{SEL}}}[$__interval])'),
        {'rate-interval'}),
    'counter summed raw': (set_expr(f'sum(collectd_dpdktel_stats_if_packets_rx_total{{{SEL}}})'),
                           {'counter'}),
    'counter inside arithmetic in a subquery': (
        set_expr(f'rate(collectd_dpdktel_stats_if_packets_rx_total{{{SEL}}}[5m:1m])'),
        {'counter', 'rate-interval'}),
    'no instance matcher': (
        set_expr('rate(collectd_dpdktel_stats_if_packets_rx_total{dpdk_instance=~'
                 '"$dpdk_instance", port=~"$port"}[$__rate_interval])'), {'matchers'}),
    'no port matcher on a per-port metric': (
        set_expr('rate(collectd_dpdktel_stats_if_packets_rx_total{instance=~"$instance", '
                 'dpdk_instance=~"$dpdk_instance"}[$__rate_interval])'), {'matchers'}),
    'exact match on a multi-value variable': (
        set_expr('rate(collectd_dpdktel_stats_if_packets_rx_total{instance="$instance", '
                 'dpdk_instance=~"$dpdk_instance", port=~"$port"}[$__rate_interval])'),
        {'matchers'}),
    'metric not in docs/metrics.md': (
        set_expr(f'rate(collectd_dpdktel_stats_if_packet_rx_total{{{SEL}}}[$__rate_interval])'),
        {'metric'}),
    'metric chosen by a __name__ regex': (
        set_expr(f'{{__name__=~"collectd_dpdktel_.*", {SEL}}}'), {'metric'}),
    'label that no series has': (
        set_expr(f'sum by (dpdk_instanse) (dpdktel:port_rx_pps:rate1m{{{SEL}}})'), {'label'}),
    'joined label that label_replace does not make': (
        set_expr(f'dpdktel:port_rx_pps:rate1m{{{SEL}}} * on (instance, dpdk_instance, port) '
                 'group_left (devise) label_replace(collectd_dpdktel_stats_port_info'
                 f'{{{SEL}}}, "device", "$1", "type", "([^,]*),.*")'), {'label'}),
    'query that does not parse': (
        set_expr(f'sum(rate(collectd_dpdktel_stats_if_packets_rx_total{{{SEL}}}'
                 '[$__rate_interval])'), {'promql'}),
    'annotation on an unknown metric': (
        lambda d: d['annotations']['list'][1].update(
            expr=f'collectd_dpdktel_events_link_state{{{SEL}}} == 0'), {'metric'}),
}


def test_good_fixture_passes(tmp_path):
    assert run_lint(tmp_path, good()) == []


@pytest.mark.parametrize('case', sorted(BROKEN_DASHBOARDS))
def test_broken_dashboard_fails(tmp_path, case):
    mutate, expected = BROKEN_DASHBOARDS[case]
    d = good()
    mutate(d)
    errors = run_lint(tmp_path, d)
    assert codes(errors) == expected, errors


def test_rule_on_unknown_metric_fails(tmp_path):
    with open(RULES) as f:
        rules = yaml.safe_load(f)
    rules['groups'][0]['rules'][0]['expr'] = 'rate(collectd_dpdktel_stats_if_pkts_rx_total[1m])'
    path = tmp_path / 'rules.yml'
    path.write_text(yaml.safe_dump(rules))
    errors = run_lint(tmp_path, good(), rules=str(path))
    assert codes(errors) == {'metric'}, errors
    assert 'if_pkts_rx_total' in errors[0][3]


def test_provisioning(tmp_path):
    assert run_lint(tmp_path, good(), provisioning=PROVISIONING,
                    prometheus_config=PROM_CONFIG) == []
    prov = tmp_path / 'provisioning'
    shutil.copytree(PROVISIONING, prov)
    ds_file = prov / 'datasources' / 'dpdktel.yaml'
    ds = yaml.safe_load(ds_file.read_text())
    ds['datasources'][0]['jsonData']['timeInterval'] = '1m'
    ds_file.write_text(yaml.safe_dump(ds))
    errors = run_lint(tmp_path, good(), provisioning=str(prov), prometheus_config=PROM_CONFIG)
    assert codes(errors) == {'provisioning'}, errors


# -- check_alerts.py -------------------------------------------------------------------

@pytest.fixture
def alert_files(tmp_path):
    """Copies of the real rules, docs/alerts.md and promtool tests, to break."""
    shutil.copy(RULES, tmp_path / 'rules.yml')
    shutil.copy(ALERTS_DOC, tmp_path / 'alerts.md')
    tests = tmp_path / 'tests'
    shutil.copytree(RULE_TESTS, tests)
    return tmp_path


def run_check(d):
    return check_alerts.check(str(d / 'rules.yml'), str(d / 'alerts.md'),
                              sorted(str(p) for p in (d / 'tests').glob('*.yml')))


def edit_yaml(path, fn):
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def alert_rule(doc, name):
    return next(r for g in doc['groups'] for r in g['rules'] if r.get('alert') == name)


def test_real_alerts_pass(alert_files):
    assert run_check(alert_files) == []


def test_missing_severity(alert_files):
    edit_yaml(alert_files / 'rules.yml', lambda d: alert_rule(d, 'DpdkRxNoMbuf')['labels'].clear())
    assert run_check(alert_files) == [
        "DpdkRxNoMbuf: severity None, expected one of ['critical', 'info', 'warning']"]


def test_missing_description_and_wrong_runbook(alert_files):
    def mutate(d):
        ann = alert_rule(d, 'DpdkLinkDown')['annotations']
        ann.pop('description')
        ann['runbook_url'] = 'docs/alerts.md#linkdown'
    edit_yaml(alert_files / 'rules.yml', mutate)
    assert run_check(alert_files) == [
        'DpdkLinkDown: no description annotation',
        "DpdkLinkDown: runbook_url 'docs/alerts.md#linkdown', expected "
        "'docs/alerts.md#dpdklinkdown'"]


def test_required_alert_removed(alert_files):
    def mutate(d):
        for g in d['groups']:
            g['rules'] = [r for r in g['rules'] if r.get('alert') != 'DpdkPortErrors']
    edit_yaml(alert_files / 'rules.yml', mutate)
    errors = run_check(alert_files)
    assert 'DpdkPortErrors: missing from rules.yml' in errors
    assert 'alerts.md: section "DpdkPortErrors" for an alert the rules do not have' in errors
    # ... and the tests of the removed alert now name an alert that does not exist.
    assert any("checks 'DpdkPortErrors', which the rules do not define" in e for e in errors)


def test_docs_section_missing(alert_files):
    doc = alert_files / 'alerts.md'
    doc.write_text(doc.read_text().replace('## DpdkLcoreExited', '## Lcore exited'))
    assert run_check(alert_files) == ['DpdkLcoreExited: no "## DpdkLcoreExited" section in '
                                      'alerts.md']


def test_alert_never_shown_firing(alert_files):
    path = alert_files / 'tests' / 'lcores.test.yml'

    def mutate(d):
        for t in d['tests']:
            t['alert_rule_test'] = [c for c in t.get('alert_rule_test', [])
                                    if not (c['alertname'] == 'DpdkLcoreExited' and
                                            c['exp_alerts'])]
    edit_yaml(path, mutate)
    assert run_check(alert_files) == [
        'DpdkLcoreExited: no test shows it firing (an alert_rule_test with exp_alerts)']


def test_alert_never_shown_quiet(alert_files):
    for path in (alert_files / 'tests').glob('*.yml'):
        edit_yaml(path, lambda d: [t.update(alert_rule_test=[
            c for c in t.get('alert_rule_test', [])
            if not (c['alertname'] == 'DpdkTelemetryStale' and not c['exp_alerts'])])
            for t in d['tests']])
    assert run_check(alert_files) == [
        'DpdkTelemetryStale: no test shows it staying quiet (exp_alerts: [])']


def test_test_of_a_misspelt_alert(alert_files):
    edit_yaml(alert_files / 'tests' / 'links.test.yml',
              lambda d: d['tests'][2]['alert_rule_test'][0].update(alertname='DpdkLinkDwn'))
    errors = run_check(alert_files)
    assert errors == ["links.test.yml: test 'a blip (down on two scrapes, under 20 s) stays "
                      "quiet' checks 'DpdkLinkDwn', which the rules do not define"]


# -- check_alerts.py --alertmanager ----------------------------------------------------

def check_am(tmp_path, mutate=None):
    with open(AM_CONFIG) as f:
        doc = yaml.safe_load(f)
    if mutate:
        mutate(doc)
    path = tmp_path / 'alertmanager.yml'
    path.write_text(yaml.safe_dump(doc))
    return check_alerts.check_alertmanager(RULES, str(path))


def test_real_alertmanager_config_passes(tmp_path):
    assert check_am(tmp_path) == []


def test_misspelt_alert_in_inhibit_rule(tmp_path):
    def mutate(doc):
        doc['inhibit_rules'][0]['target_matchers'] = ['alertname=~"DpdkLinkDown|DpdkLcoreStaled"']
        doc['inhibit_rules'][1]['source_matchers'] = ['alertname="DpdkLinkFlaping"']
    errors = check_am(tmp_path, mutate)
    assert len(errors) == 2, errors
    assert "'DpdkLcoreStaled' is not in" in errors[0]
    assert "'DpdkLinkFlaping' is not in" in errors[1]


def test_regex_matching_no_alert(tmp_path):
    def mutate(doc):
        doc['inhibit_rules'][2]['target_matchers'] = ['alertname=~"DPDK.+"']
    errors = check_am(tmp_path, mutate)
    assert len(errors) == 1 and 'matches no alert' in errors[0], errors


def test_label_no_alert_carries(tmp_path):
    def mutate(doc):
        doc['route']['group_by'] = ['host', 'dpdk_instance']
        doc['inhibit_rules'][1]['equal'] = ['instance', 'dpdk_instance', 'port_id']
        doc['route']['routes'][0]['matchers'] = ['sev="critical"']
    errors = check_am(tmp_path, mutate)
    assert len(errors) == 3, errors
    assert all('is on no dpdktel alert' in e for e in errors)


# -- check_dashboard_queries.py: the recorded queries of the fixture ------------------------

def test_recorded_queries_unchanged():
    d = good()
    recorded = {d['uid']: check_dashboard_queries.queries(d)}
    assert check_dashboard_queries.compare(recorded, recorded) == ([], [])


def test_changed_gone_and_new_queries():
    d = good()
    recorded = {d['uid']: check_dashboard_queries.queries(d)}
    ts(d)['targets'][0]['expr'] += ' * 8'
    ts(d)['targets'][0]['legendFormat'] = 'bits'
    gone = d['annotations']['list'].pop()
    d['panels'].append({'type': 'stat', 'title': 'New', 'targets': [{'refId': 'A', 'expr': 'up'}]})
    problems, new = check_dashboard_queries.compare(recorded, {
        d['uid']: check_dashboard_queries.queries(d)})
    assert len(problems) == 2, problems
    assert f"panel {ts(d)['title']!r} A changed: expr " in problems[0]
    assert problems[0].endswith(" * 8', legendFormat '' -> 'bits'"), problems[0]
    assert problems[1].endswith(f"annotation {gone['name']!r} is gone (was {gone['expr']!r})")
    assert new == [f"{d['uid']}: panel 'New' A"]
