#!/usr/bin/python3
"""Sizes that keep the code readable (docs/contributing.md, "Sizes"):

  - no file in plugins/ over 700 lines (.c and .h);
  - no function in plugins/ or telemetry/ over 60 lines.

A function's length is its lines from its opening brace to its closing one, both
included. The code is formatted by .clang-format (BreakBeforeBraces
Linux, return type on its own line), so a definition's braces are alone at column 0 and the
line before the "{" ends its signature; that is what this reads, no C parser needed.

    sizes.py [SOURCE_ROOT]   exit 1 and one line per offender, naming file, line and size
    sizes.py --self-test     the reader against made-up functions: 60 lines pass, 61 do not
"""
import os
import re
import subprocess
import sys

MAX_FILE = 700
MAX_FUNCTION = 60
FILE_DIRS = ('plugins',)
FUNCTION_DIRS = ('plugins', 'telemetry')
NAME = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def sources(root, dirs, exts):
    """The tracked sources under dirs (git ls-files when root is a checkout, else a walk)."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '--'] + list(dirs),
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), root)
               for top in dirs for d, _, fs in os.walk(os.path.join(root, top)) for f in fs]
    return sorted(p for p in out if p.endswith(exts))


def functions(lines):
    """(name, line of its "{", lines from "{" to "}") of each function defined in lines."""
    found = []
    for i, line in enumerate(lines):
        if line.rstrip('\n') != '{' or i == 0:
            continue
        # The signature: back from the "{" to the line at column 0 holding "name(".
        j = i - 1
        while j > 0 and (lines[j][:1] in ('\t', ' ') or not NAME.search(lines[j])):
            j -= 1
        m = NAME.search(lines[j])
        if not m or lines[j].startswith(('#', '/', ' ', '\t', '}')):
            continue
        k = i + 1
        while k < len(lines) and lines[k].rstrip('\n') not in ('}', '};'):
            k += 1
        found.append((m.group(1), i + 1, k - i + 1))
    return found


def self_test():
    """What functions() must find: a function of 60 lines, one of 61, a static one, a
    struct initializer (not a function), a multi-line signature."""
    def fn(ret, sig, n):
        return [ret + '\n'] + [l + '\n' for l in sig] + ['{\n'] + ['\tx();\n'] * (n - 2) + ['}\n']
    src = (['/* x */\n', '#include <a.h>\n', '\n'] + fn('static int', ['ok(void)'], 60) +
           ['\n', 'static const struct s t[] = {\n', '\t{1},\n', '};\n', '\n'] +
           fn('int', ['too_long(int a,', '\tint b)'], 61) + ['\n'] +
           fn('static const char *', ['short_one(void)'], 3))
    got = {name: n for name, _, n in functions(src)}
    want = {'ok': 60, 'too_long': 61, 'short_one': 3}
    if got != want:
        print(f'sizes --self-test: read {got}, expected {want}')
        return 1
    print('sizes --self-test: function lengths read as expected')
    return 0


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), '..', '..'))
    bad = []
    for path in sources(root, FILE_DIRS, ('.c', '.h')):
        with open(os.path.join(root, path), encoding='utf-8') as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE:
            bad.append(f'{path}: {n} lines (a file in plugins/ has at most {MAX_FILE}: split it '
                       'by concern)')
    for path in sources(root, FUNCTION_DIRS, ('.c',)):
        with open(os.path.join(root, path), encoding='utf-8') as f:
            lines = f.readlines()
        for name, line, n in functions(lines):
            if n > MAX_FUNCTION:
                bad.append(f'{path}:{line}: {name}() has {n} lines (at most {MAX_FUNCTION}: '
                           'split it)')
    for b in bad:
        print(b)
    if bad:
        print(f'sizes: {len(bad)} over the limits (docs/contributing.md, "Sizes")')
        return 1
    print(f'sizes: files in plugins/ within {MAX_FILE} lines, functions in plugins/ and '
          f'telemetry/ within {MAX_FUNCTION}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
