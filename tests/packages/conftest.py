"""packages: build the Debian packages, install them on this machine, use them, purge them.

Skips the whole run (meson shows SKIP, exit 77, with one "SKIP: why" line) where the machine
cannot: not root, no apt-get/dpkg-buildpackage/lintian/systemd-analyze, no /dev/net/tun,
or dpdktel packages already installed (this test would replace and then purge them).
"""
import os
import shutil
import subprocess
import sys

import pytest

SOURCE = os.environ.get('DTEL_SOURCE_DIR', os.path.join(os.path.dirname(__file__), '../..'))
PACKAGES = ('libdpdktel0', 'libdpdktel-dev', 'dpdktel', 'collectd-dpdktel', 'dpdktel-fwd',
            'dpdktel-monitoring')


def installed(pkg):
    p = subprocess.run(['dpkg-query', '-W', '-f=${db:Status-Abbrev}', pkg],
                       capture_output=True, text=True)
    return p.returncode == 0 and p.stdout[:2] in ('ii', 'iU', 'iF', 'rc', 'iH')


def require(cond, why):
    if not cond:
        print(f'SKIP: {why}', file=sys.stderr)
        pytest.exit(f'skipped: {why}', returncode=77)


def pytest_configure(config):
    require(os.geteuid() == 0, 'needs root to install packages')
    for tool, pkg in (('apt-get', 'apt'), ('dpkg-buildpackage', 'dpkg-dev'),
                      ('dh', 'debhelper'), ('lintian', 'lintian'),
                      ('systemd-analyze', 'systemd'), ('collectd', 'collectd-core'),
                      ('git', 'git')):
        require(shutil.which(tool), f'{tool} not found (install {pkg}: scripts/bootstrap)')
    require(os.path.exists('/dev/net/tun'), 'no /dev/net/tun for the net_tap ports')
    require(os.path.isdir(os.path.join(SOURCE, '.git')) or
            os.path.isfile(os.path.join(SOURCE, '.git')),
            'not a git checkout: meson dist needs one')
    there = [p for p in PACKAGES if installed(p)]
    require(not there, f'{" ".join(there)} already installed: not replacing them')


@pytest.fixture
def source_dir():
    return os.path.abspath(SOURCE)
