"""Integration suite: real processes. Paths come from meson (DTEL_BUILD_DIR, DTEL_SOURCE_DIR)."""
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

BUILD = os.environ.get('DTEL_BUILD_DIR', os.path.join(os.path.dirname(__file__), '../../build'))
SOURCE = os.environ.get('DTEL_SOURCE_DIR', os.path.join(os.path.dirname(__file__), '../..'))


def require(cond, why):
    """Skip the whole run (meson shows SKIP, exit 77) when a prerequisite is really missing."""
    if not cond:
        print(f'SKIP: {why}', file=sys.stderr)
        pytest.exit(f'skipped: {why}', returncode=77)


def pytest_configure(config):
    require(os.geteuid() == 0, 'needs root (DPDK runtime dir /var/run/dpdk, net_tap, netns)')
    require(shutil.which('dpdk-testpmd'), 'dpdk-testpmd not found (install dpdk-dev)')


@pytest.fixture(scope='session')
def build_dir():
    return os.path.abspath(BUILD)


@pytest.fixture(scope='session')
def source_dir():
    return os.path.abspath(SOURCE)


@pytest.fixture(scope='session')
def dpdktel_cli(build_dir):
    path = os.path.join(build_dir, 'telemetry', 'dpdktel')
    assert os.access(path, os.X_OK), f'{path} not built'
    return path


@pytest.fixture(scope='session')
def fwd_bin(build_dir):
    path = os.path.join(build_dir, 'fwd', 'dpdktel-fwd')
    assert os.access(path, os.X_OK), f'{path} not built'
    return path
