"""The integration suite under ASan+UBSan (a build with -Db_sanitize=address,undefined).

Our own programs of that build (dpdktel, dpdktel-fwd) link the sanitizer runtimes
themselves; collectd is Debian's and not instrumented, so it gets them with LD_PRELOAD to
load our instrumented plugins, with leak detection off for the daemon as a whole (the
valgrind test covers leaks in collectd). Every report goes to a file under one directory
(log_path); conftest.py fails the test after which a file appeared, and the run.
"""
import glob
import os

SANITIZE = os.environ.get('DTEL_SANITIZE', 'none')
SUPPRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lsan.supp')
RUNTIMES = [p for p in os.environ.get('DTEL_SANITIZER_RUNTIMES', '').split(':') if p]


def enabled():
    return SANITIZE not in ('', 'none')


def report_dir():
    return os.environ.get('DTEL_SANITIZER_LOGS')


def _options(prefix, leaks):
    d = report_dir()
    asan = f'log_path={d}/{prefix}asan:abort_on_error=1:detect_leaks={int(leaks)}'
    ubsan = f'log_path={d}/{prefix}ubsan:print_stacktrace=1:halt_on_error=1'
    return asan, ubsan


def setup_environment(directory):
    """Called once per run: reports go to <directory>/new (writable by the non-root
    collectd of the fault tests), and our instrumented programs started from here get the
    options through os.environ."""
    for sub, mode in (('new', 0o1777), ('seen', 0o755)):
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
        os.chmod(os.path.join(directory, sub), mode)
    os.environ['DTEL_SANITIZER_LOGS'] = os.path.join(directory, 'new')
    asan, ubsan = _options('', leaks=True)
    os.environ['ASAN_OPTIONS'] = asan
    os.environ['UBSAN_OPTIONS'] = ubsan
    os.environ['LSAN_OPTIONS'] = f'suppressions={SUPPRESSIONS}:print_suppressions=0'


def collectd_env(env=None):
    """The environment of a collectd that loads instrumented plugins."""
    env = dict(env if env is not None else os.environ)
    if not enabled():
        return env
    asan, ubsan = _options('collectd-', leaks=False)
    env['LD_PRELOAD'] = ':'.join(RUNTIMES + [p for p in env.get('LD_PRELOAD', '').split(':') if p])
    env['ASAN_OPTIONS'] = asan
    env['UBSAN_OPTIONS'] = ubsan
    return env


def reports():
    d = report_dir()
    return sorted(glob.glob(os.path.join(d, '*'))) if d else []


def take_reports():
    """The text of every report written since the last call; the files move to seen/."""
    out = []
    for path in reports():
        with open(path, errors='replace') as f:
            out.append(f'{os.path.basename(path)}:\n{f.read()}')
        os.rename(path, os.path.join(os.path.dirname(path), '..', 'seen',
                                     os.path.basename(path)))
    return out
