#!/usr/bin/env python3
"""libdpdktel.so exports exactly the functions that dtel.h declares."""
import re
import subprocess
import sys


def declared(header):
    text = open(header).read()
    # Function declarations: a dtel_ name followed by '(' at the start of a declarator.
    return set(re.findall(r'\b(dtel_[a-z0-9_]+)\s*\(', text)) - {'dtel_h'}


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split('@')[0] for line in out.splitlines()
            if line.split() and line.split()[1] in ('T', 'D', 'B', 'R')}


def main():
    header, lib = sys.argv[1], sys.argv[2]
    want, have = declared(header), exported(lib) - {'DTEL_0'}
    if want != have:
        print('declared in dtel.h but not exported:', sorted(want - have))
        print('exported but not declared in dtel.h:', sorted(have - want))
        return 1
    print(f'{len(have)} symbols exported, all declared in dtel.h')
    return 0


if __name__ == '__main__':
    sys.exit(main())
