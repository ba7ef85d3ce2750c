"""plugins/stats/drops.tsv against the DPDK sources it cites.

Every row names a driver counter (or the code that shows how a generic counter behaves), the
file of the DPDK tree it is in and the releases it was read from. For each release whose
sources are here, every row of that release must find its file and, in it, each part of its
source column: a quoted part as a C string literal, another as the code is written. A name a
driver renames, or a counter it stops filling, fails here at the release that changed it.

Sources: the release tarballs of scripts/dpdk-build (DTEL_DPDK_TARBALLS, else ../shared/dpdk
beside the checkout or its main checkout), of which only the files the table names are
extracted, once, into a cache (DTEL_DPDK_SOURCES_CACHE, else <build dir>/drops-sources);
and DTEL_DPDK_SOURCES, a directory of extracted trees named dpdk-<version> (how DPDK 22.11,
which has no tarball here, is checked: `git archive --prefix=dpdk-22.11.11/ v22.11.11`
of DPDK's repository). A release with neither is skipped, saying so.
"""
import glob
import hashlib
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'plugins', 'stats'))
import drops_table  # noqa: E402

TABLE = os.path.join(ROOT, 'plugins', 'stats', 'drops.tsv')
# The drivers issue 28 asks the table to cover.
REQUIRED_DRIVERS = {'mlx5', 'net_ice', 'net_i40e', 'net_ixgbe', 'net_ena', 'net_virtio',
                    'net_vmxnet3', 'net_bnxt', 'net_af_xdp', 'net_tap'}


@pytest.fixture(scope='module')
def rows():
    return drops_table.parse(TABLE)


def tarball_dir():
    d = os.environ.get('DTEL_DPDK_TARBALLS')
    if d:
        return d
    here = os.path.join(ROOT, '..', 'shared', 'dpdk')
    if os.path.isdir(here):
        return here
    try:  # a git worktree: the tarballs sit beside the main checkout (scripts/dpdk-build)
        common = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--path-format=absolute',
                                 '--git-common-dir'], capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return here
    main = os.path.dirname(common) if common.endswith('.git') else ''
    return os.path.join(main, '..', 'shared', 'dpdk') if main else here


def release_of(version):
    return '.'.join(version.split('.')[:2])


def candidates(path):
    """The file's path, and where it was before DPDK 25.03 moved the Intel drivers into
    drivers/net/intel/."""
    out = [path]
    if path.startswith('drivers/net/intel/'):
        out.append('drivers/net/' + path[len('drivers/net/intel/'):])
    return out


def cache_dir():
    d = os.environ.get('DTEL_DPDK_SOURCES_CACHE')
    if not d:
        build = os.environ.get('DTEL_BUILD_DIR', os.path.join(ROOT, 'build'))
        d = os.path.join(build, 'drops-sources')
    os.makedirs(d, exist_ok=True)
    return d


def extract(tarball, version, paths):
    """The tarball's files of `paths` (those it has) in a cache dir keyed by its digest; the
    dir, which holds dpdk-<version>/<path>. Extracted again when a path is new."""
    h = hashlib.sha256()
    with open(tarball, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    root = os.path.join(cache_dir(), h.hexdigest()[:16])
    stamp = os.path.join(root, '.extracted')
    have = set()
    if os.path.exists(stamp):
        with open(stamp) as f:
            have = set(f.read().split())
    want = {p for path in paths for p in candidates(path)}
    if want - have:
        os.makedirs(root, exist_ok=True)
        members = [f'dpdk-{version}/{p}' for p in sorted(want | have)]
        # tar exits 2 for the candidate paths a release does not have, extracting the rest.
        r = subprocess.run(['tar', '-xJf', tarball, '-C', root] + members,
                           capture_output=True, text=True, timeout=300)
        unexpected = [line for line in r.stderr.splitlines()
                      if 'Not found in archive' not in line and
                      'Exiting with failure status' not in line]
        assert r.returncode in (0, 2) and not unexpected, r.stderr
        with open(stamp, 'w') as f:
            f.write('\n'.join(sorted(want | have)) + '\n')
    return os.path.join(root, f'dpdk-{version}')


def sources(release, paths):
    """The root of release's sources with `paths` in it, or the reason there is none."""
    trees = os.environ.get('DTEL_DPDK_SOURCES')
    if trees:
        for d in sorted(glob.glob(os.path.join(trees, 'dpdk-*'))):
            if os.path.isdir(d) and release_of(os.path.basename(d)[len('dpdk-'):]) == release:
                return d, None
    tdir = tarball_dir()
    for t in sorted(glob.glob(os.path.join(tdir, 'dpdk-*.tar.xz'))):
        version = os.path.basename(t)[len('dpdk-'):-len('.tar.xz')]
        if release_of(version) == release:
            return extract(t, version, paths), None
    why = f'DPDK {release}: no dpdk-{release}*.tar.xz in {os.path.abspath(tdir)}'
    if release == '22.11':
        why += (' (Debian ships no source package offline: set DTEL_DPDK_SOURCES to a dir '
                'with dpdk-22.11.11/ from DPDK\'s git tag v22.11.11)')
    return None, why + ', and no tree of it in DTEL_DPDK_SOURCES'


def test_rows_parse_and_cover_the_drivers(rows):
    assert REQUIRED_DRIVERS <= {r.driver for r in rows}, \
        REQUIRED_DRIVERS - {r.driver for r in rows}
    # Each reason is refined or stated somewhere, and tx_full's overlap where it exists.
    assert {r.reason for r in rows} >= set(drops_table.REASONS)


def test_generator_refuses_a_bad_row(tmp_path):
    good = open(TABLE).read()
    bad = good + 'net_x\trx_dropped\trx_lost\tpart\tport\t22.11-26.07\tdrivers/net/x.c\t-\t\n'
    (tmp_path / 'bad.tsv').write_text(bad)
    with pytest.raises(drops_table.TableError, match=r"bad.tsv:\d+: reason 'rx_lost'"):
        drops_table.parse(str(tmp_path / 'bad.tsv'))
    bad = good + 'net_x\trx_q<N>_dropped\trx_missed\tpart\tport\t22.11-26.07\tdrivers/net/x.c' \
        '\t-\t\n'
    (tmp_path / 'bad.tsv').write_text(bad)
    with pytest.raises(drops_table.TableError, match='made at run time'):
        drops_table.parse(str(tmp_path / 'bad.tsv'))


@pytest.mark.parametrize('release', drops_table.RELEASES)
def test_every_row_is_in_the_sources_of_its_releases(rows, release):
    mine = [r for r in rows if release in r.releases()]
    root, why = sources(release, {r.file for r in mine})
    if root is None:
        pytest.skip(why)
    missing = []
    for r in mine:
        path = next((os.path.join(root, p) for p in candidates(r.file)
                     if os.path.isfile(os.path.join(root, p))), None)
        if path is None:
            missing.append(f'drops.tsv:{r.line} {r.driver} {r.xstat}: no {r.file}')
            continue
        with open(path, errors='replace') as f:
            text = f.read()
        for part in r.source_parts():
            if part not in text:  # a literal with its quotes
                missing.append(f'drops.tsv:{r.line} {r.driver} {r.xstat}: {part} is not in '
                               f'{os.path.relpath(path, root)} of DPDK {release}')
    assert not missing, '\n'.join(missing)
    # The names the plugin matches are ethdev-valid telemetry keys ([A-Za-z0-9_]).
    assert all(re.fullmatch(r'([A-Za-z0-9_]|<N>)+', r.xstat) for r in mine)
