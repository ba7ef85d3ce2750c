#!/usr/bin/python3
"""The TypeScript dashboards (grafana/src/, Grafana's Foundation SDK) as meson tests.

    dashboards_ts.py typecheck 10.4|11.6   tsc --noEmit, strict, against that release's SDK
    dashboards_ts.py generated             what the program writes is grafana/dashboards/*.json

Each runs the npm scripts of grafana/package.json with Node and npm (scripts/bootstrap
installs them). The packages come from the npm registry, pinned by grafana/package-lock.json:
`npm ci` installs them into grafana/node_modules the first time and whenever the lockfile
changes (a stamp in node_modules records which lockfile it installed), from npm's cache when
it has them. One test at a time installs (a lock on the lockfile); the others wait.

When node, npm or the registry is missing, the test says which and fails under CI=true (a CI
machine must have them) and is skipped (77) otherwise.
"""
import difflib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRAFANA = os.path.join(ROOT, 'grafana')
DASHBOARDS = os.path.join(GRAFANA, 'dashboards')
LOCKFILE = os.path.join(GRAFANA, 'package-lock.json')
STAMP = os.path.join(GRAFANA, 'node_modules', '.dpdktel-lockfile.sha256')
# Where tsconfig.json's outDir puts the compiled program.
PROGRAM = os.path.join(GRAFANA, 'node_modules', '.cache', 'dpdktel-dashboards', 'generate.js')
REGENERATE = 'cd grafana && npm ci && npm run generate'
NODE_MAJOR = 18  # package.json "engines"; Debian 12's nodejs
# npm's codes for a registry it cannot reach (DNS, refused, reset, timed out, no route).
NETWORK = re.compile(r'\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|'
                     r'EHOSTUNREACH|ERR_SOCKET_TIMEOUT)\b')


class Unavailable(Exception):
    """A prerequisite that is not there: node, npm, or the npm registry."""


def run(cmd, timeout):
    print('+ ' + ' '.join(cmd), flush=True)
    return subprocess.run(cmd, cwd=GRAFANA, capture_output=True, text=True, timeout=timeout)


def check_tools():
    for tool, package in (('node', 'nodejs'), ('npm', 'npm')):
        if not shutil.which(tool):
            raise Unavailable(f'{tool} not found: scripts/bootstrap installs it (Debian package '
                              f'{package})')
    version = subprocess.run(['node', '--version'], capture_output=True, text=True).stdout
    m = re.match(r'v(\d+)\.', version)
    if not m or int(m.group(1)) < NODE_MAJOR:
        raise Unavailable(f'node {version.strip()!r}: the dashboards need Node.js {NODE_MAJOR} '
                          'or later (package.json "engines")')


def lockfile_digest():
    with open(LOCKFILE, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def install(lock):
    """npm ci unless node_modules is what the lockfile pins; leaves a shared lock held."""
    fcntl.flock(lock, fcntl.LOCK_EX)
    digest = lockfile_digest()
    try:
        with open(STAMP) as f:
            installed = f.read().strip()
    except OSError:
        installed = ''
    if installed != digest:
        # --prefer-offline: what npm's cache has is not fetched again (the lockfile's
        # integrity hashes check it); short retry waits so that no registry fails in seconds.
        r = run(['npm', 'ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund',
                 '--fetch-retry-mintimeout=2000', '--fetch-retry-maxtimeout=10000'], 600)
        if r.returncode != 0:
            out = r.stdout + r.stderr
            m = NETWORK.search(out)
            if m:
                raise Unavailable(f'npm ci cannot reach the npm registry ({m.group(1)}): it is '
                                  'needed to install the packages of grafana/package-lock.json '
                                  'the first time')
            sys.stdout.write(out)
            raise RuntimeError(f'npm ci failed (exit {r.returncode})')
        with open(STAMP, 'w') as f:
            f.write(digest + '\n')
    # Shared from here: other tests may use node_modules, none may reinstall it meanwhile.
    fcntl.flock(lock, fcntl.LOCK_SH)


def npm_run(script):
    r = run(['npm', 'run', '--silent', script], 300)
    sys.stdout.write(r.stdout + r.stderr)
    return r.returncode


def typecheck(release):
    rc = npm_run(f'typecheck:{release}')
    if rc == 0:
        print(f'dashboards_ts: grafana/src type-checks against Grafana {release}')
    return rc


def generated():
    if npm_run('build') != 0:
        return 1
    with tempfile.TemporaryDirectory(prefix='dpdktel-dashboards-') as out:
        r = run(['node', PROGRAM, out], 120)
        sys.stdout.write(r.stdout + r.stderr)
        if r.returncode != 0:
            return 1
        made = sorted(f for f in os.listdir(out) if f.endswith('.json'))
        have = sorted(f for f in os.listdir(DASHBOARDS) if f.endswith('.json'))
        stale = [f for f in have if f not in made]
        for name in made:
            with open(os.path.join(out, name)) as f:
                text = f.read()
            path = os.path.join(DASHBOARDS, name)
            try:
                with open(path) as f:
                    committed = f.read()
            except FileNotFoundError:
                committed = ''
            if committed != text:
                stale.append(name)
                sys.stdout.writelines(difflib.unified_diff(
                    committed.splitlines(True), text.splitlines(True),
                    f'grafana/dashboards/{name}', 'generated', n=2))
    if stale:
        print(f'dashboards_ts: {", ".join(sorted(stale))} differ from what grafana/src makes: '
              f'run `{REGENERATE}` and commit the result')
        return 1
    print(f'dashboards_ts: grafana/dashboards/ is what grafana/src makes ({len(made)} files)')
    return 0


def main(argv):
    if argv[:1] == ['typecheck'] and len(argv) == 2 and argv[1] in ('10.4', '11.6'):
        step = lambda: typecheck(argv[1])  # noqa: E731
    elif argv == ['generated']:
        step = generated
    else:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        check_tools()
        with open(LOCKFILE) as lock:
            install(lock)
            return step()
    except Unavailable as e:
        if os.environ.get('CI') == 'true':
            print(f'dashboards_ts: FAIL: {e} (CI must have every prerequisite)')
            return 1
        print(f'dashboards_ts: SKIP: {e}')
        return 77


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
