#!/usr/bin/python3
"""plugins/stats/drops.tsv -> the C table dpdktel_stats compiles in (drops.h, struct drops_row).

    drops_table.py plugins/stats/drops.tsv drops_table.c

Checks every row as it goes (meson then fails the build naming the line): the columns, a
reason and a counts kind of drops.h, <N> only where it stands for a number, the generic
counters only with none, loss and includes, a release range of DPDK releases. Also imported
by tests/unit/test_drops_table.py. Plain Python 3.
"""
import re
import sys
from dataclasses import dataclass

REASONS = ['rx_missed', 'rx_nombuf', 'rx_errors', 'tx_errors', 'tx_full']
COUNTS = ['part', 'extra', 'none', 'loss', 'includes', 'id']
# The generic counter of each reason, as ethdev names it in /ethdev/xstats.
GENERIC = {'rx_missed_errors': 'rx_missed', 'rx_mbuf_allocation_errors': 'rx_nombuf',
           'rx_errors': 'rx_errors', 'tx_errors': 'tx_errors'}
# The releases the table is checked against, oldest first (docs/compatibility.md).
RELEASES = ['22.11', '23.11', '24.11', '25.11', '26.07']
COLUMNS = ['driver', 'xstat', 'reason', 'counts', 'scope', 'releases', 'file', 'source', 'note']


class TableError(Exception):
    pass


@dataclass
class Row:
    line: int
    driver: str
    xstat: str
    reason: str  # '-' for an id row
    counts: str
    scope: str
    first: str
    last: str
    file: str
    source: list  # parts: '"literal"' or code
    note: str

    def releases(self):
        return RELEASES[RELEASES.index(self.first):RELEASES.index(self.last) + 1]

    def source_parts(self):
        """The parts with `-` replaced by the xstat name as a literal."""
        return [f'"{self.xstat}"' if p == '-' else p for p in self.source]


def parse(path):
    rows = []
    with open(path) as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith('#'):
            continue
        cells = line.split('\t')
        where = f'{path}:{n}'
        if len(cells) != len(COLUMNS):
            raise TableError(f'{where}: {len(cells)} tab-separated columns, expected '
                             f'{len(COLUMNS)} ({" ".join(COLUMNS)})')
        driver, xstat, reason, counts, scope, releases, file, source, note = cells
        if not re.fullmatch(r'[a-z0-9_]+', driver):
            raise TableError(f'{where}: driver {driver!r}: expected [a-z0-9_]')
        if not re.fullmatch(r'([A-Za-z0-9_]|<N>)+', xstat):
            raise TableError(f'{where}: xstat {xstat!r}: expected a name of [A-Za-z0-9_], '
                             '<N> for a number')
        if counts not in COUNTS:
            raise TableError(f'{where}: counts {counts!r}: expected one of {", ".join(COUNTS)}')
        if counts == 'id':
            if reason != '-':
                raise TableError(f'{where}: an id row has reason -, not {reason!r}')
        elif reason not in REASONS:
            raise TableError(f'{where}: reason {reason!r}: expected one of {", ".join(REASONS)}')
        if counts in ('none', 'loss') and GENERIC.get(xstat) != reason:
            raise TableError(f'{where}: counts {counts} is for a generic counter with its own '
                             f'reason ({", ".join(f"{k} {v}" for k, v in GENERIC.items())})')
        if counts == 'includes' and (xstat not in GENERIC or reason != 'tx_full'):
            raise TableError(f'{where}: counts includes is for a generic counter that also '
                             'counts tx_full\'s packets: reason tx_full')
        if counts in ('part', 'extra', 'id') and xstat in GENERIC:
            raise TableError(f'{where}: {xstat} is ethdev\'s generic counter: counts none, '
                             'loss or includes')
        if scope not in ('port', 'queue'):
            raise TableError(f'{where}: scope {scope!r}: expected port or queue')
        if scope == 'queue' and '<N>' not in xstat:
            raise TableError(f'{where}: scope queue needs <N> (the queue) in the name')
        m = re.fullmatch(r'(\d+\.\d+)-(\d+\.\d+)', releases)
        if not m or m.group(1) not in RELEASES or m.group(2) not in RELEASES or \
                RELEASES.index(m.group(1)) > RELEASES.index(m.group(2)):
            raise TableError(f'{where}: releases {releases!r}: expected FIRST-LAST of '
                             f'{", ".join(RELEASES)}')
        if not file.startswith(('drivers/', 'lib/')):
            raise TableError(f'{where}: file {file!r}: a path in the DPDK tree')
        parts = source.split(';;')
        for p in parts:
            if p == '-' and '<N>' in xstat:
                raise TableError(f'{where}: source -: the name {xstat} is made at run time, '
                                 'give its parts')
            if not p.strip():
                raise TableError(f'{where}: an empty source part')
        rows.append(Row(n, driver, xstat, reason, counts, scope, m.group(1), m.group(2),
                        file, parts, note))
    if not rows:
        raise TableError(f'{path}: no rows')
    first = {}
    for r in rows:
        was = first.setdefault((r.driver, r.xstat), r)
        if (was.reason, was.counts, was.scope) != (r.reason, r.counts, r.scope):
            raise TableError(f'{path}:{r.line}: {r.driver} {r.xstat} differs from line '
                             f'{was.line} in reason, counts or scope')
    return rows


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def render(rows):
    """The C table: one entry per driver and name (a name checked over several release
    ranges is one entry)."""
    seen = {}
    out = ['/* Generated from plugins/stats/drops.tsv by plugins/stats/drops_table.py: do not edit. */',
           '#include "stats/drops.h"', '', 'static const struct drops_row rows[] = {']
    for r in rows:
        key = (r.driver, r.xstat)
        if key in seen:
            continue
        seen[key] = r
        reason = 'DROPS_NO_REASON' if r.reason == '-' else f'DROPS_{r.reason.upper()}'
        out.append(f'\t{{{c_string(r.driver)}, {c_string(r.xstat)}, {reason}, '
                   f'DROPS_{r.counts.upper()}, {"true" if r.scope == "queue" else "false"}}},')
    out += ['};', '',
            'const struct drops_table drops_builtin = {rows, sizeof(rows) / sizeof(rows[0])};',
            '']
    return '\n'.join(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__.split('\n\n')[1].strip(), file=sys.stderr)
        return 2
    try:
        rows = parse(sys.argv[1])
    except (OSError, TableError) as e:
        print(f'drops_table.py: {e}', file=sys.stderr)
        return 1
    with open(sys.argv[2], 'w') as f:
        f.write(render(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
