#!/usr/bin/python3
"""Generate the dpdktel Grafana dashboards (grafana/dashboards/*.json).

The JSON files are committed so users can import or provision them without running
anything; this script is their source. A test runs it with --check and fails when the
committed files differ from what it makes. Plain Python 3, no dependencies.

    grafana/generate_dashboards.py           # rewrite grafana/dashboards/*.json
    grafana/generate_dashboards.py --check   # exit 1 (with a diff) if they are out of date

Conventions (checked by tests/grafana/lint_dashboards.py): fixed uid = file name, id null,
one `datasource` variable and every query on ${datasource}, variables host (instance) ->
dpdk_instance -> port/lcore, a unit, title and description on every panel, rate() over
$__rate_interval, every *_total inside rate/irate/increase.
"""
import argparse
import difflib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'dashboards')

SCHEMA_VERSION = 39  # Grafana 10.4 / 11.0; newer Grafana migrates it on load
DS = {'type': 'prometheus', 'uid': '${datasource}'}
TAGS = ['dpdktel', 'dpdk', 'collectd']

# Value mappings shared by several panels: the codes of docs/metrics.md.
LINK_MAPPINGS = [{'type': 'value', 'options': {
    '0': {'text': 'DOWN', 'color': 'red', 'index': 0},
    '1': {'text': 'UP', 'color': 'green', 'index': 1},
}}]
LCORE_MAPPINGS = [{'type': 'value', 'options': {
    '0': {'text': 'STARTING', 'color': 'blue', 'index': 0},
    '1': {'text': 'RUNNING', 'color': 'green', 'index': 1},
    '2': {'text': 'IDLE', 'color': 'super-light-green', 'index': 2},
    '3': {'text': 'STALLED', 'color': 'red', 'index': 3},
    '4': {'text': 'EXITED', 'color': 'dark-purple', 'index': 4},
}}]
# The instance state of the overview: up, plus 2 for not_responding (up is 0 meanwhile).
INSTANCE_MAPPINGS = [{'type': 'value', 'options': {
    '0': {'text': 'DOWN', 'color': 'red', 'index': 0},
    '1': {'text': 'UP', 'color': 'green', 'index': 1},
    '2': {'text': 'NOT RESPONDING', 'color': 'orange', 'index': 2},
}}]


def thresholds(*steps):
    """thresholds('green', 1, 'red') -> green below 1, red from 1."""
    out = [{'color': steps[0], 'value': None}]
    for value, color in zip(steps[1::2], steps[2::2]):
        out.append({'color': color, 'value': value})
    return {'mode': 'absolute', 'steps': out}


class Sel:
    """Builds selectors with the dashboard's variable matchers.

    multi: variables that may hold several values (=~, Grafana regex-escapes them);
    single ones are matched exactly (=), so a dot in an instance name is not a wildcard.
    """

    def __init__(self, multi, single):
        self.multi, self.single = multi, single

    def __call__(self, metric, *scope, **extra):
        ms = []
        for var in ('instance', 'dpdk_instance') + scope:
            if var in self.multi:
                ms.append(f'{var}=~"${var}"')
            elif var in self.single:
                ms.append(f'{var}="${var}"')
            else:
                raise KeyError(f'{var} is not a variable of this dashboard')
        ms += [f'{k}="{v}"' for k, v in extra.items()]
        return f'{metric}{{{", ".join(ms)}}}'


def target(expr, legend='', ref='A', table=False):
    t = {'datasource': DS, 'editorMode': 'code', 'expr': expr, 'legendFormat': legend,
         'refId': ref}
    if table:
        t.update({'format': 'table', 'instant': True, 'range': False})
    else:
        t.update({'range': True})
    return t


def targets(*pairs):
    return [target(expr, legend, chr(ord('A') + i)) for i, (expr, legend) in enumerate(pairs)]


# The info values of dpdktel_stats carry names in their type instance, "<a>,<b>,...": one
# label from part i of it (docs/metrics.md, "Names"). topk keeps one info series per port or
# lcore while a restarted application's old one has not gone stale yet.
def info_label(series, label, i):
    skip = '[^,]*,' * i
    return f'label_replace({series}, "{label}", "$1", "type", "{skip}([^,]*).*")'


def with_info(expr, info, keys, labels):
    """expr with the labels of info joined on; series without info stay, without them."""
    on = f'on ({", ".join(keys)})'
    one = f'topk by ({", ".join(keys)}) (1, {info})'
    return f'({expr} * {on} group_left ({", ".join(labels)}) {one}) or {on} {expr}'


PORT_KEYS = ('job', 'instance', 'dpdk_instance', 'port')


def with_device(expr, s, *scope):
    info = info_label(s('collectd_dpdktel_stats_port_info', *scope), 'device', 0)
    return with_info(expr, info, PORT_KEYS, ['device'])


class Layout:
    """Places panels left to right in rows of 24 columns; row() starts a new row panel."""

    def __init__(self):
        self.panels, self.x, self.y, self.h, self.next_id = [], 0, 0, 0, 1

    def _id(self):
        self.next_id += 1
        return self.next_id - 1

    def row(self, title):
        self._newline()
        self.panels.append({'type': 'row', 'title': title, 'collapsed': False, 'id': self._id(),
                            'gridPos': {'h': 1, 'w': 24, 'x': 0, 'y': self.y}, 'panels': []})
        self.y += 1

    def _newline(self):
        if self.x:
            self.x, self.y, self.h = 0, self.y + self.h, 0

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel['id'] = self._id()
        panel['gridPos'] = {'h': h, 'w': w, 'x': self.x, 'y': self.y}
        self.panels.append(panel)
        self.x += w
        self.h = max(self.h, h)


def panel(kind, title, description, unit, tgts, options=None, custom=None, **defaults):
    fc = {'unit': unit}
    fc.update(defaults)
    if custom is not None:
        fc['custom'] = custom
    return {'type': kind, 'title': title, 'description': description, 'datasource': DS,
            'fieldConfig': {'defaults': fc, 'overrides': []}, 'options': options or {},
            'targets': tgts}


def stat(title, description, unit, tgts, steps=thresholds('green'), mappings=(), **kw):
    options = {'reduceOptions': {'calcs': ['lastNotNull'], 'fields': '', 'values': False},
               'colorMode': 'background', 'graphMode': 'none', 'justifyMode': 'auto',
               'orientation': 'auto', 'textMode': 'auto'}
    return panel('stat', title, description, unit, tgts, options, thresholds=steps,
                 mappings=list(mappings), color={'mode': 'thresholds'}, **kw)


def timeseries(title, description, unit, tgts, steps=thresholds('green'), **kw):
    options = {'legend': {'displayMode': 'list', 'placement': 'bottom', 'showLegend': True},
               'tooltip': {'mode': 'multi', 'sort': 'desc'}}
    custom = {'drawStyle': 'line', 'lineWidth': 1, 'fillOpacity': 10, 'showPoints': 'never',
              'spanNulls': False, 'thresholdsStyle': {'mode': kw.pop('threshold_style', 'off')}}
    if kw.pop('stack', False):  # parts of one whole (a port's loss by reason)
        custom.update(stacking={'mode': 'normal', 'group': 'A'}, fillOpacity=40)
    return panel('timeseries', title, description, unit, tgts, options, custom,
                 thresholds=steps, color={'mode': 'palette-classic'}, **kw)


def state_timeline(title, description, tgts, mappings, steps, links=()):
    options = {'mergeValues': True, 'showValue': 'auto', 'alignValue': 'left', 'rowHeight': 0.9,
               'legend': {'displayMode': 'list', 'placement': 'bottom', 'showLegend': False},
               'tooltip': {'mode': 'single', 'sort': 'none'}}
    return panel('state-timeline', title, description, 'none', tgts, options,
                 {'lineWidth': 0, 'fillOpacity': 80}, thresholds=steps, mappings=mappings,
                 color={'mode': 'thresholds'}, links=list(links))


def table(title, description, unit, tgts, organize, **kw):
    p = panel('table', title, description, unit, tgts,
              {'showHeader': True, 'cellHeight': 'sm', 'footer': {'show': False}}, **kw)
    p['transformations'] = [{'id': 'merge', 'options': {}},
                            {'id': 'organize', 'options': organize}]
    return p


def var_datasource():
    return {'name': 'datasource', 'label': 'Data source', 'type': 'datasource',
            'query': 'prometheus', 'current': {}, 'hide': 0, 'includeAll': False,
            'multi': False, 'options': [], 'refresh': 1, 'regex': ''}


def var_query(name, label, query, multi):
    v = {'name': name, 'label': label, 'type': 'query', 'datasource': DS,
         'definition': query, 'query': query, 'refresh': 2, 'regex': '', 'sort': 3 if name in
         ('port', 'lcore') else 1, 'hide': 0, 'current': {}, 'options': [],
         'multi': multi, 'includeAll': multi}
    if multi:
        v['allValue'] = '.+'
    return v


def variables(sel, extra=()):
    """datasource, then host -> dpdk_instance (-> extra: port or lcore, whose queries use
    the variables before them)."""
    multi = 'instance' in sel.multi
    op = '=~' if multi else '='
    out = [var_datasource(),
           var_query('instance', 'Host', 'label_values(collectd_dpdktel_stats_up, instance)',
                     multi),
           var_query('dpdk_instance', 'DPDK instance', 'label_values(collectd_dpdktel_stats_up'
                     f'{{instance{op}"$instance"}}, dpdk_instance)', multi)]
    for name, label, metric in extra:
        out.append(var_query(name, label, f'label_values({sel(metric)}, {name})',
                             name in sel.multi))
    return out


def annotations(*extra):
    builtin = {'builtIn': 1, 'datasource': {'type': 'grafana', 'uid': '-- Grafana --'},
               'enable': True, 'hide': True, 'iconColor': 'rgba(0, 211, 255, 1)',
               'name': 'Annotations & Alerts', 'type': 'dashboard'}
    return {'list': [builtin] + list(extra)}


def prom_annotation(name, expr, title, color, tag_keys):
    return {'datasource': DS, 'enable': True, 'expr': expr, 'iconColor': color, 'name': name,
            'step': '10s', 'tagKeys': tag_keys, 'textFormat': '', 'titleFormat': title,
            'useValueForTime': False}


def dashboard(uid, title, description, layout, templating, annos):
    return {
        '__requires': [
            {'type': 'grafana', 'id': 'grafana', 'name': 'Grafana', 'version': '10.4.0'},
            {'type': 'datasource', 'id': 'prometheus', 'name': 'Prometheus', 'version': '1.0.0'},
        ],
        'annotations': annos,
        'description': description,
        'editable': False,
        'fiscalYearStartMonth': 0,
        'graphTooltip': 1,
        'id': None,
        # Every dpdktel dashboard carries the tag: this one link lists the others, with the
        # current host/instance and time range.
        'links': [{'asDropdown': False, 'icon': 'external link', 'includeVars': True,
                   'keepTime': True, 'tags': ['dpdktel'], 'targetBlank': False,
                   'title': 'dpdktel dashboards', 'type': 'dashboards'}],
        'panels': layout.panels,
        'refresh': '30s',
        'schemaVersion': SCHEMA_VERSION,
        'tags': TAGS,
        'templating': {'list': templating},
        'time': {'from': 'now-1h', 'to': 'now'},
        'timepicker': {},
        'timezone': '',
        'title': title,
        'uid': uid,
        'version': 1,
        'weekStart': '',
    }


def data_link(title, uid, *field_vars):
    params = ''.join(f'&var-{v}=${{__field.labels.{v}}}' for v in field_vars)
    return {'title': title, 'targetBlank': False,
            'url': f'/d/{uid}/{uid}?${{datasource:queryparam}}{params}&${{__url_time_range}}'}


def row_link(title, uid, *columns):
    """A data link from a table row: the row's columns (labels made fields by the table's
    merge) as the other dashboard's variables."""
    params = ''.join(f'&var-{v}=${{__data.fields.{v}}}' for v in columns)
    return {'title': title, 'targetBlank': False,
            'url': f'/d/{uid}/{uid}?${{datasource:queryparam}}{params}&${{__url_time_range}}'}


# The drop reasons of dpdktel_stats (docs/metrics.md, drops), in the order of the legend.
DROP_REASONS = ('rx_missed', 'rx_nombuf', 'rx_errors', 'tx_errors', 'tx_full')


def overview():
    s = Sel(multi={'instance', 'dpdk_instance'}, single=set())
    up = f'({s("collectd_dpdktel_events_up")} or {s("collectd_dpdktel_stats_up")})'
    hung = s('collectd_dpdktel_events_not_responding')
    same = 'on (job, instance, dpdk_instance)'
    alerts = 'ALERTS{alertname=~"Dpdk.*", alertstate="firing", instance=~"$instance"}'
    by = 'sum by (instance, dpdk_instance)'
    L = Layout()
    L.row('Health')
    L.add(stat('Instances up', 'DPDK applications whose telemetry socket collectd reaches '
               '(up = 1 from dpdktel_events, else dpdktel_stats).', 'none',
               targets((f'sum({up})', '')), thresholds('red', 1, 'green')), 4, 4)
    L.add(stat('Instances down', 'DPDK applications collectd does not reach (up = 0) that '
               'are not counted as not responding: gone, or their socket refuses. '
               'DpdkInstanceDown fires after 30 s.', 'none',
               targets((f'sum((1 - {up}) unless {same} {hung} == 1)', '')),
               thresholds('green', 1, 'red')), 4, 4)
    L.add(stat('Instances not responding', 'DPDK applications whose process runs but whose '
               'telemetry does not answer (not_responding = 1, dpdktel_events; up is 0 '
               'meanwhile and their ports and lcores are not reported). '
               'DpdkInstanceNotResponding fires after 1 min.', 'none',
               targets((f'sum({hung})', '')), thresholds('green', 1, 'red')), 4, 4)
    L.add(stat('Ports down', 'Ports whose link is down (link_status 0). DpdkLinkDown fires '
               'after 20 s.', 'none',
               targets((f'sum(1 - {s("collectd_dpdktel_events_link_status")})', '')),
               thresholds('green', 1, 'red')), 4, 4)
    L.add(stat('Lcores not running', 'Lcores STALLED or EXITED (RUNNING and IDLE are '
               'healthy, STARTING lasts milliseconds).', 'none',
               targets((f'sum({s("collectd_dpdktel_events_lcore_state")} >= bool 3)', '')),
               thresholds('green', 1, 'red')), 4, 4)
    L.add(stat('Firing alerts', 'dpdktel alerts firing in Prometheus for the selected hosts '
               '(docs/alerts.md).', 'none', targets((f'count({alerts})', '')),
               thresholds('green', 1, 'red'), noValue='0'), 4, 4)
    L.add(table('Firing alerts by port and lcore', 'Each firing dpdktel alert with its '
                'labels, and the device name of its port (port_info); the runbook is in '
                'docs/alerts.md under the alert name.', 'none',
                [target(with_device(alerts, s), ref='A', table=True)],
                {'excludeByName': {'Time': True, 'Value': True, '__name__': True,
                                   'alertstate': True, 'job': True},
                 'indexByName': {'alertname': 0, 'severity': 1, 'instance': 2,
                                 'dpdk_instance': 3, 'port': 4, 'device': 5, 'lcore': 6}}),
          24, 6)
    # Where is loss now: per port and reason, and the path port -> rx queues -> lcores.
    L.row('Loss')
    by_reason = s('dpdktel:port_drops_by_reason_pps:rate5m')
    loss_keys = 'instance, dpdk_instance, port, reason'
    L.add(table('Loss now by port and reason', 'Packets each port loses per second, by reason '
                '(drops: rx_missed, rx_nombuf, rx_errors, tx_errors, tx_full; each lost packet '
                'once, the driver counters that refine a reason summed into it), busiest '
                'first, with the device name. Click a row for the port dashboard.', 'pps',
                [target(with_device(f'sort_desc(sum by ({loss_keys}, job) ({by_reason}))', s),
                        ref='A', table=True)],
                {'excludeByName': {'Time': True, 'job': True},
                 'indexByName': {'instance': 0, 'dpdk_instance': 1, 'port': 2, 'device': 3,
                                 'reason': 4, 'Value': 5},
                 'renameByName': {'Value': 'lost per second'}},
                links=[row_link('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance',
                                'port')]), 12, 8)
    L.add(timeseries('Loss by port and reason', 'The same over time, stacked: what each port '
                     'lost per second, by reason (dpdktel:port_drops_by_reason_pps:rate5m). '
                     'Click a series for its port.', 'pps',
                     targets((f'sum by ({loss_keys}) ({by_reason})',
                              '{{instance}} {{dpdk_instance}} port {{port}} {{reason}}')),
                     thresholds('green', 1, 'red'), stack=True,
                     links=[data_link('Port dashboard', 'dpdktel-port', 'instance',
                                      'dpdk_instance', 'port')]), 12, 8)
    L.add(table('Rx queues, their lcores and rx_missed', 'Which lcore polls which rx queue of '
                'which port (lcore_rx_queue, where the application says: dpdktel-fwd), with '
                'the port\'s rx_missed per second and the lcore\'s busy share. A saturated '
                'lcore (DpdkLcoreSaturated, over 90 % busy) leaves its queues to overflow: '
                'the NIC then misses at them. Click the row for the port, or see the lcore '
                'dashboard.', 'short',
                [target(s('dpdktel:lcore_rx_queue_missed_pps:rate5m'), ref='A', table=True),
                 target(f'{s("dpdktel:lcore_busy:ratio_rate1m")} * on (job, instance, '
                        f'dpdk_instance, lcore) group_right () '
                        f'{s("dpdktel:lcore_rx_queue:info")}', ref='B', table=True)],
                {'excludeByName': {'Time': True, 'job': True, 'type': True,
                                   '__name__': True},
                 'indexByName': {'instance': 0, 'dpdk_instance': 1, 'port': 2, 'queue': 3,
                                 'lcore': 4, 'Value #A': 5, 'Value #B': 6},
                 'renameByName': {'Value #A': 'port rx_missed/s', 'Value #B': 'lcore busy'}},
                links=[row_link('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance',
                                'port'),
                       row_link('Lcore dashboard', 'dpdktel-lcores', 'instance',
                                'dpdk_instance', 'lcore')]), 12, 8)
    L.add(timeseries('Delivered share by port', 'Packets each port received and sent against '
                     'those and every lost one, over the last hour '
                     '(dpdktel:port_delivered:ratio_rate1h): the loss budget\'s measure. '
                     'DpdkLossBudgetBurn pages when a port loses 14.4 times what the objective '
                     'allows (docs/alerts.md, "Setting the loss objective").', 'percentunit',
                     targets((s('dpdktel:port_delivered:ratio_rate1h'),
                              '{{instance}} {{dpdk_instance}} port {{port}}')),
                     thresholds('red', 0.99, 'orange', 0.999, 'green'), max=1,
                     threshold_style='line',
                     links=[data_link('Port dashboard', 'dpdktel-port', 'instance',
                                      'dpdk_instance', 'port')]), 12, 8)
    L.row('State')
    L.add(state_timeline('Instance state', 'Each DPDK application: UP, DOWN (gone, or its '
                         'socket refuses) or NOT RESPONDING (its process runs, its telemetry '
                         'does not answer). up from dpdktel_events, else dpdktel_stats, plus 2 '
                         'while dpdktel_events reports not_responding.',
                         targets((f'({s("collectd_dpdktel_events_up")} + 2 * {hung}) or '
                                  f'{up}', '{{instance}} {{dpdk_instance}}')),
                         INSTANCE_MAPPINGS, thresholds('red', 1, 'green', 2, 'orange')), 24, 6)
    L.add(state_timeline('Link state', 'link_status of every port: UP or DOWN, with its '
                         'device name (port_info). Click a port for its dashboard.',
                         targets((with_device(s('collectd_dpdktel_events_link_status'), s),
                                  '{{instance}} {{dpdk_instance}} port {{port}} {{device}}')),
                         LINK_MAPPINGS, thresholds('red', 1, 'green'),
                         [data_link('Port dashboard', 'dpdktel-port', 'instance',
                                    'dpdk_instance', 'port')]), 12, 8)
    L.add(state_timeline('Lcore state', 'lcore_state of every lcore: STARTING, RUNNING, IDLE, '
                         'STALLED, EXITED. Click an lcore for the lcore dashboard.',
                         targets((s('collectd_dpdktel_events_lcore_state'),
                                  '{{instance}} {{dpdk_instance}} lcore {{lcore}}')),
                         LCORE_MAPPINGS, thresholds('green', 3, 'red'),
                         [data_link('Lcore dashboard', 'dpdktel-lcores', 'instance',
                                    'dpdk_instance', 'lcore')]), 12, 8)
    L.row('Traffic')
    L.add(timeseries('Packets per second by instance', 'Sum over the ports of each DPDK '
                     'instance (recording rules dpdktel:port_*_pps:rate1m).', 'pps',
                     targets((f'{by} ({s("dpdktel:port_rx_pps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} rx'),
                             (f'{by} ({s("dpdktel:port_tx_pps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} tx'))), 8, 8)
    L.add(timeseries('Bits per second by instance', 'Sum over the ports of each DPDK '
                     'instance (dpdktel:port_*_bps:rate1m).', 'bps',
                     targets((f'{by} ({s("dpdktel:port_rx_bps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} rx'),
                             (f'{by} ({s("dpdktel:port_tx_bps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} tx'))), 8, 8)
    L.add(timeseries('Drops per second by instance', 'Packets lost on receive (imissed + '
                     'rx_nombuf) and on send (tx_dropped), summed over the ports of each '
                     'DPDK instance.', 'pps',
                     targets((f'{by} ({s("dpdktel:port_rx_dropped_pps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} rx dropped'),
                             (f'{by} ({s("dpdktel:port_tx_dropped_pps:rate1m")})',
                              '{{instance}} {{dpdk_instance}} tx dropped')),
                     thresholds('green', 1, 'red')), 8, 8)
    # Per instance: dpdktel_stats with MemoryStats (docs/metrics.md); mempool counts from
    # DPDK 23.03, rings from 24.03.
    L.row('Memory and rings')
    in_use = s('collectd_dpdktel_stats_mempool_use_in_use')
    avail = s('collectd_dpdktel_stats_mempool_use_available')
    pool = '{{instance}} {{dpdk_instance}} {{type}}'
    L.add(timeseries('Mempool objects in use', 'Share of each mempool\'s objects in use: '
                     'neither in the pool nor in an lcore cache (mempool_use, DPDK 23.03 and '
                     'later). DpdkMempoolNearlyExhausted fires above 90 % for 5 min.',
                     'percentunit', targets((f'{in_use} / ({in_use} + {avail})', pool)),
                     thresholds('green', 0.9, 'red'), threshold_style='line', min=0, max=1),
          8, 8)
    L.add(timeseries('Mempool objects', 'Objects in use and available (in the pool or an '
                     'lcore cache) of each mempool: a climb that never comes back is a leak.',
                     'short', targets((in_use, f'{pool} in use'), (avail, f'{pool} available'))),
          8, 8)
    used = s('collectd_dpdktel_stats_ring_entries_used')
    cap = s('collectd_dpdktel_stats_ring_entries_capacity')
    L.add(timeseries('Ring fill', 'used_count / capacity of each ring (DPDK 24.03 and later). '
                     'A mempool\'s own ring (MP_<pool>) holds its free objects: it is full '
                     'when the pool is idle, and DpdkRingNearlyFull leaves it out. Any other '
                     'ring above 90 % for 2 min fires DpdkRingNearlyFull.', 'percentunit',
                     targets((f'{used} / {cap}', pool)),
                     thresholds('green', 0.9, 'red'), threshold_style='line', min=0, max=1),
          8, 8)
    heap = s('collectd_dpdktel_stats_heap_bytes_alloc')
    L.add(timeseries('Heap and memzones', 'Bytes allocated from each EAL heap (heap_bytes) '
                     'and reserved in memzones (bytes, type memzones), against the heaps\' '
                     'size.', 'bytes',
                     targets((heap, '{{instance}} {{dpdk_instance}} {{type}} allocated'),
                             (s('collectd_dpdktel_stats_heap_bytes_size'),
                              '{{instance}} {{dpdk_instance}} {{type}} size'),
                             (s('collectd_dpdktel_stats_bytes', type='memzones'),
                              '{{instance}} {{dpdk_instance}} memzones'))), 12, 8)
    L.add(timeseries('Memzones', 'Number of memzones reserved (count, type memzones).', 'short',
                     targets((s('collectd_dpdktel_stats_count', type='memzones'),
                              '{{instance}} {{dpdk_instance}}'))), 12, 8)
    alerts_anno = prom_annotation('dpdktel alerts', alerts, '{{alertname}}', 'red',
                                  'alertname,dpdk_instance,port,lcore')
    return dashboard('dpdktel-overview', 'dpdktel / Overview',
                     'DPDK applications seen by the dpdktel collectd plugins: health, link '
                     'and lcore state, traffic and drops per instance, memory and rings.', L,
                     variables(s), annotations(alerts_anno))


def port():
    s = Sel(multi=set(), single={'instance', 'dpdk_instance', 'port'})
    speed = (f'({s("collectd_dpdktel_events_link_speed", "port")} or '
             f'{s("collectd_dpdktel_stats_link_speed", "port")})')
    L = Layout()
    L.row('Link')
    L.add(stat('Link', 'link_status: UP or DOWN (dpdktel_events).', 'none',
               targets((s('collectd_dpdktel_events_link_status', 'port'), '')),
               thresholds('red', 1, 'green'), LINK_MAPPINGS), 4, 4)
    L.add(stat('Link speed', 'Negotiated speed; 0 while the link is down.', 'bps',
               targets((f'{speed} * 1e6', '')), thresholds('red', 1, 'green')), 4, 4)
    L.add(stat('Link changes in range', 'Link state changes in the selected time range '
               '(link_changes, also those between two polls). DpdkLinkFlapping fires at 5 '
               'in 10 minutes.', 'none',
               targets((f'increase({s("collectd_dpdktel_events_link_changes_total", "port")}'
                        '[$__range])', '')),
               thresholds('green', 1, 'yellow', 5, 'red'), decimals=0), 4, 4)
    L.add(stat('Queues', 'Configured RX and TX queues (/ethdev/info).', 'none',
               targets((s('collectd_dpdktel_stats_port_queues_rx', 'port'), 'rx'),
                       (s('collectd_dpdktel_stats_port_queues_tx', 'port'), 'tx'))), 6, 4)
    L.add(stat('MTU', 'MTU of the port (/ethdev/info).', 'bytes',
               targets((s('collectd_dpdktel_stats_port_mtu', 'port'), ''))), 6, 4)
    info = s('collectd_dpdktel_stats_port_info', 'port')
    for i, label in enumerate(('device', 'driver', 'mac', 'numa')):
        info = info_label(info, label, i)
    L.add(table('Device', 'The names the port is known by (port_info, from /ethdev/info): '
                'device name, driver (of a virtual device from its name, of a PCI device '
                'the kernel driver it is bound to), MAC address and NUMA node.', 'none',
                [target(info, ref='A', table=True)],
                {'excludeByName': {'Time': True, 'Value': True, '__name__': True,
                                   'job': True, 'type': True, 'instance': True,
                                   'dpdk_instance': True, 'port': True},
                 'indexByName': {'device': 0, 'driver': 1, 'mac': 2, 'numa': 3}}), 24, 3)
    L.row('Traffic')
    L.add(timeseries('Packets per second', 'Received (ipackets) and sent (opackets) packets '
                     'per second.', 'pps',
                     targets((s('dpdktel:port_rx_pps:rate1m', 'port'), 'rx'),
                             (s('dpdktel:port_tx_pps:rate1m', 'port'), 'tx'))), 8, 8)
    L.add(timeseries('Bits per second', 'Received and sent bits per second (ibytes, obytes '
                     'x 8; without preamble and inter-frame gap).', 'bps',
                     targets((s('dpdktel:port_rx_bps:rate1m', 'port'), 'rx'),
                             (s('dpdktel:port_tx_bps:rate1m', 'port'), 'tx'))), 8, 8)
    L.add(timeseries('Utilisation', 'Bit rate as a share of the link speed; no value while '
                     'the link is down.', 'percentunit',
                     targets((s('dpdktel:port_rx_utilisation:ratio_rate1m', 'port'), 'rx'),
                             (s('dpdktel:port_tx_utilisation:ratio_rate1m', 'port'), 'tx')),
                     thresholds('green', 0.8, 'orange', 0.95, 'red'), min=0, max=1,
                     threshold_style='line'), 8, 8)
    L.row('Drops and errors')
    L.add(timeseries('Missed per second', 'imissed: packets the NIC dropped for lack of a '
                     'free RX descriptor (the lcores do not keep up).', 'pps',
                     targets((s('dpdktel:port_rx_missed_pps:rate1m', 'port'), 'missed')),
                     thresholds('green', 1, 'red')), 6, 8)
    L.add(timeseries('No mbuf per second', 'rx_nombuf: mbuf allocation failures on receive '
                     '(mempool empty).', 'pps',
                     targets((s('dpdktel:port_rx_nombuf_pps:rate1m', 'port'), 'nombuf')),
                     thresholds('green', 1, 'red')), 6, 8)
    L.add(timeseries('Errors per second', 'ierrors and oerrors: erroneous packets on receive '
                     'and send.', 'pps',
                     targets((s('dpdktel:port_rx_errors_pps:rate1m', 'port'), 'rx errors'),
                             (s('dpdktel:port_tx_errors_pps:rate1m', 'port'), 'tx errors'),
                             (s('dpdktel:port_tx_dropped_pps:rate1m', 'port'), 'tx dropped')),
                     thresholds('green', 1, 'red')), 6, 8)
    L.add(timeseries('Drop ratio', 'Share of the arriving packets lost on receive (missed + '
                     'nombuf) and of the packets to send that were dropped. The alerts fire '
                     'above 0.1 % held for 5 minutes.', 'percentunit',
                     targets((s('dpdktel:port_rx_drop_ratio:rate1m', 'port'), 'rx'),
                             (s('dpdktel:port_tx_drop_ratio:rate1m', 'port'), 'tx')),
                     thresholds('green', 0.001, 'orange', 0.01, 'red'), min=0,
                     threshold_style='line'), 6, 8)
    L.row('Loss by reason')
    drops = s('collectd_dpdktel_stats_drops_total', 'port')
    L.add(timeseries('Drops by reason', 'Every packet the port loses, once, per second by '
                     'reason and driver counter (drops: "<reason>" what the generic counter '
                     'has left, "<reason>.<xstat>" a driver counter that splits or adds to '
                     'it: docs/dpdktel_stats.md, "Drop reasons"). Stacked, the total is '
                     'what the port loses.', 'pps',
                     targets((f'rate({drops}[$__rate_interval])', '{{type}}')),
                     thresholds('green', 1, 'red'), stack=True), 12, 8)
    L.add(table('Lost in range', 'Where the port lost packets in the selected time range: '
                'sum by (type) (increase(collectd_dpdktel_stats_drops_total{port=...}'
                '[$__range])), the reasons and driver counters, most first.', 'short',
                [target(f'sort_desc(sum by (type) (increase({drops}[$__range])))', ref='A',
                        table=True)],
                {'excludeByName': {'Time': True},
                 'renameByName': {'type': 'reason / driver counter', 'Value': 'lost'}},
                decimals=0), 6, 8)
    L.add(timeseries('Delivered share', 'Packets received and sent against those and every '
                     'lost one, over 5 minutes and over an hour: the loss budget\'s measure '
                     '(dpdktel:port_delivered:ratio_rate5m, ..._rate1h). DpdkLossBudgetBurn '
                     'pages at 14.4 times the loss the objective allows.', 'percentunit',
                     targets((s('dpdktel:port_delivered:ratio_rate5m', 'port'), '5 min'),
                             (s('dpdktel:port_delivered:ratio_rate1h', 'port'), '1 h')),
                     thresholds('red', 0.99, 'orange', 0.999, 'green'), max=1,
                     threshold_style='line'), 6, 8)
    L.row('Queues')
    q = '[$__rate_interval])'
    L.add(timeseries('Packets per second by RX queue', 'q_ipackets per queue (PerQueue; only '
                     'queues that moved a packet).', 'pps',
                     targets((f'rate({s("collectd_dpdktel_stats_queue_packets_rx_total", "port")}'
                              f'{q}', '{{type}}'))), 6, 8)
    L.add(timeseries('Packets per second by TX queue', 'q_opackets per queue.', 'pps',
                     targets((f'rate({s("collectd_dpdktel_stats_queue_packets_tx_total", "port")}'
                              f'{q}', '{{type}}'))), 6, 8)
    L.add(timeseries('Bits per second by queue', 'q_ibytes and q_obytes per queue, x 8.',
                     'bps',
                     targets((f'rate({s("collectd_dpdktel_stats_queue_octets_rx_total", "port")}'
                              f'{q} * 8', '{{type}} rx'),
                             (f'rate({s("collectd_dpdktel_stats_queue_octets_tx_total", "port")}'
                              f'{q} * 8', '{{type}} tx'))), 6, 8)
    L.add(timeseries('Errors per second by queue', 'q_errors per queue.', 'pps',
                     targets((f'rate({s("collectd_dpdktel_stats_queue_errors_total", "port")}'
                              f'{q}', '{{type}}')), thresholds('green', 1, 'red')), 6, 8)
    L.add(timeseries('RX queue imbalance', 'The busiest rx queue\'s rate over the mean of the '
                     'port\'s rx queues (1: even; N: everything on one of N queues), and its '
                     'share of the port\'s packets. DpdkRxQueueImbalance warns when it carries '
                     'more than half and 1.5 times its share for 10 minutes.', 'none',
                     targets((s('dpdktel:port_rx_queue_imbalance:ratio_rate5m', 'port'),
                              'busiest / mean'),
                             (s('dpdktel:port_rx_queue_busiest:ratio_rate5m', 'port'),
                              'busiest share')),
                     thresholds('green', 1.5, 'orange'), min=0, threshold_style='line',
                     decimals=2), 12, 8)
    L.add(table('RX queues and the lcores polling them', 'Each rx queue of the port and the '
                'lcore that polls it (lcore_rx_queue, where the application says: '
                'dpdktel-fwd; testpmd and OVS-DPDK do not), with the lcore\'s busy share. '
                'Click a row for the lcore dashboard.', 'percentunit',
                [target(f'{s("dpdktel:lcore_busy:ratio_rate1m")} * on (job, instance, '
                        f'dpdk_instance, lcore) group_right () '
                        f'{s("dpdktel:lcore_rx_queue:info", "port")}', ref='A', table=True)],
                {'excludeByName': {'Time': True, 'job': True, 'type': True,
                                   'instance': True, 'dpdk_instance': True, 'port': True,
                                   '__name__': True},
                 'indexByName': {'queue': 0, 'lcore': 1, 'Value': 2},
                 'renameByName': {'Value': 'lcore busy'}},
                links=[row_link('Lcore dashboard', 'dpdktel-lcores', 'instance',
                                'dpdk_instance', 'lcore')]), 12, 8)
    L.row('Extended counters')
    xstat = s('collectd_dpdktel_stats_xstat_total', 'port')
    L.add(table('Extended counters', 'Every extended counter (/ethdev/xstats, filtered by '
                'XStatsInclude/XStatsExclude): its increase over the selected range and its '
                'current rate.', 'short',
                [target(f'increase({xstat}[$__range])', ref='A', table=True),
                 target(f'rate({xstat}[$__rate_interval])', ref='B', table=True)],
                {'excludeByName': {'Time': True, 'dpdk_instance': True, 'instance': True,
                                   'job': True, 'port': True},
                 'renameByName': {'type': 'counter', 'Value #A': 'in range',
                                  'Value #B': 'per second'}}), 24, 10)
    changes = prom_annotation(
        'Link changes',
        f'increase({s("collectd_dpdktel_events_link_changes_total", "port")}'
        '[$__rate_interval]) > 0',
        'Link change on port {{port}}', 'orange', 'port')
    down = prom_annotation('Link down', s('collectd_dpdktel_events_link_status', 'port') +
                           ' == 0', 'Link down on port {{port}}', 'red', 'port')
    return dashboard('dpdktel-port', 'dpdktel / Port',
                     'One DPDK port: link, traffic, utilisation, drops, errors, queues and '
                     'extended counters, with link changes as annotations.', L,
                     variables(s, [('port', 'Port', 'collectd_dpdktel_stats_if_packets_rx_total')]),
                     annotations(changes, down))


def lcores():
    s = Sel(multi={'lcore'}, single={'instance', 'dpdk_instance'})
    L = Layout()
    L.row('State')
    L.add(state_timeline('Lcore state', 'lcore_state: STARTING, RUNNING, IDLE (alive, '
                         'nothing to do), STALLED (no heartbeat for StallThreshold), EXITED.',
                         targets((s('collectd_dpdktel_events_lcore_state', 'lcore'),
                                  'lcore {{lcore}}')),
                         LCORE_MAPPINGS, thresholds('green', 3, 'red')), 16, 8)
    L.add(stat('Stalls in range', 'Stall episodes per lcore in the selected time range, also '
               'those shorter than a scrape.', 'none',
               targets((f'increase({s("collectd_dpdktel_events_stalls_total", "lcore")}'
                        '[$__range])', 'lcore {{lcore}}')),
               thresholds('green', 1, 'red'), decimals=0), 8, 8)
    L.row('Health')
    L.add(timeseries('Heartbeat age', 'Time since each lcore last advanced its heartbeat. '
                     'dpdktel-fwd beats every 10 ms and counts a stall from 100 ms.', 's',
                     targets((s('collectd_dpdktel_events_heartbeat_age', 'lcore'),
                              'lcore {{lcore}}')),
                     thresholds('green', 0.05, 'orange', 0.1, 'red'), min=0,
                     threshold_style='line'), 8, 8)
    L.add(timeseries('Busy', 'Share of TSC cycles spent on packets since the previous read '
                     '(dpdktel_stats percent/busy).', 'percent',
                     targets((s('collectd_dpdktel_stats_percent', 'lcore', type='busy'),
                              'lcore {{lcore}}')),
                     thresholds('green', 80, 'orange', 95, 'red'), min=0, max=100,
                     threshold_style='line'), 8, 8)
    L.add(timeseries('Stalls', 'Stall episodes per lcore in each $__rate_interval.', 'none',
                     targets((f'increase({s("collectd_dpdktel_events_stalls_total", "lcore")}'
                              '[$__rate_interval])', 'lcore {{lcore}}')),
                     thresholds('green', 1, 'red'), decimals=0), 8, 8)
    L.row('Traffic')
    rl = '[$__rate_interval])'
    L.add(timeseries('Packets per second by lcore', 'Packets each lcore received and sent.',
                     'pps',
                     targets((f'rate({s("collectd_dpdktel_stats_lcore_packets_rx_total", "lcore")}'
                              f'{rl}', 'lcore {{lcore}} rx'),
                             (f'rate({s("collectd_dpdktel_stats_lcore_packets_tx_total", "lcore")}'
                              f'{rl}', 'lcore {{lcore}} tx'))), 12, 8)
    L.add(timeseries('Busy cycles', 'Busy over total TSC cycles from the cycle counters '
                     '(lcore_cycles), averaged over $__rate_interval. DpdkLcoreSaturated warns '
                     'above 90 % for 5 minutes.', 'percentunit',
                     targets((f'rate({s("collectd_dpdktel_stats_lcore_cycles_busy_total", "lcore")}'
                              f'{rl} / rate('
                              f'{s("collectd_dpdktel_stats_lcore_cycles_total_total", "lcore")}'
                              f'{rl}', 'lcore {{lcore}}')),
                     thresholds('green', 0.8, 'orange', 0.9, 'red'), min=0, max=1,
                     threshold_style='line'), 12, 8)
    L.row('Rx queues')
    L.add(table('Rx queues each lcore polls', 'Which rx queue of which port each lcore polls '
                '(lcore_rx_queue, where the application says: dpdktel-fwd), with the port\'s '
                'rx_missed per second: a saturated lcore leaves those queues to overflow. '
                'Click a row for the port dashboard.', 'pps',
                [target(f'sort_desc({s("dpdktel:lcore_rx_queue_missed_pps:rate5m", "lcore")})',
                        ref='A', table=True)],
                {'excludeByName': {'Time': True, 'job': True, 'type': True,
                                   'instance': True, 'dpdk_instance': True,
                                   '__name__': True},
                 'indexByName': {'lcore': 0, 'port': 1, 'queue': 2, 'Value': 3},
                 'renameByName': {'Value': 'port rx_missed/s'}},
                links=[row_link('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance',
                                'port')]), 24, 6)
    return dashboard('dpdktel-lcores', 'dpdktel / Lcores',
                     'The forwarding lcores of one DPDK application: state, heartbeat age, '
                     'busy share, stalls and packets per lcore.', L,
                     variables(s, [('lcore', 'Lcore', 'collectd_dpdktel_events_lcore_state')]),
                     annotations(prom_annotation(
                         'lcore stalls',
                         f'increase({s("collectd_dpdktel_events_stalls_total", "lcore")}'
                         '[$__rate_interval]) > 0',
                         'Stall on lcore {{lcore}}', 'red', 'lcore')))


DASHBOARDS = {'dpdktel-overview': overview, 'dpdktel-port': port, 'dpdktel-lcores': lcores}


def render(build):
    return json.dumps(build(), indent=2, ensure_ascii=False) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true',
                    help='compare with the committed files instead of writing them')
    ap.add_argument('--out', default=OUT, help='directory of the JSON files')
    args = ap.parse_args()
    stale = 0
    for uid, build in DASHBOARDS.items():
        path = os.path.join(args.out, uid + '.json')
        text = render(build)
        if not args.check:
            with open(path, 'w') as f:
                f.write(text)
            continue
        try:
            with open(path) as f:
                have = f.read()
        except FileNotFoundError:
            have = ''
        if have != text:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), text.splitlines(True), path, 'generated', n=2))
    if stale:
        print(f'{stale} dashboard(s) differ from grafana/generate_dashboards.py: run it and '
              'commit the result', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
