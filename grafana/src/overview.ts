// dpdktel / Overview: every DPDK application the collectd plugins see (docs/grafana.md).
import { RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { annotations, base, DashboardFile, finish, promAnnotation, variables } from './dashboard';
import {
  INSTANCE_NAMES, LCORE_NAMES, LINK_NAMES, lines, organize, queries, rowLink, seriesLink, stack,
  stat, stateTimeline, table, tableQueries, thresholds, timeseries,
} from './panels';
import { selector, withDevice } from './promql';

export function overview(): DashboardFile {
  // Host and DPDK instance may be several or All.
  const s = selector(['instance', 'dpdk_instance']);
  const up = `(${s('collectd_dpdktel_events_up')} or ${s('collectd_dpdktel_stats_up')})`;
  const hung = s('collectd_dpdktel_events_not_responding');
  const same = 'on (job, instance, dpdk_instance)';
  const alerts = 'ALERTS{alertname=~"Dpdk.*", alertstate="firing", instance=~"$instance"}';
  const by = 'sum by (instance, dpdk_instance)';
  const toPort = seriesLink('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance', 'port');
  const rowToPort = rowLink('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance', 'port');

  const d = base('dpdktel-overview', 'dpdktel / Overview',
    'DPDK applications seen by the dpdktel collectd plugins: health, link and lcore state, ' +
    'traffic and drops per instance, memory and rings.')
    .variables(variables(s))
    .annotations(annotations(
      promAnnotation('dpdktel alerts', alerts, '{{alertname}}', 'red',
        'alertname,dpdk_instance,port,lcore')));

  d.withRow(new RowBuilder('Health'));
  d.withPanel(stat('Instances up',
    'DPDK applications whose telemetry socket collectd reaches (up = 1 from dpdktel_events, ' +
    'else dpdktel_stats).', 'none')
    .targets(queries([`sum(${up})`, '']))
    .thresholds(thresholds('red', [1, 'green']))
    .span(4).height(4));
  d.withPanel(stat('Instances down',
    'DPDK applications collectd does not reach (up = 0) that are not counted as not ' +
    'responding: gone, or their socket refuses. DpdkInstanceDown fires after 30 s.', 'none')
    .targets(queries([`sum((1 - ${up}) unless ${same} ${hung} == 1)`, '']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(4).height(4));
  d.withPanel(stat('Instances not responding',
    'DPDK applications whose process runs but whose telemetry does not answer ' +
    '(not_responding = 1, dpdktel_events; up is 0 meanwhile and their ports and lcores are ' +
    'not reported). DpdkInstanceNotResponding fires after 1 min.', 'none')
    .targets(queries([`sum(${hung})`, '']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(4).height(4));
  d.withPanel(stat('Ports down',
    'Ports whose link is down (link_status 0). DpdkLinkDown fires after 20 s.', 'none')
    .targets(queries([`sum(1 - ${s('collectd_dpdktel_events_link_status')})`, '']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(4).height(4));
  d.withPanel(stat('Lcores not running',
    'Lcores STALLED or EXITED (RUNNING and IDLE are healthy, STARTING lasts milliseconds).',
    'none')
    .targets(queries([`sum(${s('collectd_dpdktel_events_lcore_state')} >= bool 3)`, '']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(4).height(4));
  d.withPanel(stat('Firing alerts',
    'dpdktel alerts firing in Prometheus for the selected hosts (docs/alerts.md).', 'none')
    .targets(queries([`count(${alerts})`, '']))
    .thresholds(thresholds('green', [1, 'red']))
    .noValue('0')
    .span(4).height(4));
  d.withPanel(table('Firing alerts by port and lcore',
    'Each firing dpdktel alert with its labels, and the device name of its port (port_info); ' +
    'the runbook is in docs/alerts.md under the alert name.', 'none')
    .targets(tableQueries(withDevice(alerts, s)))
    .withTransformation(organize({
      excludeByName: { Time: true, Value: true, __name__: true, alertstate: true, job: true },
      indexByName: {
        alertname: 0, severity: 1, instance: 2, dpdk_instance: 3, port: 4, device: 5, lcore: 6,
      },
    }))
    .span(24).height(6));

  // Where is loss now: per port and reason, and the path port -> rx queues -> lcores.
  d.withRow(new RowBuilder('Loss'));
  const byReason = s('dpdktel:port_drops_by_reason_pps:rate5m');
  const lossKeys = 'instance, dpdk_instance, port, reason';
  d.withPanel(table('Loss now by port and reason',
    'Packets each port loses per second, by reason (drops: rx_missed, rx_nombuf, rx_errors, ' +
    'tx_errors, tx_full; each lost packet once, the driver counters that refine a reason ' +
    'summed into it), busiest first, with the device name. Click a row for the port ' +
    'dashboard.', 'pps')
    .targets(tableQueries(withDevice(`sort_desc(sum by (${lossKeys}, job) (${byReason}))`, s)))
    .withTransformation(organize({
      excludeByName: { Time: true, job: true },
      indexByName: { instance: 0, dpdk_instance: 1, port: 2, device: 3, reason: 4, Value: 5 },
      renameByName: { Value: 'lost per second' },
    }))
    .dataLinks([rowToPort])
    .span(12).height(8));
  d.withPanel(timeseries('Loss by port and reason',
    'The same over time, stacked: what each port lost per second, by reason ' +
    '(dpdktel:port_drops_by_reason_pps:rate5m). Click a series for its port.', 'pps')
    .targets(queries([`sum by (${lossKeys}) (${byReason})`,
      '{{instance}} {{dpdk_instance}} port {{port}} {{reason}}']))
    .thresholds(thresholds('green', [1, 'red']))
    .stacking(stack()).fillOpacity(40)
    .dataLinks([toPort])
    .span(12).height(8));
  d.withPanel(table('Rx queues, their lcores and rx_missed',
    'Which lcore polls which rx queue of which port (lcore_rx_queue, where the application ' +
    'says: dpdktel-fwd), with the port\'s rx_missed per second and the lcore\'s busy share. A ' +
    'saturated lcore (DpdkLcoreSaturated, over 90 % busy) leaves its queues to overflow: the ' +
    'NIC then misses at them. Click the row for the port, or see the lcore dashboard.', 'short')
    .targets(tableQueries(s('dpdktel:lcore_rx_queue_missed_pps:rate5m'),
      `${s('dpdktel:lcore_busy:ratio_rate1m')} * on (job, instance, dpdk_instance, lcore) ` +
      `group_right () ${s('dpdktel:lcore_rx_queue:info')}`))
    .withTransformation(organize({
      excludeByName: { Time: true, job: true, type: true, __name__: true },
      indexByName: {
        instance: 0, dpdk_instance: 1, port: 2, queue: 3, lcore: 4, 'Value #A': 5, 'Value #B': 6,
      },
      renameByName: { 'Value #A': 'port rx_missed/s', 'Value #B': 'lcore busy' },
    }))
    .dataLinks([rowToPort,
      rowLink('Lcore dashboard', 'dpdktel-lcores', 'instance', 'dpdk_instance', 'lcore')])
    .span(12).height(8));
  d.withPanel(timeseries('Delivered share by port',
    'Packets each port received and sent against those and every lost one, over the last ' +
    'hour (dpdktel:port_delivered:ratio_rate1h): the loss budget\'s measure. ' +
    'DpdkLossBudgetBurn pages when a port loses 14.4 times what the objective allows ' +
    '(docs/alerts.md, "Setting the loss objective").', 'percentunit')
    .targets(queries([s('dpdktel:port_delivered:ratio_rate1h'),
      '{{instance}} {{dpdk_instance}} port {{port}}']))
    .thresholds(thresholds('red', [0.99, 'orange'], [0.999, 'green']))
    .thresholdsStyle(lines())
    .max(1)
    .dataLinks([toPort])
    .span(12).height(8));

  d.withRow(new RowBuilder('State'));
  d.withPanel(stateTimeline('Instance state',
    'Each DPDK application: UP, DOWN (gone, or its socket refuses) or NOT RESPONDING (its ' +
    'process runs, its telemetry does not answer). up from dpdktel_events, else ' +
    'dpdktel_stats, plus 2 while dpdktel_events reports not_responding.')
    .targets(queries([`(${s('collectd_dpdktel_events_up')} + 2 * ${hung}) or ${up}`,
      '{{instance}} {{dpdk_instance}}']))
    .mappings(INSTANCE_NAMES)
    .thresholds(thresholds('red', [1, 'green'], [2, 'orange']))
    .span(24).height(6));
  d.withPanel(stateTimeline('Link state',
    'link_status of every port: UP or DOWN, with its device name (port_info). Click a port ' +
    'for its dashboard.')
    .targets(queries([withDevice(s('collectd_dpdktel_events_link_status'), s),
      '{{instance}} {{dpdk_instance}} port {{port}} {{device}}']))
    .mappings(LINK_NAMES)
    .thresholds(thresholds('red', [1, 'green']))
    .dataLinks([toPort])
    .span(12).height(8));
  d.withPanel(stateTimeline('Lcore state',
    'lcore_state of every lcore: STARTING, RUNNING, IDLE, STALLED, EXITED. Click an lcore for ' +
    'the lcore dashboard.')
    .targets(queries([s('collectd_dpdktel_events_lcore_state'),
      '{{instance}} {{dpdk_instance}} lcore {{lcore}}']))
    .mappings(LCORE_NAMES)
    .thresholds(thresholds('green', [3, 'red']))
    .dataLinks([
      seriesLink('Lcore dashboard', 'dpdktel-lcores', 'instance', 'dpdk_instance', 'lcore')])
    .span(12).height(8));

  d.withRow(new RowBuilder('Traffic'));
  d.withPanel(timeseries('Packets per second by instance',
    'Sum over the ports of each DPDK instance (recording rules dpdktel:port_*_pps:rate1m).',
    'pps')
    .targets(queries(
      [`${by} (${s('dpdktel:port_rx_pps:rate1m')})`, '{{instance}} {{dpdk_instance}} rx'],
      [`${by} (${s('dpdktel:port_tx_pps:rate1m')})`, '{{instance}} {{dpdk_instance}} tx']))
    .span(8).height(8));
  d.withPanel(timeseries('Bits per second by instance',
    'Sum over the ports of each DPDK instance (dpdktel:port_*_bps:rate1m).', 'bps')
    .targets(queries(
      [`${by} (${s('dpdktel:port_rx_bps:rate1m')})`, '{{instance}} {{dpdk_instance}} rx'],
      [`${by} (${s('dpdktel:port_tx_bps:rate1m')})`, '{{instance}} {{dpdk_instance}} tx']))
    .span(8).height(8));
  d.withPanel(timeseries('Drops per second by instance',
    'Packets lost on receive (imissed + rx_nombuf) and on send (tx_dropped), summed over the ' +
    'ports of each DPDK instance.', 'pps')
    .targets(queries(
      [`${by} (${s('dpdktel:port_rx_dropped_pps:rate1m')})`,
        '{{instance}} {{dpdk_instance}} rx dropped'],
      [`${by} (${s('dpdktel:port_tx_dropped_pps:rate1m')})`,
        '{{instance}} {{dpdk_instance}} tx dropped']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(8).height(8));

  // Per instance: dpdktel_stats with MemoryStats (docs/metrics.md); mempool counts from DPDK
  // 23.03, rings from 24.03.
  d.withRow(new RowBuilder('Memory and rings'));
  const inUse = s('collectd_dpdktel_stats_mempool_use_in_use');
  const avail = s('collectd_dpdktel_stats_mempool_use_available');
  const pool = '{{instance}} {{dpdk_instance}} {{type}}';
  d.withPanel(timeseries('Mempool objects in use',
    'Share of each mempool\'s objects in use: neither in the pool nor in an lcore cache ' +
    '(mempool_use, DPDK 23.03 and later). DpdkMempoolNearlyExhausted fires above 90 % for ' +
    '5 min.', 'percentunit')
    .targets(queries([`${inUse} / (${inUse} + ${avail})`, pool]))
    .thresholds(thresholds('green', [0.9, 'red']))
    .thresholdsStyle(lines())
    .min(0).max(1)
    .span(8).height(8));
  d.withPanel(timeseries('Mempool objects',
    'Objects in use and available (in the pool or an lcore cache) of each mempool: a climb ' +
    'that never comes back is a leak.', 'short')
    .targets(queries([inUse, `${pool} in use`], [avail, `${pool} available`]))
    .span(8).height(8));
  const used = s('collectd_dpdktel_stats_ring_entries_used');
  const cap = s('collectd_dpdktel_stats_ring_entries_capacity');
  d.withPanel(timeseries('Ring fill',
    'used_count / capacity of each ring (DPDK 24.03 and later). A mempool\'s own ring ' +
    '(MP_<pool>) holds its free objects: it is full when the pool is idle, and ' +
    'DpdkRingNearlyFull leaves it out. Any other ring above 90 % for 2 min fires ' +
    'DpdkRingNearlyFull.', 'percentunit')
    .targets(queries([`${used} / ${cap}`, pool]))
    .thresholds(thresholds('green', [0.9, 'red']))
    .thresholdsStyle(lines())
    .min(0).max(1)
    .span(8).height(8));
  d.withPanel(timeseries('Heap and memzones',
    'Bytes allocated from each EAL heap (heap_bytes) and reserved in memzones (bytes, type ' +
    'memzones), against the heaps\' size.', 'bytes')
    .targets(queries(
      [s('collectd_dpdktel_stats_heap_bytes_alloc'),
        '{{instance}} {{dpdk_instance}} {{type}} allocated'],
      [s('collectd_dpdktel_stats_heap_bytes_size'),
        '{{instance}} {{dpdk_instance}} {{type}} size'],
      [s('collectd_dpdktel_stats_bytes', { type: 'memzones' }),
        '{{instance}} {{dpdk_instance}} memzones']))
    .span(12).height(8));
  d.withPanel(timeseries('Memzones',
    'Number of memzones reserved (count, type memzones).', 'short')
    .targets(queries([s('collectd_dpdktel_stats_count', { type: 'memzones' }),
      '{{instance}} {{dpdk_instance}}']))
    .span(12).height(8));

  // What the monitoring itself can see, and what it costs the application (issue 31):
  // docs/alerts.md "Timing"; DpdkTelemetryDegraded fires beyond these bounds.
  d.withRow(new RowBuilder('Detection and cost'));
  const app = '{{instance}} {{dpdk_instance}}';
  d.withPanel(timeseries('Link-down detection bound by port',
    'How late a link going down can be seen on each port (detection_bound, dpdktel_events): ' +
    'its link poll period plus Timeout, or about Timeout where the port\'s kernel netdev is ' +
    'followed. The alert timings assume at most 10 s (line); beyond, DpdkTelemetryDegraded ' +
    'fires with stretched="link": enable link-state interrupts, follow the netdev or raise ' +
    'PollLoad (docs/alerts.md, "Timing").', 's')
    .targets(queries([s('collectd_dpdktel_events_detection_bound', { type: 'link' }),
      `${app} port {{port}}`]))
    .thresholds(thresholds('green', [10, 'red']))
    .thresholdsStyle(lines())
    .min(0)
    .dataLinks([toPort])
    .span(8).height(8));
  d.withPanel(timeseries('Counter read intervals',
    'How often dpdktel_stats reads the basic counters (read) and the extended counters ' +
    '(xstats) of each application: collectd\'s Interval, or longer when ReadLoad stretches ' +
    'them. The 1-minute rate rules assume reads at most 30 s apart, the 5-minute ones 120 s ' +
    '(lines); beyond, DpdkTelemetryDegraded fires.', 's')
    .targets(queries(
      [s('collectd_dpdktel_stats_poll_interval', { type: 'read' }), `${app} counters`],
      [s('collectd_dpdktel_stats_poll_interval', { type: 'xstats' }), `${app} xstats`]))
    .thresholds(thresholds('green', [30, 'orange'], [120, 'red']))
    .thresholdsStyle(lines())
    .min(0)
    .span(8).height(8));
  d.withPanel(timeseries('Cost to the application',
    'What the dpdktel plugins cost each application\'s telemetry thread over the last 10 s, ' +
    'in percent of one core (app_load): the events plugin\'s polls against PollLoad, the ' +
    'stats plugin\'s reads against ReadLoad. A kind at its budget has its interval ' +
    'stretched (see the two panels beside).', 'percent')
    .targets(queries(
      [s('collectd_dpdktel_stats_app_load', { type: 'polls' }), `${app} polls`],
      [s('collectd_dpdktel_stats_app_load', { type: 'polls_budget' }), `${app} PollLoad`],
      [s('collectd_dpdktel_stats_app_load', { type: 'reads' }), `${app} reads`],
      [s('collectd_dpdktel_stats_app_load', { type: 'reads_budget' }), `${app} ReadLoad`]))
    .min(0)
    .span(8).height(8));

  return finish(d);
}
