// dpdktel / Lcores: the forwarding lcores of one DPDK application (docs/grafana.md).
import { RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { annotations, base, DashboardFile, finish, promAnnotation, variables } from './dashboard';
import {
  LCORE_NAMES, lines, organize, queries, rowLink, stat, stateTimeline, table, tableQueries,
  thresholds, timeseries,
} from './panels';
import { selector } from './promql';

export function lcores(): DashboardFile {
  // One host, one DPDK instance, one or several lcores.
  const s = selector<'lcore'>(['lcore']);
  const stalls = s('collectd_dpdktel_events_stalls_total', 'lcore');
  const rate = (metric: string): string => `rate(${s(metric, 'lcore')}[$__rate_interval])`;

  const d = base('dpdktel-lcores', 'dpdktel / Lcores',
    'The forwarding lcores of one DPDK application: state, heartbeat age, busy share, stalls ' +
    'and packets per lcore.')
    .variables(variables(s, ['lcore', 'Lcore', 'collectd_dpdktel_events_lcore_state']))
    .annotations(annotations(
      promAnnotation('lcore stalls', `increase(${stalls}[$__rate_interval]) > 0`,
        'Stall on lcore {{lcore}}', 'red', 'lcore')));

  d.withRow(new RowBuilder('State'));
  d.withPanel(stateTimeline('Lcore state',
    'lcore_state: STARTING, RUNNING, IDLE (alive, nothing to do), STALLED (no heartbeat for ' +
    'StallThreshold), EXITED.')
    .targets(queries([s('collectd_dpdktel_events_lcore_state', 'lcore'), 'lcore {{lcore}}']))
    .mappings(LCORE_NAMES)
    .thresholds(thresholds('green', [3, 'red']))
    .span(16).height(8));
  d.withPanel(stat('Stalls in range',
    'Stall episodes per lcore in the selected time range, also those shorter than a scrape.',
    'none')
    .targets(queries([`increase(${stalls}[$__range])`, 'lcore {{lcore}}']))
    .thresholds(thresholds('green', [1, 'red']))
    .decimals(0)
    .span(8).height(8));

  d.withRow(new RowBuilder('Health'));
  d.withPanel(timeseries('Heartbeat age',
    'Time since each lcore last advanced its heartbeat. dpdktel-fwd beats every 10 ms and ' +
    'counts a stall from 100 ms.', 's')
    .targets(queries([s('collectd_dpdktel_events_heartbeat_age', 'lcore'), 'lcore {{lcore}}']))
    .thresholds(thresholds('green', [0.05, 'orange'], [0.1, 'red']))
    .thresholdsStyle(lines())
    .min(0)
    .span(8).height(8));
  d.withPanel(timeseries('Busy',
    'Share of TSC cycles spent on packets since the previous read (dpdktel_stats ' +
    'percent/busy).', 'percent')
    .targets(queries([s('collectd_dpdktel_stats_percent', 'lcore', { type: 'busy' }),
      'lcore {{lcore}}']))
    .thresholds(thresholds('green', [80, 'orange'], [95, 'red']))
    .thresholdsStyle(lines())
    .min(0).max(100)
    .span(8).height(8));
  d.withPanel(timeseries('Stalls', 'Stall episodes per lcore in each $__rate_interval.', 'none')
    .targets(queries([`increase(${stalls}[$__rate_interval])`, 'lcore {{lcore}}']))
    .thresholds(thresholds('green', [1, 'red']))
    .decimals(0)
    .span(8).height(8));

  d.withRow(new RowBuilder('Traffic'));
  d.withPanel(timeseries('Packets per second by lcore',
    'Packets each lcore received and sent.', 'pps')
    .targets(queries([rate('collectd_dpdktel_stats_lcore_packets_rx_total'), 'lcore {{lcore}} rx'],
      [rate('collectd_dpdktel_stats_lcore_packets_tx_total'), 'lcore {{lcore}} tx']))
    .span(12).height(8));
  d.withPanel(timeseries('Busy cycles',
    'Busy over total TSC cycles from the cycle counters (lcore_cycles), averaged over ' +
    '$__rate_interval. DpdkLcoreSaturated warns above 90 % for 5 minutes.', 'percentunit')
    .targets(queries([`${rate('collectd_dpdktel_stats_lcore_cycles_busy_total')} / ` +
      `${rate('collectd_dpdktel_stats_lcore_cycles_total_total')}`, 'lcore {{lcore}}']))
    .thresholds(thresholds('green', [0.8, 'orange'], [0.9, 'red']))
    .thresholdsStyle(lines())
    .min(0).max(1)
    .span(12).height(8));

  d.withRow(new RowBuilder('Rx queues'));
  d.withPanel(table('Rx queues each lcore polls',
    'Which rx queue of which port each lcore polls (lcore_rx_queue, where the application ' +
    'says: dpdktel-fwd), with the port\'s rx_missed per second: a saturated lcore leaves ' +
    'those queues to overflow. Click a row for the port dashboard.', 'pps')
    .targets(tableQueries(
      `sort_desc(${s('dpdktel:lcore_rx_queue_missed_pps:rate5m', 'lcore')})`))
    .withTransformation(organize({
      excludeByName: {
        Time: true, job: true, type: true, instance: true, dpdk_instance: true, __name__: true,
      },
      indexByName: { lcore: 0, port: 1, queue: 2, Value: 3 },
      renameByName: { Value: 'port rx_missed/s' },
    }))
    .dataLinks([rowLink('Port dashboard', 'dpdktel-port', 'instance', 'dpdk_instance', 'port')])
    .span(24).height(6));

  return finish(d);
}
