"""Start and stop real DPDK processes (dpdk-testpmd, dpdktel-fwd) for tests.

Every process gets its own --file-prefix, is waited for with a deadline (its telemetry socket
answering), and is ended by PID; its runtime dir is removed afterwards.
"""
import functools
import glob
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile

from . import telemetry
from .process import end
from .wait import Fatal, wait_until

RUNTIME_DIR = '/var/run/dpdk'
EAL_COMMON = ['--no-huge', '-m', '1024', '--no-pci']
_counter = itertools.count()


class Release:
    """One DPDK release of the version matrix (docs/compatibility.md).

    prefix None is the system's DPDK (Debian's: 22.11 on bookworm, 24.11 on trixie;
    /usr/bin/dpdk-testpmd; its version from system_release()); otherwise the install prefix
    scripts/dpdk-build made in the cache, with bin/dpdk-testpmd and lib/ (which is not on
    the loader's path: LD_LIBRARY_PATH points there)."""

    def __init__(self, version, prefix=None):
        self.version = version
        self.name = '.'.join(version.split('.')[:2])  # what test ids carry: [24.11]
        self.prefix = prefix

    @property
    def key(self):
        return tuple(int(x) for x in self.version.split('.'))

    @property
    def testpmd(self):
        return os.path.join(self.prefix, 'bin', 'dpdk-testpmd') if self.prefix else 'dpdk-testpmd'

    @property
    def lib_dir(self):
        return os.path.join(self.prefix, 'lib') if self.prefix else None

    def env(self, base=None):
        """base (default os.environ) with this release's libraries first on the loader's
        path; None (inherit) for the system DPDK when no base is given."""
        if not self.prefix:
            return base
        env = dict(base if base is not None else os.environ)
        env['LD_LIBRARY_PATH'] = ':'.join(
            p for p in (self.lib_dir, env.get('LD_LIBRARY_PATH')) if p)
        return env

    def __repr__(self):
        return f'DPDK {self.version}' + (f' ({self.prefix})' if self.prefix else '')


@functools.lru_cache(maxsize=None)
def system_release():
    """The system's DPDK (prefix None), its version asked of the system, never assumed:
    pkg-config's libdpdk (libdpdk-dev), else the version of the installed dpdk package.
    A cached release's PKG_CONFIG_PATH is left out of the question."""
    env = {k: v for k, v in os.environ.items() if k != 'PKG_CONFIG_PATH'}
    try:
        p = subprocess.run(['pkg-config', '--modversion', 'libdpdk'], capture_output=True,
                           text=True, env=env, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            return Release(p.stdout.strip())
    except FileNotFoundError:
        pass
    try:
        p = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'dpdk'], capture_output=True,
                           text=True, timeout=30)
        if p.returncode == 0 and p.stdout.strip():
            # 24.11.8-0+deb13u1: epoch and Debian revision off.
            return Release(p.stdout.strip().split(':')[-1].split('-')[0].split('+')[0])
    except FileNotFoundError:
        pass
    raise Fatal('no system DPDK: neither `pkg-config --modversion libdpdk` nor the dpdk '
                'package answers (install dpdk and libdpdk-dev: scripts/bootstrap)')


def __getattr__(name):
    # dpdk.SYSTEM, asked only when used: importing this module runs nothing.
    if name == 'SYSTEM':
        return system_release()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def cache_dir():
    return os.environ.get('DTEL_DPDK_CACHE', '/var/cache/dpdktel')


def releases():
    """The system's DPDK plus every release scripts/dpdk-build completed in the cache (its
    stamp is written last), oldest first. DTEL_DPDK_RELEASES=22.11,25.11 keeps only those."""
    try:
        found = [system_release()]
    except Fatal:
        found = []  # no DPDK installed: the suites that need one skip and say so
    for stamp in glob.glob(os.path.join(cache_dir(), 'dpdk-*', '.dtel-build-stamp')):
        prefix = os.path.dirname(stamp)
        r = Release(os.path.basename(prefix)[len('dpdk-'):], prefix)
        if os.access(r.testpmd, os.X_OK):
            found.append(r)
    wanted = os.environ.get('DTEL_DPDK_RELEASES')
    if wanted:
        names = wanted.split(',')
        found = [r for r in found if r.name in names or r.version in names]
    return sorted(found, key=lambda r: r.key)


def default_release():
    """The release of a testpmd started without release=: the system's, or the one
    DTEL_TESTPMD_RELEASE names (24.11 or 24.11.6), to run any test against it by hand."""
    wanted = os.environ.get('DTEL_TESTPMD_RELEASE')
    if not wanted:
        return system_release()
    for r in releases():
        if wanted in (r.name, r.version):
            return r
    raise Fatal(f"DTEL_TESTPMD_RELEASE='{wanted}': no such DPDK release (have: "
                f"{', '.join(r.version for r in releases())}; scripts/dpdk-build builds them)")


def build_release():
    """The DPDK the dpdktel-fwd under test was compiled against. By default the forwarder of
    the build under test (DTEL_BUILD_DIR): meson passes its DPDK's version and install prefix
    (tests/integration/meson.build). DTEL_FWD_BINARY names another forwarder (scripts/check's
    build-dpdk-<version>) and DTEL_FWD_DPDK_PREFIX the install prefix of the DPDK it was built
    against (its libdpdk.pc gives the version). A forwarder finds its DPDK libraries by its
    rpath (fwd/meson.build)."""
    prefix = os.environ.get('DTEL_FWD_DPDK_PREFIX')
    if os.environ.get('DTEL_FWD_BINARY') and not prefix:
        raise Fatal('DTEL_FWD_BINARY is set but DTEL_FWD_DPDK_PREFIX is not: set it to the '
                    'install prefix of the DPDK that forwarder was built against')
    if prefix:
        pc = os.path.join(prefix, 'lib', 'pkgconfig', 'libdpdk.pc')
        try:
            with open(pc) as f:
                version = next(l.split(':', 1)[1].strip() for l in f
                               if l.startswith('Version:'))
        except (OSError, StopIteration):
            raise Fatal(f"DTEL_FWD_DPDK_PREFIX='{prefix}': no Version in {pc} "
                        '(expected a DPDK install prefix made by scripts/dpdk-build)') from None
        return Release(version, prefix)
    prefix = os.environ.get('DTEL_DPDK_PREFIX', '/usr')
    version = os.environ.get('DTEL_DPDK_VERSION') or system_release().version
    return Release(version, None if prefix == '/usr' else prefix)


def build_config(release, name):
    """The value of `#define name` in release's rte_build_config.h (a string literal without
    its quotes)."""
    if release.prefix:
        headers = [os.path.join(release.prefix, 'include', 'rte_build_config.h')]
    else:
        headers = (glob.glob('/usr/include/*/dpdk/rte_build_config.h') +
                   ['/usr/include/dpdk/rte_build_config.h'])
    for h in headers:
        try:
            with open(h) as f:
                for line in f:
                    words = line.split(None, 2)
                    if words[:2] == ['#define', name] and len(words) == 3:
                        return words[2].strip().strip('"')
        except FileNotFoundError:
            continue
    raise Fatal(f'{release!r}: no {name} in {", ".join(headers)} (libdpdk-dev: scripts/bootstrap)')


def max_ethports(release):
    """RTE_MAX_ETHPORTS of release's build: 32 in Debian's 22.11, 64 in scripts/dpdk-build's."""
    return int(build_config(release, 'RTE_MAX_ETHPORTS'))


def pmd_dir(release):
    """The dir EAL loads release's drivers from (RTE_EAL_PMD_PATH): Debian's
    /usr/lib/<triplet>/dpdk/pmds-<ABI>, pmds-23.0 for 22.11 and pmds-25.0 for 24.11."""
    return build_config(release, 'RTE_EAL_PMD_PATH')


def abi_major(release):
    """The major of the ABI of release's drivers (23 for 22.11, 25 for 24.11): the number
    in the names of Debian's driver packages (librte-crypto-null25)."""
    base = os.path.basename(pmd_dir(release))
    if not base.startswith('pmds-'):
        raise Fatal(f'{release!r}: RTE_EAL_PMD_PATH {pmd_dir(release)} is not a pmds-<ABI> dir')
    return base[len('pmds-'):].split('.')[0]


def unique_prefix(tag='t'):
    """A short, unique file prefix (socket paths must stay under 108 bytes)."""
    return f'dt{tag}{os.getpid() % 100000}x{next(_counter)}'


def socket_path(prefix, index=0, runtime_dir=RUNTIME_DIR):
    name = 'dpdk_telemetry.v2' + (f':{index}' if index else '')
    return os.path.join(runtime_dir, prefix, name)


def _answers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(1.0)
    try:
        s.connect(path)
        return len(s.recv(4096)) > 0
    finally:
        s.close()


class DpdkApp:
    """One DPDK process. argv is the full command line (EAL options included).

    runtime_base: a directory of the test's own; EAL then puts the runtime dir (and the
    socket) under <runtime_base>/dpdk/<prefix> instead of /var/run/dpdk/<prefix>, so that
    discovery there sees only this test's applications.
    """

    def __init__(self, argv, prefix, name='dpdk', netns=None, env=None, keep_stdin=True,
                 index=0, runtime_base=None, ready=None):
        """ready(app) -> bool: when the application counts as started, checked after its
        telemetry socket answers (default: every port started)."""
        self.argv = list(argv)
        self.ready = ready or DpdkApp._ports_started
        self.index = index
        self.runtime_dir = RUNTIME_DIR
        if runtime_base is not None:
            os.makedirs(runtime_base, exist_ok=True)  # EAL makes only the dirs below it
            env = dict(env if env is not None else os.environ, RUNTIME_DIRECTORY=runtime_base)
            self.runtime_dir = os.path.join(runtime_base, 'dpdk')
        if netns:
            self.argv = ['ip', 'netns', 'exec', netns] + self.argv
        self.prefix = prefix
        self.name = name
        self.env = env
        self.keep_stdin = keep_stdin
        self.proc = None
        self.log_file = tempfile.NamedTemporaryFile(prefix=f'{name}-{prefix}-', suffix='.log',
                                                    delete=False)

    @property
    def socket(self):
        return socket_path(self.prefix, self.index, self.runtime_dir)

    @property
    def pid(self):
        return self.proc.pid

    def start(self, timeout=30):
        # testpmd without -i waits for Enter on stdin: keep a pipe open so it keeps running.
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE if self.keep_stdin else subprocess.DEVNULL,
            stdout=self.log_file, stderr=subprocess.STDOUT, env=self.env,
            start_new_session=True)
        wait_until(lambda: self._check_alive() and _answers(self.socket), timeout,
                   f'{self.name} telemetry socket {self.socket}')
        # Telemetry is up at the end of EAL init, before the application starts its ports.
        wait_until(lambda: self._check_alive() and self.ready(self), timeout,
                   f'{self.name} ready')
        return self

    def _ports_started(self):
        with telemetry.Client(self.socket) as c:
            ports = c.query('/ethdev/list')
            return all(c.query(f'/ethdev/info,{p}')['dev_started'] == 1 for p in ports)

    def _check_alive(self):
        if self.proc.poll() is not None:
            raise Fatal(f'{self.name} exited with {self.proc.returncode}:\n{self.log()}')
        return True

    def log(self):
        with open(self.log_file.name, errors='replace') as f:
            return f.read()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def send_signal(self, sig):
        if self.running():
            os.kill(self.proc.pid, sig)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """End the process by PID; returns its exit code. SIGKILL if it does not exit."""
        if self.proc is None:
            return None
        if sig == signal.SIGTERM and self.proc.stdin and self.proc.poll() is None:
            # Interactive testpmd (-i) handles SIGTERM by waiting for its prompt to return,
            # which takes until end of file on stdin: give it that first (seen: 15 s per
            # stop until the SIGKILL, most of test_cli's time).
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        end(self.proc, sig, timeout)
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.returncode

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def cleanup(self):
        self.stop()
        shutil.rmtree(os.path.join(self.runtime_dir, self.prefix), ignore_errors=True)
        try:
            os.unlink(self.log_file.name)
        except FileNotFoundError:
            pass

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            # A process that never got ready is still ended and its runtime dir removed.
            self.cleanup()
            raise

    def __exit__(self, *exc):
        self.cleanup()


def testpmd(prefix=None, nports=4, lcores='0,1', vdevs=None, extra=(), release=None, **kw):
    """dpdk-testpmd of release (default: the system's) forwarding (io mode) between nports
    net_null ports. Without -i, testpmd from 23.11 on exits when its stdin reaches end of
    file: DpdkApp keeps a pipe open there (keep_stdin)."""
    release = release or default_release()
    prefix = prefix or unique_prefix('p')
    vdevs = vdevs or [f'net_null{i}' for i in range(nports)]
    kw['env'] = release.env(kw.get('env'))
    extra = list(extra)
    if release.prefix and not any(str(a).startswith('--total-num-mbufs') for a in extra):
        # testpmd sizes its mbuf pool by RTE_MAX_ETHPORTS: with the 64 ports of the cached
        # builds that is 310912 mbufs, more than -m 1024 holds. 155456 is what 22.11's
        # 32-port build takes, so every release uses the same memory.
        extra.append('--total-num-mbufs=155456')
    # stdbuf: testpmd's stdout goes to a file; line buffering lets tests read it as it comes.
    argv = (['stdbuf', '-oL', release.testpmd, '-l', lcores] + EAL_COMMON + [f'--vdev={v}' for v in vdevs] +
            [f'--file-prefix={prefix}', '--', '--forward-mode=io', '--auto-start'] + list(extra))
    return DpdkApp(argv, prefix, name='testpmd', **kw)


def testpmd_cmd(app, *lines, timeout=30):
    """Type each line at interactive testpmd's prompt (started with -i: DpdkApp keeps its
    stdin a pipe) and wait until it prints its prompt again: the command has run. testpmd's
    cmdline writes "testpmd> " after each command (and once at start), unbuffered."""
    def prompts():
        return app.log().count('testpmd> ')

    wait_until(lambda: app._check_alive() and prompts() >= 1, timeout, 'the testpmd prompt')
    for line in lines:
        before = prompts()
        app.proc.stdin.write(line.encode() + b'\n')
        app.proc.stdin.flush()
        wait_until(lambda: app._check_alive() and prompts() > before, timeout,
                   f'testpmd> {line}')


def fwd_ready(app):
    """dpdktel-fwd registers its /fwd/... commands once its ports are started, just before
    it launches the forwarding lcores (ports left out by -p are never started)."""
    with telemetry.Client(app.socket) as c:
        info = c.query('/fwd/info')
        return info is not None and all(
            c.query(f'/ethdev/info,{p}')['dev_started'] == 1 for p in info['ports'])


def fwd(binary, prefix=None, nports=2, lcores='0,1', vdevs=None, eal_extra=(), app_args=(),
        **kw):
    """dpdktel-fwd between nports net_null ports (or the given vdevs).

    lcores is passed as -l, unless eal_extra holds its own --lcores; -m in eal_extra replaces
    the -m 1024 of EAL_COMMON."""
    prefix = prefix or unique_prefix('f')
    vdevs = vdevs or [f'net_null{i}' for i in range(nports)]
    lcore_args = [] if any(str(a).startswith('--lcores') for a in eal_extra) else ['-l', lcores]
    eal = list(EAL_COMMON)
    if '-m' in eal_extra:
        # Its own -m replaces ours: EAL from 25.11 (argparse) refuses an option given twice.
        i = eal.index('-m')
        del eal[i:i + 2]
    argv = ([binary] + lcore_args + eal + list(eal_extra) +
            [f'--vdev={v}' for v in vdevs] + [f'--file-prefix={prefix}', '--'] + list(app_args))
    kw.setdefault('ready', fwd_ready)
    return DpdkApp(argv, prefix, name='dpdktel-fwd', keep_stdin=False, **kw)
