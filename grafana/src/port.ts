// dpdktel / Port: one port of one DPDK application (docs/grafana.md).
import { RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { annotations, base, DashboardFile, finish, promAnnotation, variables } from './dashboard';
import {
  LINK_NAMES, lines, organize, queries, rowLink, stack, stat, table, tableQueries, thresholds,
  timeseries,
} from './panels';
import { infoLabel, selector } from './promql';

export function port(): DashboardFile {
  // One host, one DPDK instance, one port.
  const s = selector<'port'>([]);
  const speed = `(${s('collectd_dpdktel_events_link_speed', 'port')} or ` +
    `${s('collectd_dpdktel_stats_link_speed', 'port')})`;
  const changes = s('collectd_dpdktel_events_link_changes_total', 'port');

  const d = base('dpdktel-port', 'dpdktel / Port',
    'One DPDK port: link, traffic, utilisation, drops, errors, queues and extended counters, ' +
    'with link changes as annotations.')
    .variables(variables(s, ['port', 'Port', 'collectd_dpdktel_stats_if_packets_rx_total']))
    .annotations(annotations(
      promAnnotation('Link changes', `increase(${changes}[$__rate_interval]) > 0`,
        'Link change on port {{port}}', 'orange', 'port'),
      promAnnotation('Link down', `${s('collectd_dpdktel_events_link_status', 'port')} == 0`,
        'Link down on port {{port}}', 'red', 'port')));

  d.withRow(new RowBuilder('Link'));
  d.withPanel(stat('Link', 'link_status: UP or DOWN (dpdktel_events).', 'none')
    .targets(queries([s('collectd_dpdktel_events_link_status', 'port'), '']))
    .thresholds(thresholds('red', [1, 'green']))
    .mappings(LINK_NAMES)
    .span(4).height(4));
  d.withPanel(stat('Link speed', 'Negotiated speed; 0 while the link is down.', 'bps')
    .targets(queries([`${speed} * 1e6`, '']))
    .thresholds(thresholds('red', [1, 'green']))
    .span(4).height(4));
  d.withPanel(stat('Link changes in range',
    'Link state changes in the selected time range (link_changes, also those between two ' +
    'polls). DpdkLinkFlapping fires at 5 in 10 minutes.', 'none')
    .targets(queries([`increase(${changes}[$__range])`, '']))
    .thresholds(thresholds('green', [1, 'yellow'], [5, 'red']))
    .decimals(0)
    .span(4).height(4));
  d.withPanel(stat('Queues', 'Configured RX and TX queues (/ethdev/info).', 'none')
    .targets(queries([s('collectd_dpdktel_stats_port_queues_rx', 'port'), 'rx'],
      [s('collectd_dpdktel_stats_port_queues_tx', 'port'), 'tx']))
    .span(6).height(4));
  d.withPanel(stat('MTU', 'MTU of the port (/ethdev/info).', 'bytes')
    .targets(queries([s('collectd_dpdktel_stats_port_mtu', 'port'), '']))
    .span(6).height(4));
  let info = s('collectd_dpdktel_stats_port_info', 'port');
  ['device', 'driver', 'mac', 'numa'].forEach((label, i) => {
    info = infoLabel(info, label, i);
  });
  d.withPanel(table('Device',
    'The names the port is known by (port_info, from /ethdev/info): device name, driver (of a ' +
    'virtual device from its name, of a PCI device the kernel driver it is bound to), MAC ' +
    'address and NUMA node.', 'none')
    .targets(tableQueries(info))
    .withTransformation(organize({
      excludeByName: {
        Time: true, Value: true, __name__: true, job: true, type: true, instance: true,
        dpdk_instance: true, port: true,
      },
      indexByName: { device: 0, driver: 1, mac: 2, numa: 3 },
    }))
    .span(24).height(3));

  d.withRow(new RowBuilder('Traffic'));
  d.withPanel(timeseries('Packets per second',
    'Received (ipackets) and sent (opackets) packets per second.', 'pps')
    .targets(queries([s('dpdktel:port_rx_pps:rate1m', 'port'), 'rx'],
      [s('dpdktel:port_tx_pps:rate1m', 'port'), 'tx']))
    .span(8).height(8));
  d.withPanel(timeseries('Bits per second',
    'Received and sent bits per second (ibytes, obytes x 8; without preamble and inter-frame ' +
    'gap).', 'bps')
    .targets(queries([s('dpdktel:port_rx_bps:rate1m', 'port'), 'rx'],
      [s('dpdktel:port_tx_bps:rate1m', 'port'), 'tx']))
    .span(8).height(8));
  d.withPanel(timeseries('Utilisation',
    'Bit rate as a share of the link speed; no value while the link is down.', 'percentunit')
    .targets(queries([s('dpdktel:port_rx_utilisation:ratio_rate1m', 'port'), 'rx'],
      [s('dpdktel:port_tx_utilisation:ratio_rate1m', 'port'), 'tx']))
    .thresholds(thresholds('green', [0.8, 'orange'], [0.95, 'red']))
    .thresholdsStyle(lines())
    .min(0).max(1)
    .span(8).height(8));

  d.withRow(new RowBuilder('Drops and errors'));
  d.withPanel(timeseries('Missed per second',
    'imissed: packets the NIC dropped for lack of a free RX descriptor (the lcores do not ' +
    'keep up).', 'pps')
    .targets(queries([s('dpdktel:port_rx_missed_pps:rate1m', 'port'), 'missed']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(6).height(8));
  d.withPanel(timeseries('No mbuf per second',
    'rx_nombuf: mbuf allocation failures on receive (mempool empty).', 'pps')
    .targets(queries([s('dpdktel:port_rx_nombuf_pps:rate1m', 'port'), 'nombuf']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(6).height(8));
  d.withPanel(timeseries('Errors per second',
    'ierrors and oerrors: erroneous packets on receive and send.', 'pps')
    .targets(queries([s('dpdktel:port_rx_errors_pps:rate1m', 'port'), 'rx errors'],
      [s('dpdktel:port_tx_errors_pps:rate1m', 'port'), 'tx errors'],
      [s('dpdktel:port_tx_dropped_pps:rate1m', 'port'), 'tx dropped']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(6).height(8));
  d.withPanel(timeseries('Drop ratio',
    'Share of the arriving packets lost on receive (missed + nombuf) and of the packets to ' +
    'send that were dropped. The alerts fire above 0.1 % held for 5 minutes.', 'percentunit')
    .targets(queries([s('dpdktel:port_rx_drop_ratio:rate1m', 'port'), 'rx'],
      [s('dpdktel:port_tx_drop_ratio:rate1m', 'port'), 'tx']))
    .thresholds(thresholds('green', [0.001, 'orange'], [0.01, 'red']))
    .thresholdsStyle(lines())
    .min(0)
    .span(6).height(8));

  d.withRow(new RowBuilder('Loss by reason'));
  const drops = s('collectd_dpdktel_stats_drops_total', 'port');
  d.withPanel(timeseries('Drops by reason',
    'Every packet the port loses, once, per second by reason and driver counter (drops: ' +
    '"<reason>" what the generic counter has left, "<reason>.<xstat>" a driver counter that ' +
    'splits or adds to it: docs/dpdktel_stats.md, "Drop reasons"). Stacked, the total is ' +
    'what the port loses.', 'pps')
    .targets(queries([`rate(${drops}[$__rate_interval])`, '{{type}}']))
    .thresholds(thresholds('green', [1, 'red']))
    .stacking(stack()).fillOpacity(40)
    .span(12).height(8));
  d.withPanel(table('Lost in range',
    'Where the port lost packets in the selected time range: sum by (type) ' +
    '(increase(collectd_dpdktel_stats_drops_total{port=...}[$__range])), the reasons and ' +
    'driver counters, most first.', 'short')
    .targets(tableQueries(`sort_desc(sum by (type) (increase(${drops}[$__range])))`))
    .withTransformation(organize({
      excludeByName: { Time: true },
      renameByName: { type: 'reason / driver counter', Value: 'lost' },
    }))
    .decimals(0)
    .span(6).height(8));
  d.withPanel(timeseries('Delivered share',
    'Packets received and sent against those and every lost one, over 5 minutes and over an ' +
    'hour: the loss budget\'s measure (dpdktel:port_delivered:ratio_rate5m, ..._rate1h). ' +
    'DpdkLossBudgetBurn pages at 14.4 times the loss the objective allows.', 'percentunit')
    .targets(queries([s('dpdktel:port_delivered:ratio_rate5m', 'port'), '5 min'],
      [s('dpdktel:port_delivered:ratio_rate1h', 'port'), '1 h']))
    .thresholds(thresholds('red', [0.99, 'orange'], [0.999, 'green']))
    .thresholdsStyle(lines())
    .max(1)
    .span(6).height(8));

  d.withRow(new RowBuilder('Queues'));
  const rate = (metric: string): string => `rate(${s(metric, 'port')}[$__rate_interval])`;
  d.withPanel(timeseries('Packets per second by RX queue',
    'q_ipackets per queue (PerQueue; only queues that moved a packet).', 'pps')
    .targets(queries([rate('collectd_dpdktel_stats_queue_packets_rx_total'), '{{type}}']))
    .span(6).height(8));
  d.withPanel(timeseries('Packets per second by TX queue', 'q_opackets per queue.', 'pps')
    .targets(queries([rate('collectd_dpdktel_stats_queue_packets_tx_total'), '{{type}}']))
    .span(6).height(8));
  d.withPanel(timeseries('Bits per second by queue', 'q_ibytes and q_obytes per queue, x 8.',
    'bps')
    .targets(queries([`${rate('collectd_dpdktel_stats_queue_octets_rx_total')} * 8`,
      '{{type}} rx'],
    [`${rate('collectd_dpdktel_stats_queue_octets_tx_total')} * 8`, '{{type}} tx']))
    .span(6).height(8));
  d.withPanel(timeseries('Errors per second by queue', 'q_errors per queue.', 'pps')
    .targets(queries([rate('collectd_dpdktel_stats_queue_errors_total'), '{{type}}']))
    .thresholds(thresholds('green', [1, 'red']))
    .span(6).height(8));
  d.withPanel(timeseries('RX queue imbalance',
    'The busiest rx queue\'s rate over the mean of the port\'s rx queues (1: even; N: ' +
    'everything on one of N queues), and its share of the port\'s packets. ' +
    'DpdkRxQueueImbalance warns when it carries more than half and 1.5 times its share for ' +
    '10 minutes.', 'none')
    .targets(queries(
      [s('dpdktel:port_rx_queue_imbalance:ratio_rate5m', 'port'), 'busiest / mean'],
      [s('dpdktel:port_rx_queue_busiest:ratio_rate5m', 'port'), 'busiest share']))
    .thresholds(thresholds('green', [1.5, 'orange']))
    .thresholdsStyle(lines())
    .min(0)
    .decimals(2)
    .span(12).height(8));
  d.withPanel(table('RX queues and the lcores polling them',
    'Each rx queue of the port and the lcore that polls it (lcore_rx_queue, where the ' +
    'application says: dpdktel-fwd; testpmd and OVS-DPDK do not), with the lcore\'s busy ' +
    'share. Click a row for the lcore dashboard.', 'percentunit')
    .targets(tableQueries(`${s('dpdktel:lcore_busy:ratio_rate1m')} * on (job, instance, ` +
      `dpdk_instance, lcore) group_right () ${s('dpdktel:lcore_rx_queue:info', 'port')}`))
    .withTransformation(organize({
      excludeByName: {
        Time: true, job: true, type: true, instance: true, dpdk_instance: true, port: true,
        __name__: true,
      },
      indexByName: { queue: 0, lcore: 1, Value: 2 },
      renameByName: { Value: 'lcore busy' },
    }))
    .dataLinks([
      rowLink('Lcore dashboard', 'dpdktel-lcores', 'instance', 'dpdk_instance', 'lcore')])
    .span(12).height(8));

  d.withRow(new RowBuilder('Extended counters'));
  const xstat = s('collectd_dpdktel_stats_xstat_total', 'port');
  d.withPanel(table('Extended counters',
    'Every extended counter (/ethdev/xstats, filtered by XStatsInclude/XStatsExclude): its ' +
    'increase over the selected range and its current rate.', 'short')
    .targets(tableQueries(`increase(${xstat}[$__range])`, `rate(${xstat}[$__rate_interval])`))
    .withTransformation(organize({
      excludeByName: { Time: true, dpdk_instance: true, instance: true, job: true, port: true },
      renameByName: { type: 'counter', 'Value #A': 'in range', 'Value #B': 'per second' },
    }))
    .span(24).height(10));

  return finish(d);
}
