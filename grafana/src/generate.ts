// Writes the dpdktel dashboards as Grafana JSON, one file per dashboard named by its uid:
//   node generate.js DIR        (npm run generate writes grafana/dashboards/)
// The files are committed; tests/grafana/dashboards_ts.py checks that they are what this
// program makes. Keys are sorted, as in Grafana's own export, so that the output does not
// depend on the order the builders set them in.
import { writeFileSync } from 'fs';
import { join } from 'path';
import { DashboardFile } from './dashboard';
import { lcores } from './lcores';
import { overview } from './overview';
import { port } from './port';

const DASHBOARDS: (() => DashboardFile)[] = [overview, port, lcores];

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function render(d: DashboardFile): string {
  return `${JSON.stringify(d, sortKeys, 2)}\n`;
}

function main(argv: string[]): number {
  const [dir] = argv;
  if (argv.length !== 1 || dir === undefined) {
    process.stderr.write('usage: node generate.js DIR (where to write the dashboards)\n');
    return 2;
  }
  for (const build of DASHBOARDS) {
    const d = build();
    writeFileSync(join(dir, `${d.uid}.json`), render(d));
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
