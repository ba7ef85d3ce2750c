"""Just enough PromQL for the linters: selectors, their matchers and ranges, the function
each selector is an argument of, and label names in grouping clauses.

Whether an expression parses at all is promtool's job (check_syntax): this lexer only has
to be right on expressions that do. Grafana variables ($var, ${var}, [[var]]) are tokens of
their own, so the checks see `$__rate_interval` as written.
"""
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

import yaml

KEYWORDS = {'and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring',
            'group_left', 'group_right', 'inf', 'nan', 'atan2'}
GROUPING = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right'}
AGGREGATIONS = {'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count',
                'count_values', 'bottomk', 'topk', 'quantile'}

_TOKEN = re.compile(r'''
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<var>\$\{[^}]+\}|\$[A-Za-z_][A-Za-z0-9_]*|\[\[[A-Za-z_][A-Za-z0-9_:]*\]\])
  | (?P<dur>(?:[0-9]+(?:ms|s|m|h|d|w|y))+(?![A-Za-z0-9_]))
  | (?P<num>0x[0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|==|!=|<=|>=|[-+*/%^<>=(){}\[\],:@])
''', re.VERBOSE)


class LexError(ValueError):
    pass


def tokens(expr):
    out = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise LexError(f'cannot read {expr[pos:pos + 20]!r}')
        pos = m.end()
        if m.lastgroup != 'ws':
            out.append((m.lastgroup, m.group()))
    return out


@dataclass
class Selector:
    name: str  # '' for {__name__...}-less selectors such as {job="x"}
    matchers: list = field(default_factory=list)  # (label, op, value without quotes)
    range: str = None  # the text inside [...], e.g. '$__rate_interval' or '5m'
    function: str = None  # innermost call the selector is a direct argument of

    def matcher(self, label):
        return [(op, v) for (l, op, v) in self.matchers if l == label]


@dataclass
class Analysis:
    selectors: list
    functions: list  # every function or aggregation called
    grouping_labels: list  # labels in by/without/on/ignoring/group_* clauses
    created_labels: list = field(default_factory=list)  # dst labels of label_replace()


def _unquote(s):
    return s[1:-1]


def analyse(expr):
    toks = tokens(expr)
    selectors, functions, grouping = [], [], []
    stack = []  # one entry per open '(': the function name, or None for a plain group
    i = 0
    n = len(toks)

    def matchers_at(j):
        """Parse {l op "v", ...} starting at toks[j] == '{'; return (matchers, next index)."""
        ms = []
        j += 1
        while j < n and toks[j][1] != '}':
            if toks[j][1] == ',':
                j += 1
                continue
            if j + 2 >= n or toks[j][0] != 'ident' or toks[j + 2][0] not in ('str', 'var'):
                raise LexError(f'bad label matcher near {toks[j][1]!r}')
            ms.append((toks[j][1], toks[j + 1][1], _unquote(toks[j + 2][1])
                       if toks[j + 2][0] == 'str' else toks[j + 2][1]))
            j += 3
        return ms, j + 1

    def grouping_at(j):
        """Labels of the clause `by (a, b)` whose keyword is toks[j]; the next index."""
        j += 2
        while j < n and toks[j][1] != ')':
            if toks[j][0] == 'ident':
                grouping.append(toks[j][1])
            j += 1
        return j + 1

    while i < n:
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < n else None
        if kind == 'ident' and text.lower() in GROUPING and nxt == '(':
            i = grouping_at(i)
            continue
        if kind == 'ident' and text in AGGREGATIONS and nxt and nxt.lower() in ('by', 'without'):
            # sum by (a) (expr): the clause comes first, the call's '(' after it.
            i = grouping_at(i + 1)
            if i < n and toks[i][1] == '(':
                functions.append(text)
                stack.append(text)
                i += 1
            continue
        if kind == 'ident' and nxt == '(':
            functions.append(text)
            stack.append(text)
            i += 2
            continue
        if text == '(':
            stack.append(None)
            i += 1
            continue
        if text == ')':
            if stack:
                stack.pop()
            i += 1
            continue
        if (kind == 'ident' and text.lower() not in KEYWORDS) or text == '{':
            if text == '{':
                sel = Selector('')
                sel.matchers, i = matchers_at(i)
            else:
                sel = Selector(text)
                i += 1
                if i < n and toks[i][1] == '{':
                    sel.matchers, i = matchers_at(i)
            if i < n and toks[i][1] == '[':
                j = i + 1
                parts = []
                while j < n and toks[j][1] != ']':
                    parts.append(toks[j][1])
                    j += 1
                sel.range = ''.join(parts)
                i = j + 1
            # In an expression that parses, a range selector inside a call's parentheses is
            # that call's argument: the innermost open call is the one to check.
            sel.function = stack[-1] if stack else None
            selectors.append(sel)
            continue
        i += 1
    return Analysis(selectors, functions, grouping, _created_labels(toks))


def _created_labels(toks):
    """The destination label of each label_replace(v, "dst", ...): its second argument."""
    out = []
    for k in range(len(toks) - 1):
        if toks[k] != ('ident', 'label_replace') or toks[k + 1][1] != '(':
            continue
        depth = 0
        for j in range(k + 2, len(toks) - 1):
            t = toks[j][1]
            if t in ('(', '{', '['):
                depth += 1
            elif t in (')', '}', ']'):
                if depth == 0:
                    break
                depth -= 1
            elif t == ',' and depth == 0:
                if toks[j + 1][0] == 'str':
                    out.append(_unquote(toks[j + 1][1]))
                break
    return out


def metric_names(analysis):
    """Metric names the expression reads: selector names and __name__="..." matchers."""
    names = set()
    for s in analysis.selectors:
        if s.name:
            names.add(s.name)
        for op, v in s.matcher('__name__'):
            names.add(v if op == '=' else f'{op}{v}')
    return names


# Sample values for Grafana's variables, so that expressions parse (dashboard-linter does the
# same). Durations stay durations; everything else becomes a plain word.
SAMPLE_VARIABLES = {
    '__rate_interval': '1m', '__interval': '30s', '__range': '1h', '__range_s': '3600',
    '__range_ms': '3600000', '__interval_ms': '30000',
}


def substitute(expr, values=None):
    """Replace $var, ${var} and [[var]] by values[var] (default: a sample value)."""
    values = dict(SAMPLE_VARIABLES, **(values or {}))

    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        name = name.split(':', 1)[0]
        return values.get(name, 'sample')

    return re.sub(r'\$\{([^}]+)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z_][A-Za-z0-9_:]*)\]\]',
                  repl, expr)


def check_syntax(exprs, promtool='promtool'):
    """Parse every expression with promtool; exprs is [(where, expr)]. Returns error lines.

    Each expression becomes a recording rule in a group named after where it came from,
    so promtool's messages say which panel is wrong.
    """
    if not exprs:
        return []
    groups = [{'name': where, 'rules': [{'record': 'lint_check', 'expr': expr}]}
              for where, expr in exprs]
    with tempfile.TemporaryDirectory(prefix='dtel-promql-') as d:
        path = os.path.join(d, 'exprs.rules.yml')
        with open(path, 'w') as f:
            yaml.safe_dump({'groups': groups}, f, sort_keys=False)
        p = subprocess.run([promtool, 'check', 'rules', path], capture_output=True, text=True)
    if p.returncode == 0:
        return []
    lines = [l.strip() for l in (p.stdout + p.stderr).splitlines()
             if 'group "' in l or 'error' in l.lower()]
    return [l.replace(path + ': ', '') for l in lines] or [p.stdout + p.stderr]
