"""Integration suite: real processes. Paths come from meson (DTEL_BUILD_DIR, DTEL_SOURCE_DIR)."""
import os
import shutil
import sys

import pytest

from helpers import dpdk, sanitizers  # noqa: E402

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
    if sanitizers.enabled():
        require(sanitizers.RUNTIMES and all(os.path.exists(p) for p in sanitizers.RUNTIMES),
                f'sanitizer runtimes {sanitizers.RUNTIMES} not found')
        sanitizers.setup_environment(os.path.join(
            os.path.abspath(BUILD), 'meson-logs', 'sanitizers',
            os.path.splitext(os.path.basename(str(config.args[0]) if config.args else 'x'))[0]))


def pytest_report_header(config):
    return [f'DPDK releases: {", ".join(map(repr, dpdk.releases()))}',
            f'dpdktel-fwd of this build: {dpdk.build_release()!r}']


def _fail_on_reports(when):
    found = sanitizers.take_reports()
    if found:
        pytest.fail(f'sanitizer reports {when}:\n' + '\n'.join(found), pytrace=False)


@pytest.fixture(autouse=True)
def no_sanitizer_reports():
    """Under ASan+UBSan: a report written during a test fails that test."""
    yield
    if sanitizers.enabled():
        _fail_on_reports('during this test')


@pytest.fixture(scope='session', autouse=True)
def no_sanitizer_reports_at_exit():
    """... and one written while module fixtures end (their processes exit) fails the run."""
    yield
    if sanitizers.enabled():
        _fail_on_reports('at the end of the run')


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


@pytest.fixture(scope='module', params=dpdk.releases(), ids=lambda r: r.name)
def dpdk_release(request):
    """Each DPDK release of the matrix in turn: the system's 22.11 and every release
    scripts/dpdk-build installed in the cache (helpers/dpdk.py releases()). A test that starts
    testpmd with release=dpdk_release runs once per release, its id ending in [24.11]."""
    return request.param
