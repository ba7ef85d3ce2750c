"""Integration suite: real processes. Paths come from meson (DTEL_BUILD_DIR, DTEL_SOURCE_DIR)."""
import os
import shutil
import sys

import pytest

from helpers import collectd as collectd_helper, dpdk, sanitizers  # noqa: E402

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


# DTEL_MATRIX_ONLY=1: only the tests that run once per DPDK release (those taking the
# dpdk_release fixture); scripts/check runs them against the newer releases after its main
# run covered everything against the system's 22.11.
MATRIX_ONLY = os.environ.get('DTEL_MATRIX_ONLY') == '1'


def pytest_collection_modifyitems(config, items):
    if not MATRIX_ONLY:
        return
    kept = [i for i in items if 'dpdk_release' in getattr(i, 'fixturenames', ())]
    dropped = [i for i in items if 'dpdk_release' not in getattr(i, 'fixturenames', ())]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


_outcomes = {'passed': 0, 'failed': 0, 'skipped': []}


def pytest_runtest_logreport(report):
    if report.failed:
        _outcomes['failed'] += 1
    elif report.skipped:
        _outcomes['skipped'].append(report)
    elif report.passed and report.when == 'call':
        _outcomes['passed'] += 1


def pytest_sessionfinish(session, exitstatus):
    # A file with no per-release test has nothing to run in the matrix: that passes (pytest
    # says 5, "no tests collected", which meson would count as a failure).
    if MATRIX_ONLY and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
    # A file whose every test was skipped ran nothing: exit 77, which meson counts as SKIP,
    # not OK, with the reasons on stderr (pytest's own exit would be 0).
    elif (exitstatus == pytest.ExitCode.OK and _outcomes['skipped'] and
          not _outcomes['passed'] and not _outcomes['failed']):
        reasons = dict.fromkeys(r.longrepr[2] if isinstance(r.longrepr, tuple) else
                                str(r.longrepr) for r in _outcomes['skipped'])
        for why in reasons:
            print(f'SKIP: {why}', file=sys.stderr)
        session.exitstatus = 77


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


def _fail_on_values_too_old(when):
    found = collectd_helper.take_values_too_old()
    if found:
        lines = [f'{log}: {line}' for log, too_old in found for line in too_old[:10]]
        pytest.fail(f'collectd refused values as older than the last of their identifier '
                    f'{when} ("Value too old": out of time order, or two values of one '
                    f'identifier so close that its write threads stored them in either '
                    f'order):\n' + '\n'.join(lines), pytrace=False)


@pytest.fixture(autouse=True)
def no_values_too_old():
    """A real collectd stopped during a test that logged "uc_update: Value too old" fails
    that test (helpers/collectd.py take_values_too_old())."""
    yield
    _fail_on_values_too_old('during this test')


@pytest.fixture(scope='session', autouse=True)
def no_values_too_old_at_exit():
    """... and one of a module fixture, stopped when its module ends, fails the run."""
    yield
    _fail_on_values_too_old('in a collectd of a module fixture')


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
    """The build's dpdktel-fwd, or the one DTEL_FWD_BINARY names (built against another DPDK
    release, DTEL_FWD_DPDK_PREFIX: helpers/dpdk.py build_release())."""
    dpdk.build_release()  # DTEL_FWD_BINARY comes with its DPDK prefix
    path = os.path.abspath(os.environ.get('DTEL_FWD_BINARY') or
                           os.path.join(build_dir, 'fwd', 'dpdktel-fwd'))
    assert os.access(path, os.X_OK), f'{path} not built'
    return path


@pytest.fixture(scope='module', params=dpdk.releases(), ids=lambda r: r.name)
def dpdk_release(request):
    """Each DPDK release of the matrix in turn: the system's 22.11 and every release
    scripts/dpdk-build installed in the cache (helpers/dpdk.py releases()). A test that starts
    testpmd with release=dpdk_release runs once per release, its id ending in [24.11]."""
    return request.param
