#!/usr/bin/env python3
"""debian/libdpdktel0.symbols lists exactly the symbols the built libdpdktel.so.0 exports.

The package build fails on a difference too (debian/rules: dpkg-gensymbols -c4), but only
where packages are built (tests/packages, minutes, root); this says it in a second, in the
unit suite, with the lines to add. Usage: test_symbols.py SYMBOLS_FILE LIBRARY VERSION
(VERSION: meson.build's, the first version of a symbol added now).
"""
import re
import subprocess
import sys


def listed(path):
    """{'name@VERSION_NODE': minimal version} of the symbols file's one library."""
    found = {}
    for line in open(path):
        m = re.match(r'^ (\S+@\S+) (\S+)', line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def exported(lib):
    """'name@VERSION_NODE' of every defined dynamic symbol (the version node's own too,
    which dpkg-gensymbols lists as DTEL_0@DTEL_0; nm shows it as a bare absolute symbol)."""
    out = subprocess.run(['nm', '-D', '--defined-only', '--with-symbol-versions', lib],
                         check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        words = line.split()
        if len(words) != 3:
            continue
        if '@' in words[2]:
            name, _, node = words[2].partition('@')
            names.add(f'{name}@{node.lstrip("@")}')
        elif words[1] == 'A':
            names.add(f'{words[2]}@{words[2]}')
    return names


def main():
    symbols, lib, version = sys.argv[1:4]
    have, want = exported(lib), listed(symbols)
    if not have:
        print(f'{lib}: nm found no versioned symbol (expected the DTEL_0 node of '
              'telemetry/libdpdktel.map)')
        return 1
    new = sorted(have - set(want))
    gone = sorted(set(want) - have)
    if new:
        print(f'{lib} exports symbols that {symbols} lacks; add these lines to it '
              '(the first version exporting them is this one):')
        for s in new:
            print(f' {s} {version}')
    if gone:
        print(f'{symbols} lists symbols {lib} no longer exports: {" ".join(gone)}. '
              'Taking a symbol away breaks the programs that use it: keep it, or change the '
              "soname (libdpdktel.so.1) and the package's name with it.")
    if new or gone:
        return 1
    print(f'{len(have)} symbols exported, each in {symbols}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
