"""docs/metrics.md as data: every identifier the plugins dispatch and its Prometheus name.

The tables are the contract (one row per collectd type and type instance). Prometheus names
are derived from each row the way write_prometheus builds them (docs/metrics.md, "How
identifiers are built"): collectd_<plugin>_<type>[_<ds>][_total], `_<ds>` unless the data
source is `value`, `_total` for DERIVE and COUNTER. The names written out in the table's
Prometheus column must be among them, so the prose and the rule cannot drift apart.
"""
import re
from dataclasses import dataclass, field

_TICKS = re.compile(r'`([^`]*)`')


@dataclass
class Row:
    plugin: str  # dpdktel_stats or dpdktel_events
    scope: str  # port, lcore or instance
    type: str
    type_instances: list  # [] when there is none; text such as 'the xstat name' kept as is
    data_sources: list
    kind: str  # GAUGE, DERIVE, ...
    line: int
    documented: list = field(default_factory=list)  # full names from the Prometheus column

    def metric_names(self):
        names = []
        for ds in self.data_sources:
            name = f'collectd_{self.plugin}' if self.plugin != self.type else 'collectd'
            name += f'_{self.type}'
            if ds != 'value':
                name += f'_{ds}'
            if self.kind in ('DERIVE', 'COUNTER'):
                name += '_total'
            names.append(name)
        return names


class DocError(Exception):
    pass


def _cells(line):
    return [c.strip() for c in line.strip().strip('|').split('|')]


def parse(path):
    """The rows of every identifier table in docs/metrics.md."""
    rows = []
    plugin = scope = None
    with open(path) as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if line.startswith('## '):
            m = re.match(r'## (dpdktel_\w+)\s*$', line)
            plugin = m.group(1) if m else None
            scope = None
        elif line.startswith('### ') and plugin:
            heading = line.lower()
            scope = next((s for s in ('port', 'lcore', 'instance') if f'per {s}' in heading), None)
            if scope is None:
                raise DocError(f'{path}:{n}: cannot tell port/lcore/instance from {line!r}')
        elif line.startswith('| `') and plugin and scope:
            cells = _cells(line)
            if len(cells) != 6:
                raise DocError(f'{path}:{n}: expected 6 columns, got {len(cells)}')
            typ = _TICKS.findall(cells[0])
            dss = _TICKS.findall(cells[2])
            kind = cells[3].split(',')[0].strip()
            if len(typ) != 1 or not dss or kind not in ('GAUGE', 'DERIVE', 'COUNTER', 'ABSOLUTE'):
                raise DocError(f'{path}:{n}: cannot read type, data sources or kind')
            tis = _TICKS.findall(cells[1]) or ([cells[1]] if cells[1] else [])
            documented = [re.sub(r'\{.*', '', t) for t in _TICKS.findall(cells[5])
                          if t.startswith('collectd_')]
            row = Row(plugin, scope, typ[0], tis, dss, kind, n, documented)
            derived = row.metric_names()
            for name in documented:
                if name not in derived:
                    raise DocError(f'{path}:{n}: {name} is not what write_prometheus makes of '
                                   f'{plugin}/{typ[0]} ({", ".join(derived)})')
            rows.append(row)
    if not rows:
        raise DocError(f'{path}: no identifier tables found')
    return rows


def metric_scopes(rows):
    """{prometheus name: scope} for every documented metric."""
    scopes = {}
    for row in rows:
        for name in row.metric_names():
            scopes[name] = row.scope
    return scopes


def promql_block(path, needle):
    """The ```promql block of docs/metrics.md that contains needle, without its comments."""
    with open(path) as f:
        text = f.read()
    blocks = [b.split('```')[0] for b in text.split('```promql')[1:]]
    (block,) = [b for b in blocks if needle in b]
    return '\n'.join(line for line in block.splitlines() if not line.startswith('#'))
