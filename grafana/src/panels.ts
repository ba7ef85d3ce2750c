// The panel kinds of the dpdktel dashboards, each with our conventions set once (checked by
// tests/grafana/lint_dashboards.py): the ${datasource} variable on the panel and every query,
// a title, a description and a unit. Each returns the SDK's builder: the caller adds the
// size (.span(w).height(h)) and whatever else the panel needs (.min(0), .decimals(0), ...).
import * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import {
  PanelBuilder as StateTimelineBuilder,
} from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as TableBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import * as units from '@grafana/grafana-foundation-sdk/units';

// Every panel, query and variable reads the dashboard's data source variable.
export const DS: dashboard.DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

// A unit id Grafana knows (the SDK lists them): a misspelt unit does not compile.
export type Unit = (typeof units)[keyof typeof units];

// The named colours of Grafana's palette that we use; add one here to use it.
export type Color = 'green' | 'red' | 'orange' | 'yellow' | 'blue' | 'super-light-green' |
  'dark-purple';

// thresholds('green', [1, 'red']): green below 1, red from 1.
export function thresholds(base: Color,
  ...steps: [number, Color][]): dashboard.ThresholdsConfigBuilder {
  return new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps([{ color: base, value: null }, ...steps.map(([value, color]) => ({ color, value }))]);
}

// Value mappings: the codes 0, 1, 2, ... of docs/metrics.md, in order, as text and colour.
export function valueNames(...names: [string, Color][]): dashboard.ValueMapping[] {
  const options: Record<string, dashboard.ValueMappingResult> = {};
  names.forEach(([text, color], index) => {
    options[String(index)] = { text, color, index };
  });
  return [{ type: dashboard.MappingType.ValueToText, options }];
}

export const LINK_NAMES = valueNames(['DOWN', 'red'], ['UP', 'green']);
export const LCORE_NAMES = valueNames(['STARTING', 'blue'], ['RUNNING', 'green'],
  ['IDLE', 'super-light-green'], ['STALLED', 'red'], ['EXITED', 'dark-purple']);
// The instance state of the overview: up, plus 2 for not_responding (up is 0 meanwhile).
export const INSTANCE_NAMES = valueNames(['DOWN', 'red'], ['UP', 'green'],
  ['NOT RESPONDING', 'orange']);

type Query = cog.Builder<cog.Dataquery>;

function query(expr: string, refId: string): prometheus.DataqueryBuilder {
  return new prometheus.DataqueryBuilder()
    .datasource(DS)
    .editorMode(prometheus.QueryEditorMode.Code)
    .expr(expr)
    .legendFormat('')
    .refId(refId);
}

const ref = (i: number): string => String.fromCharCode('A'.charCodeAt(0) + i);

// Range queries, refIds A, B, ...: queries([expr, legend], ...).
export function queries(...pairs: [string, string][]): Query[] {
  return pairs.map(([expr, legend], i) => query(expr, ref(i)).legendFormat(legend).range());
}

// Instant queries as tables, refIds A, B, ... (a table joins them by their labels).
export function tableQueries(...exprs: string[]): Query[] {
  return exprs.map((expr, i) => query(expr, ref(i)).format(prometheus.PromQueryFormat.Table)
    .instant());
}

// A stat: the last value of each series, coloured by its thresholds (default: green).
export function stat(title: string, description: string, unit: Unit): StatBuilder {
  return new StatBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .unit(unit)
    .thresholds(thresholds('green'))
    .mappings([])
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Thresholds))
    .reduceOptions(new common.ReduceDataOptionsBuilder()
      .calcs(['lastNotNull'])
      .fields('')
      .values(false))
    .colorMode(common.BigValueColorMode.Background)
    .graphMode(common.BigValueGraphMode.None)
    .justifyMode(common.BigValueJustifyMode.Auto)
    .orientation(common.VizOrientation.Auto)
    .textMode(common.BigValueTextMode.Auto);
}

// A time series: lines, a legend, a tooltip with every series; thresholds green by default
// and not drawn unless .thresholdsStyle(lines()).
export function timeseries(title: string, description: string, unit: Unit): TimeseriesBuilder {
  return new TimeseriesBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .unit(unit)
    .thresholds(thresholds('green'))
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.PaletteClassic))
    .drawStyle(common.GraphDrawStyle.Line)
    .lineWidth(1)
    .fillOpacity(10)
    .showPoints(common.VisibilityMode.Never)
    .spanNulls(false)
    .thresholdsStyle(thresholdsStyle(common.GraphThresholdsStyleMode.Off))
    .legend(new common.VizLegendOptionsBuilder()
      .displayMode(common.LegendDisplayMode.List)
      .placement(common.LegendPlacement.Bottom)
      .showLegend(true))
    .tooltip(new common.VizTooltipOptionsBuilder()
      .mode(common.TooltipDisplayMode.Multi)
      .sort(common.SortOrder.Descending));
}

function thresholdsStyle(
  mode: common.GraphThresholdsStyleMode): common.GraphThresholdsStyleConfigBuilder {
  return new common.GraphThresholdsStyleConfigBuilder().mode(mode);
}

// The thresholds drawn as lines on a time series: .thresholdsStyle(lines()).
export function lines(): common.GraphThresholdsStyleConfigBuilder {
  return thresholdsStyle(common.GraphThresholdsStyleMode.Line);
}

// Series that are parts of one whole (a port's loss by reason): .stacking(stack()).
export function stack(): common.StackingConfigBuilder {
  return new common.StackingConfigBuilder().mode(common.StackingMode.Normal).group('A');
}

// A state timeline: one band per series, its values named by .mappings(...) and coloured by
// .thresholds(...).
export function stateTimeline(title: string, description: string): StateTimelineBuilder {
  return new StateTimelineBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .unit(units.NoUnit)
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Thresholds))
    .lineWidth(0)
    .fillOpacity(80)
    .mergeValues(true)
    .showValue(common.VisibilityMode.Auto)
    .alignValue(common.TimelineValueAlignment.Left)
    .rowHeight(0.9)
    .legend(new common.VizLegendOptionsBuilder()
      .displayMode(common.LegendDisplayMode.List)
      .placement(common.LegendPlacement.Bottom)
      .showLegend(false))
    .tooltip(new common.VizTooltipOptionsBuilder()
      .mode(common.TooltipDisplayMode.Single)
      .sort(common.SortOrder.None));
}

// A table of instant queries (tableQueries()), merged into one row per label set; then
// .withTransformation(organize({...})) hides, orders and renames its columns.
export function table(title: string, description: string, unit: Unit): TableBuilder {
  return new TableBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .unit(unit)
    .showHeader(true)
    .cellHeight(common.TableCellHeight.Sm)
    .footer(new common.TableFooterOptionsBuilder().show(false))
    .withTransformation({ id: 'merge', options: {} });
}

// Grafana's "organize fields" transformation. The SDK leaves a transformation's options
// untyped; these are the fields of OrganizeFieldsTransformerOptions (Grafana's
// packages/grafana-data/src/transformations/transformers/organize.ts).
export interface OrganizeOptions {
  excludeByName?: Record<string, boolean>;
  indexByName?: Record<string, number>;
  renameByName?: Record<string, string>;
}

export function organize(options: OrganizeOptions): dashboard.DataTransformerConfig {
  return { id: 'organize', options };
}

// A data link to another dpdktel dashboard, with the data source, the time range and the
// variables named taken from the series (fields: its labels) or the table row (columns). The
// SDK types a field's links as dashboard links: Grafana ignores the fields a data link does
// not have (type "link" and the others at their defaults).
type DataLink = cog.Builder<dashboard.DashboardLink>;

function link(title: string, uid: string, params: string): DataLink {
  return new dashboard.DashboardLinkBuilder(title)
    .targetBlank(false)
    .url(`/d/${uid}/${uid}?\${datasource:queryparam}${params}&\${__url_time_range}`);
}

export function seriesLink(title: string, uid: string, ...labels: string[]): DataLink {
  return link(title, uid, labels.map((v) => `&var-${v}=\${__field.labels.${v}}`).join(''));
}

// From a table row: the row's columns (labels made fields by the table's merge).
export function rowLink(title: string, uid: string, ...columns: string[]): DataLink {
  return link(title, uid, columns.map((v) => `&var-${v}=\${__data.fields.${v}}`).join(''));
}
