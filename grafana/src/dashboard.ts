// What every dpdktel dashboard shares: its settings, the chained variables, the annotations,
// the cross-links, and finish(), which turns a DashboardBuilder into the committed file.
import * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { DS } from './panels';
import { Scope, Selector } from './promql';

// The release the dashboards are written for, as __requires names it. Grafana 10.4 writes
// schema version 39 (the SDK's default is older); a newer Grafana migrates it on load.
const GRAFANA = '10.4.0';
const SCHEMA_VERSION = 39;
const TAGS = ['dpdktel', 'dpdk', 'collectd'];

// A new dpdktel dashboard: add its variables, annotations, rows and panels, then finish() it.
export function base(uid: string, title: string, description: string): dashboard.DashboardBuilder {
  return new dashboard.DashboardBuilder(title)
    .uid(uid)
    .id(null)
    .description(description)
    .tags(TAGS)
    .readonly()
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .timezone('')
    .weekStart('')
    .fiscalYearStartMonth(0)
    .refresh('30s')
    .version(1)
    // Every dpdktel dashboard carries the tag: this one link lists the others, with the
    // current host/instance and time range.
    .link(new dashboard.DashboardLinkBuilder('dpdktel dashboards')
      .type(dashboard.DashboardLinkType.Dashboards)
      .tags(['dpdktel'])
      .icon('external link')
      .asDropdown(false)
      .includeVars(true)
      .keepTime(true)
      .targetBlank(false));
}

type Variable = cog.Builder<dashboard.VariableModel>;

function queryVariable(name: string, label: string, query: string, multi: boolean,
  sort: dashboard.VariableSort): Variable {
  const v = new dashboard.QueryVariableBuilder(name)
    .label(label)
    .datasource(DS)
    .query(query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .regex('')
    .sort(sort)
    .hide(dashboard.VariableHide.DontHide)
    .multi(multi)
    .includeAll(multi);
  return multi ? v.allValue('.+') : v;
}

// datasource, then host -> dpdk_instance, then the scope's variable (port or lcore), listed
// from the series of metric that match the variables before it.
export function variables<S extends Scope>(s: Selector<S>,
  ...scopes: [S, string, string][]): Variable[] {
  const multi = s.multi.has('instance');
  const op = multi ? '=~' : '=';
  const out: Variable[] = [
    new dashboard.DatasourceVariableBuilder('datasource')
      .label('Data source')
      .type('prometheus')
      .regex('')
      .hide(dashboard.VariableHide.DontHide)
      .multi(false)
      .includeAll(false),
    queryVariable('instance', 'Host', 'label_values(collectd_dpdktel_stats_up, instance)', multi,
      dashboard.VariableSort.AlphabeticalAsc),
    queryVariable('dpdk_instance', 'DPDK instance',
      `label_values(collectd_dpdktel_stats_up{instance${op}"$instance"}, dpdk_instance)`, multi,
      dashboard.VariableSort.AlphabeticalAsc),
  ];
  for (const [name, label, metric] of scopes) {
    out.push(queryVariable(name, label, `label_values(${s(metric)}, ${name})`, s.multi.has(name),
      dashboard.VariableSort.NumericalAsc));
  }
  return out;
}

// A Prometheus annotation. Its query fields belong to the Prometheus data source, not to the
// dashboard schema, so the SDK has no builder for them: Grafana's Prometheus data source reads
// them from the annotation (PrometheusAnnotationSupport.prepareAnnotation,
// packages/grafana-prometheus/src/annotations.ts).
interface PromAnnotation extends dashboard.AnnotationQuery {
  expr: string;
  step: string;
  tagKeys: string;
  textFormat: string;
  titleFormat: string;
  useValueForTime: boolean;
}

export function promAnnotation(name: string, expr: string, title: string, color: string,
  tagKeys: string): cog.Builder<dashboard.AnnotationQuery> {
  const a = new dashboard.AnnotationQueryBuilder()
    .name(name)
    .datasource(DS)
    .enable(true)
    .iconColor(color)
    .expr(expr);
  return {
    build: (): PromAnnotation => ({
      ...a.build(),
      expr,
      step: '10s',
      tagKeys,
      textFormat: '',
      titleFormat: title,
      useValueForTime: false,
    }),
  };
}

// Grafana's own annotations and alerts (hidden), then ours.
export function annotations(
  ...ours: cog.Builder<dashboard.AnnotationQuery>[]): cog.Builder<dashboard.AnnotationQuery>[] {
  const builtIn = new dashboard.AnnotationQueryBuilder()
    .builtIn(1)
    .datasource({ type: 'grafana', uid: '-- Grafana --' })
    .enable(true)
    .hide(true)
    .iconColor('rgba(0, 211, 255, 1)')
    .name('Annotations & Alerts')
    .type('dashboard');
  return [builtIn, ...ours];
}

// The file: __requires, as Grafana's export writes it, names the release and the data
// source plugin the dashboard needs.
export interface DashboardFile extends dashboard.Dashboard {
  __requires: { type: string; id: string; name: string; version: string }[];
  uid: string;
}

const GRID_COLUMNS = 24;

// The built dashboard with our schema version, the panels numbered in order, and a check
// that no panel sticks out of the grid (the SDK starts a new line only once one is full).
export function finish(b: dashboard.DashboardBuilder): DashboardFile {
  const d = b.build();
  if (!d.uid) throw new Error(`dashboard '${d.title}' has no uid`);
  d.schemaVersion = SCHEMA_VERSION;
  let id = 1;
  for (const p of d.panels ?? []) {
    p.id = id++;
    const g = p.gridPos;
    if (!g || g.x + g.w > GRID_COLUMNS) {
      throw new Error(`${d.uid}: panel '${p.title}' at x ${g?.x} is ${g?.w} wide, past the ` +
        `grid's ${GRID_COLUMNS} columns: make the panels of its line add up to ${GRID_COLUMNS}`);
    }
  }
  return {
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: GRAFANA },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
    ],
    ...d,
    uid: d.uid,
  };
}
