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

from helpers import metricsdoc, promql

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


RULES = os.path.join(ROOT, 'grafana', 'prometheus', 'dpdktel.rules.yml')


def run_promtool(tmp_path, exprs, series=SERIES, eval_time='30s', rules=None):
    """exprs: [(expr, [(labels, value)])]; promtool's output when a value differs. rules:
    a rule file to evaluate too (the panels that read recorded series)."""
    promtool = shutil.which('promtool')
    if not promtool:
        pytest.skip('promtool not installed (Debian package prometheus)')
    (tmp_path / 'none.rules.yml').write_text('groups: []\n')
    test = {'rule_files': [rules or 'none.rules.yml'], 'evaluation_interval': '10s',
            'tests': [{'interval': '10s',
                       'input_series': [{'series': s, 'values': v} for s, v in series],
                       'promql_expr_test': [
                           {'expr': e, 'eval_time': eval_time,
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


# Names joined onto numbered series (docs/metrics.md, "Names"). Port 0 has two port_info
# series, as for a few intervals after a restart that changed its MAC; port 2 has none (an
# application dpdktel_stats does not read); lcore 2 has no lcore_info (DPDK 22.11).
PORT = labels('fine')
NAMES = [
    (f'collectd_dpdktel_stats_if_packets_rx_total{{{PORT},port="0"}}', '0+100x12'),
    (f'collectd_dpdktel_stats_if_packets_rx_total{{{PORT},port="1"}}', '0+100x12'),
    (f'collectd_dpdktel_stats_port_info{{{PORT},port="0",'
     'type="net_null0,net_null,B2:5B:35:7B:05:53,0"}', '1x12'),
    (f'collectd_dpdktel_stats_port_info{{{PORT},port="0",'
     'type="net_null0,net_null,AE:C4:62:1E:CC:F7,0"}', '1x12'),
    (f'collectd_dpdktel_stats_port_info{{{PORT},port="1",'
     'type="0000:3b:00.0,vfio-pci,3C:FD:FE:A1:B2:C3,1"}', '1x12'),
    (f'collectd_dpdktel_events_link_status{{{PORT},port="0"}}', '1x12'),
    (f'collectd_dpdktel_events_link_status{{{PORT},port="2"}}', '0x12'),
    (f'collectd_dpdktel_stats_lcore_info{{{PORT},lcore="1",type="RTE,2-3_8,0"}}', '1x12'),
    (f'collectd_dpdktel_events_lcore_state{{{PORT},lcore="1"}}', '1x12'),
    (f'collectd_dpdktel_events_lcore_state{{{PORT},lcore="2"}}', '3x12'),
]


def docs_promql(needle):
    return metricsdoc.promql_block(os.path.join(ROOT, 'docs', 'metrics.md'), needle)


def test_documented_join_puts_the_device_on_if_packets(tmp_path):
    expr = docs_promql('if_packets_rx_total')
    rc, out = run_promtool(tmp_path, [(expr, [
        (f'{{{PORT},port="0",device="net_null0"}}', 10),
        (f'{{{PORT},port="1",device="0000:3b:00.0"}}', 10)])], NAMES, '120s')
    assert rc == 0, out


def test_documented_split_of_port_info(tmp_path):
    expr = docs_promql('"numa",')
    rc, out = run_promtool(tmp_path, [(expr, [
        (f'collectd_dpdktel_stats_port_info{{{PORT},port="0",device="net_null0",'
         f'driver="net_null",mac="{mac}",numa="0",'
         f'type="net_null0,net_null,{mac},0"}}', 1)
        for mac in ('B2:5B:35:7B:05:53', 'AE:C4:62:1E:CC:F7')] + [
        (f'collectd_dpdktel_stats_port_info{{{PORT},port="1",device="0000:3b:00.0",'
         'driver="vfio-pci",mac="3C:FD:FE:A1:B2:C3",numa="1",'
         'type="0000:3b:00.0,vfio-pci,3C:FD:FE:A1:B2:C3,1"}', 1)])], NAMES, '120s')
    assert rc == 0, out


def test_link_state_legend_names_ports(tmp_path):
    rc, out = run_promtool(tmp_path, [
        (panel_expr('Link state'), [(f'{{{PORT},port="0",device="net_null0"}}', 1),
                                    # no port_info: kept, without a device
                                    (f'collectd_dpdktel_events_link_status{{{PORT},port="2"}}',
                                     0)]),
    ], NAMES, '120s')
    assert rc == 0, out
    with open(OVERVIEW) as f:
        d = json.load(f)
    legends = {p['title']: p['targets'][0]['legendFormat']
               for top in d['panels'] for p in [top] + top.get('panels', []) if 'targets' in p}
    assert '{{device}}' in legends['Link state']


def test_documented_lcore_join(tmp_path):
    """The lcore join of docs/metrics.md: role and CPUs on lcore_state where lcore_info is."""
    expr = docs_promql('lcore_info')
    rc, out = run_promtool(tmp_path, [(expr, [
        (f'{{{PORT},lcore="1",role="RTE",cpus="2-3_8"}}', 1)])], NAMES, '120s')
    assert rc == 0, out


def test_documented_alert_description_names_the_port(tmp_path):
    """The annotation template of docs/metrics.md ("In alert descriptions"), in a rule
    evaluated by promtool: the device name where the port has port_info, none where not."""
    promtool = shutil.which('promtool')
    if not promtool:
        pytest.skip('promtool not installed (Debian package prometheus)')
    with open(os.path.join(ROOT, 'docs', 'metrics.md')) as f:
        text = f.read()
    (block,) = [b.split('```')[0] for b in text.split('```yaml')[1:] if 'port_info' in b]
    description = yaml.safe_load(block)['description']
    rules = {'groups': [{'name': 'names', 'rules': [{
        'alert': 'DpdkLinkDown', 'expr': 'collectd_dpdktel_events_link_status == 0',
        'annotations': {'description': description}}]}]}
    (tmp_path / 'names.rules.yml').write_text(yaml.safe_dump(rules))
    series = NAMES + [(f'collectd_dpdktel_stats_port_info{{{PORT},port="2",'
                       'type="0000:3b:00.0,vfio-pci,3C:FD:FE:A1:B2:C3,1"}', '1x12'),
                      (f'collectd_dpdktel_events_link_status{{{PORT},port="3"}}', '0x12')]
    test = {'rule_files': ['names.rules.yml'], 'evaluation_interval': '10s',
            'tests': [{'interval': '10s',
                       'input_series': [{'series': s, 'values': v} for s, v in series],
                       'alert_rule_test': [{'eval_time': '60s', 'alertname': 'DpdkLinkDown',
                                            'exp_alerts': [
        {'exp_labels': {'job': 'dpdktel', 'instance': 'hostA', 'dpdk_instance': 'fine',
                        'port': '2'},
         'exp_annotations': {'description': 'Port 2 (0000:3b:00.0) of fine on hostA is down.'}},
        {'exp_labels': {'job': 'dpdktel', 'instance': 'hostA', 'dpdk_instance': 'fine',
                        'port': '3'},
         'exp_annotations': {'description': 'Port 3 of fine on hostA is down.'}}]}]}]}
    path = tmp_path / 'names.test.yml'
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    r = subprocess.run([promtool, 'test', 'rules', str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_firing_alerts_table_names_the_port(tmp_path):
    """The overview's alert table joins the device name onto port alerts; lcore alerts and
    alerts of a port without port_info stay, without one."""
    def alert(name, **kw):
        extra = ''.join(f',{k}="{v}"' for k, v in kw.items())
        return (f'ALERTS{{alertname="{name}",alertstate="firing",severity="critical",'
                f'{PORT}{extra}}}')
    series = NAMES + [(alert('DpdkLinkDown', port='1'), '1x12'),
                      (alert('DpdkLinkDown', port='2'), '1x12'),
                      (alert('DpdkLcoreStalled', lcore='2'), '1x12')]
    base = f'alertname="{{}}",alertstate="firing",severity="critical",{PORT}'
    rc, out = run_promtool(tmp_path, [(panel_expr('Firing alerts by port and lcore'), [
        (f'{{{base.format("DpdkLinkDown")},port="1",device="0000:3b:00.0"}}', 1),
        (alert('DpdkLinkDown', port='2'), 1),
        (alert('DpdkLcoreStalled', lcore='2'), 1)])], series, '120s')
    assert rc == 0, out


def test_documented_instance_join(tmp_path):
    """The instance join of docs/metrics.md: program and DPDK release on up."""
    series = NAMES + [
        (f'collectd_dpdktel_events_up{{{PORT}}}', '1x12'),
        (f'collectd_dpdktel_stats_instance_info{{{PORT},'
         'type="24.11.6,dpdk-testpmd,4242,0.1.0"}', '1x12')]
    rc, out = run_promtool(tmp_path, [(docs_promql('instance_info'), [
        (f'{{{PORT},program="dpdk-testpmd",dpdk="24.11.6"}}', 1)])], series, '120s')
    assert rc == 0, out


# Drops (docs/metrics.md, "Drop reasons"): port 0 misses 30/s, 10/s of them split out by
# its driver (rx_missed.rx_priority0_dropped), and 5/s tx_full; port 1 nothing. 6 minutes:
# the drop rates are over 5 (extended counters, docs/alerts.md "Timing").
DROPS = NAMES + [
    (f'collectd_dpdktel_stats_drops_total{{{PORT},port="0",type="rx_missed"}}', '0+200x36'),
    (f'collectd_dpdktel_stats_drops_total{{{PORT},port="0",type="rx_missed.rx_priority0_dropped"}}',
     '0+100x36'),
    (f'collectd_dpdktel_stats_drops_total{{{PORT},port="0",type="tx_full"}}', '0+50x36'),
    (f'collectd_dpdktel_stats_drops_total{{{PORT},port="1",type="rx_missed"}}', '0x36'),
]


def test_loss_table_by_port_and_reason(tmp_path):
    """The overview's "where is loss now": one row per port and reason, a reason's driver
    counters summed into it, the device joined on; a port losing nothing shows 0."""
    def row(port, reason, device=None):
        dev = f',device="{device}"' if device else ''
        return f'{{{PORT},port="{port}",reason="{reason}"{dev}}}'
    rc, out = run_promtool(tmp_path, [(panel_expr('Loss now by port and reason'), [
        (row(0, 'rx_missed', 'net_null0'), 30), (row(0, 'tx_full', 'net_null0'), 5),
        (row(1, 'rx_missed', '0000:3b:00.0'), 0)])], DROPS, '300s', RULES)
    assert rc == 0, out


def test_documented_where_did_port_lose(tmp_path):
    """docs/metrics.md's one query for "where did port 1 lose packets in the last hour"."""
    expr = docs_promql('drops_total').replace('"edge1"', '"fine"').replace('port="1"',
                                                                           'port="0"')
    rc, out = run_promtool(tmp_path, [(expr, [
        ('{type="rx_missed"}', 2400), ('{type="rx_missed.rx_priority0_dropped"}', 1200),
        ('{type="tx_full"}', 600)])], DROPS, '120s')
    assert rc == 0, out
