// PromQL of the dashboards: selectors on the dashboard's variables, and the joins that add the
// names of the info values (docs/metrics.md, "Names") to a series.

// The variables a dashboard filters by, in chain order: host -> DPDK instance -> port or lcore.
export type Scope = 'port' | 'lcore';
export type Variable = 'instance' | 'dpdk_instance' | Scope;

// Extra exact matchers, such as {type: 'busy'}.
export type Matchers = Readonly<Record<string, string>>;

// s('m', 'port', {type: 'x'}) -> m{instance=~"$instance", ..., port="$port", type="x"}.
// A scope the dashboard has no variable for does not compile.
export interface Selector<S extends Scope> {
  (metric: string, ...parts: (S | Matchers)[]): string;
  // The variables that may hold several values.
  readonly multi: ReadonlySet<Variable>;
}

// multi: the variables matched with =~ (multi-value: Grafana joins their values into a
// regex); the others are matched exactly (=), so that a dot in an instance name is not a
// wildcard.
export function selector<S extends Scope = never>(multi: readonly Variable[]): Selector<S> {
  const many: ReadonlySet<Variable> = new Set(multi);
  const s = (metric: string, ...parts: (S | Matchers)[]): string => {
    const vars: Variable[] = ['instance', 'dpdk_instance'];
    const ms: string[] = [];
    for (const p of parts) {
      if (typeof p === 'string') vars.push(p);
    }
    for (const v of vars) ms.push(many.has(v) ? `${v}=~"$${v}"` : `${v}="$${v}"`);
    for (const p of parts) {
      if (typeof p !== 'string') {
        for (const [k, v] of Object.entries(p)) ms.push(`${k}="${v}"`);
      }
    }
    return `${metric}{${ms.join(', ')}}`;
  };
  return Object.assign(s, { multi: many });
}

// The info values of dpdktel_stats carry names in their type instance, "<a>,<b>,...": one
// label from part i of it (docs/metrics.md, "Names").
export function infoLabel(series: string, label: string, i: number): string {
  const skip = '[^,]*,'.repeat(i);
  return `label_replace(${series}, "${label}", "$1", "type", "${skip}([^,]*).*")`;
}

// expr with the labels of info joined on; series without info stay, without them. topk keeps
// one info series per port or lcore while a restarted application's old one has not gone
// stale yet.
export function withInfo(expr: string, info: string, keys: readonly string[],
  labels: readonly string[]): string {
  const on = `on (${keys.join(', ')})`;
  const one = `topk by (${keys.join(', ')}) (1, ${info})`;
  return `(${expr} * ${on} group_left (${labels.join(', ')}) ${one}) or ${on} ${expr}`;
}

const PORT_KEYS = ['job', 'instance', 'dpdk_instance', 'port'];

// expr with the device name of its port (port_info) as the label "device".
export function withDevice<S extends Scope>(expr: string, s: Selector<S>): string {
  const info = infoLabel(s('collectd_dpdktel_stats_port_info'), 'device', 0);
  return withInfo(expr, info, PORT_KEYS, ['device']);
}
