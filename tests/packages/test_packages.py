"""The Debian packages as an operator gets them: built from the `meson dist` tarball, checked
by lintian, installed with apt-get, the forwarder started as its systemd unit runs it, the
packaged collectd snippet enabled, values and a link-down notification seen from the
forwarder and values from a testpmd of the system's DPDK, and everything purged again. The
same on Debian 12 and 13 (scripts/check runs it on the host and in its trixie root).

Only installed files are used once the packages are in: the forwarder is /usr/bin/dpdktel-fwd
started with the unit's own ExecStart line, collectd loads /usr/lib/collectd/dpdktel_*.so
(copied into its PluginDir by the Collectd helper, as for every test: collectd refuses
symlinks) and reads its TypesDB and LoadPlugin lines from the packaged snippet.

Shared machine: the packages are purged in a `finally`, the test collectd instances of other
tests never read /etc/collectd (tests/pylib/helpers/collectd.py writes their whole
configuration), and the build-tree binaries of other tests keep finding the build-tree
library (their RUNPATH comes first).
"""
import glob
import grp
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile

from conftest import PACKAGES, installed
from helpers import dpdk
from helpers.collectd import Collectd
from helpers.wait import wait_until

UNIT = '/usr/lib/systemd/system/dpdktel-fwd@.service'
SNIPPET = '/etc/collectd/collectd.conf.d/dpdktel.conf'
GROUP = 'dpdktel'
# The lines of the snippet that enable it (debian/collectd/dpdktel.conf): the user removes
# the "#" in front of them.
ENABLE_RE = re.compile(r'^#((?:TypesDB|LoadPlugin) .*)$', re.M)


def run(argv, timeout=600, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    assert p.returncode == 0, f'{argv} exited {p.returncode}:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}'
    return p.stdout


def meson_version(source_dir):
    """The version of the project() call in meson.build: the one everything must report."""
    text = open(os.path.join(source_dir, 'meson.build')).read()
    return re.search(r"project\('dpdktel'.*?version:\s*'([^']+)'", text, re.S).group(1)


def build_env():
    env = dict(os.environ)
    # Debian's DPDK, which the packages depend on, not a release of the test matrix.
    env.pop('PKG_CONFIG_PATH', None)
    # nocheck: the unit and plugin suites that debian/rules would run again are run by
    # scripts/check on the same sources (plain, ASan, TSan); parallel: every CPU. Together
    # they take about two minutes off this test.
    env['DEB_BUILD_OPTIONS'] = f'nocheck parallel={os.cpu_count() or 1}'
    env['LC_ALL'] = 'C.UTF-8'
    return env


def dist_and_build(source_dir, work, version):
    """meson dist of the checkout, then dpkg-buildpackage -b in the unpacked tarball.
    Returns the directory holding the .deb files."""
    setup = os.path.join(work, 'dist-setup')
    run(['meson', 'setup', setup, source_dir, '-Dtests=disabled', '-Dfwd=disabled',
         '-Dplugins=disabled'], env=build_env())
    # --allow-dirty: the committed tree is what goes in; --no-tests: the build below tests.
    run(['meson', 'dist', '-C', setup, '--no-tests', '--allow-dirty', '--formats', 'gztar'],
        env=build_env())
    tarball = os.path.join(setup, 'meson-dist', f'dpdktel-{version}.tar.gz')
    assert os.path.exists(tarball), os.listdir(os.path.join(setup, 'meson-dist'))
    with tarfile.open(tarball) as t:
        # The 'data' filter where Python has it (trixie's 3.13 warns without it; bookworm's
        # 3.11.2 has none): a tarball of ours, files and dirs, unpacks the same either way.
        t.extractall(work, **({'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}))
    tree = os.path.join(work, f'dpdktel-{version}')
    assert os.path.exists(os.path.join(tree, 'debian', 'control')), 'debian/ not in the tarball'
    run(['dpkg-buildpackage', '-us', '-uc', '-b'], cwd=tree, env=build_env(), timeout=1200)
    return work


def exec_start(instance):
    """The unit's command line for @instance, expanded as systemd does: %i is the instance
    name; a lone $VAR becomes the words of VAR's value from EnvironmentFile (systemd.service(5),
    "Command lines"). Returns (argv, environment file path, UnsetEnvironment names)."""
    unit = {}
    for line in open(UNIT):
        line = line.strip()
        if line and not line.startswith('#') and '=' in line:
            k, v = line.split('=', 1)
            unit.setdefault(k, []).append(v)
    assert unit['RuntimeDirectory'] == ['dpdk'], unit.get('RuntimeDirectory')
    envfile = unit['EnvironmentFile'][0].replace('%i', instance)
    env = {}
    for line in open(envfile):
        line = line.strip()
        if line and not line.startswith('#'):
            k, v = line.split('=', 1)
            env[k] = v
    argv = []
    for word in shlex.split(unit['ExecStart'][0].replace('%i', instance)):
        m = re.fullmatch(r'\$(\w+)', word)
        argv += env.get(m.group(1), '').split() if m else [word]
    unset = ' '.join(unit.get('UnsetEnvironment', [])).split()
    return argv, envfile, unset, unit


def package_files():
    """Every file and symlink (not directory) the packages installed."""
    files = []
    for p in PACKAGES:
        for path in run(['dpkg-query', '-L', p]).splitlines():
            # Not directories, nor symlinks to them (/lib is one on a merged-/usr system).
            if os.path.lexists(path) and not os.path.isdir(path):
                files.append(path)
    return files


def apt(*args):
    # Another apt on this machine holds the lock for a while: wait for it, not fail.
    return run(['apt-get', '-o', 'DPkg::Lock::Timeout=300', '-y', '-q'] + list(args),
               env=dict(os.environ, DEBIAN_FRONTEND='noninteractive'), timeout=900)


def test_packages_build_install_run_purge(source_dir):
    version = meson_version(source_dir)
    work = tempfile.mkdtemp(prefix='dtel-pkg-')
    name = f'dtpkg{os.getpid() % 100000}'
    ifaces = [f'{name}t{i}' for i in range(2)]
    conf = f'/etc/dpdktel/fwd-{name}.conf'
    group_existed = True
    try:
        grp.getgrnam(GROUP)
    except KeyError:
        group_existed = False
    run_dpdk_existed = os.path.isdir('/run/dpdk')
    app = cd = pmd = None
    files = []
    purged = False
    try:
        # ---- build: from the release tarball, clean, lintian-clean ----------------------
        out = dist_and_build(source_dir, work, version)
        arch = run(['dpkg', '--print-architecture']).strip()
        debs = [os.path.join(out, f'{p}_{version}_{"all" if p == "dpdktel-monitoring" else arch}.deb')
                for p in PACKAGES]
        for d in debs:
            assert os.path.exists(d), f'{d} not built: {sorted(os.listdir(out))}'
        changes = glob.glob(os.path.join(out, f'dpdktel_{version}_*.changes'))
        lint = subprocess.run(['lintian', '--pedantic', '--no-tag-display-limit'] + changes,
                              capture_output=True, text=True, timeout=600)
        assert lint.returncode == 0 and changes, f'lintian failed:\n{lint.stdout}{lint.stderr}'
        bad = [l for l in lint.stdout.splitlines() if l[:2] in ('E:', 'W:')]
        assert not bad, 'lintian:\n' + lint.stdout

        # ---- install ---------------------------------------------------------------------
        apt('install', '--no-install-recommends', *debs)
        files = package_files()
        for p in PACKAGES:
            v = run(['dpkg-query', '-W', '-f=${Version}', p])
            assert v == version, f'{p} is {v}, meson.build says {version}'
        assert run(['/usr/bin/dpdktel', '--version']).strip() == \
            f'dpdktel {version} (libdpdktel {version})'
        gr = grp.getgrnam(GROUP)  # created by the package (sysusers)
        # The monitoring files work where they are installed.
        if shutil.which('promtool'):
            run(['promtool', 'check', 'config', '/usr/share/dpdktel/prometheus/prometheus.yml'])
            run(['promtool', 'test', 'rules'] +
                sorted(glob.glob('/usr/share/dpdktel/prometheus/tests/*.test.yml')))

        # ---- the forwarder, as dpdktel-fwd@NAME.service starts it ------------------------
        verify = subprocess.run(['systemd-analyze', 'verify', f'dpdktel-fwd@{name}.service'],
                                capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0 and not verify.stdout + verify.stderr, \
            f'systemd-analyze verify: {verify.stdout}{verify.stderr}'
        with open(conf, 'w') as f:
            f.write(f'EAL_ARGS=-l 0,1 --no-huge -m 1024 --no-pci '
                    f'--vdev=net_tap0,iface={ifaces[0]} --vdev=net_tap1,iface={ifaces[1]}\n'
                    'FWD_ARGS=--stall-ms 200\n')
        argv, envfile, unset, unit = exec_start(name)
        assert envfile == conf
        assert argv[0] == '/usr/bin/dpdktel-fwd'
        # What systemd gives the service: RuntimeDirectory=dpdk makes /run/dpdk (mode
        # RuntimeDirectoryMode) and sets RUNTIME_DIRECTORY; UnsetEnvironment then drops it.
        os.makedirs('/run/dpdk', mode=int(unit['RuntimeDirectoryMode'][0], 8), exist_ok=True)
        env = dict(os.environ, RUNTIME_DIRECTORY='/run/dpdk')
        for var in unset:
            env.pop(var, None)
        app = dpdk.DpdkApp(argv, name, name='dpdktel-fwd', env=env, keep_stdin=False,
                           ready=dpdk.fwd_ready)
        # Where discovery looks by default (/var/run/dpdk is /run/dpdk): DpdkApp waits for
        # the socket there; a unit leaving RUNTIME_DIRECTORY set would put it in
        # /run/dpdk/dpdk/NAME and this start would time out.
        app.start()
        sock = os.path.join('/var/run/dpdk', name, 'dpdk_telemetry.v2')
        assert os.path.realpath(sock) == f'/run/dpdk/{name}/dpdk_telemetry.v2'
        assert os.stat(sock).st_gid == gr.gr_gid, 'socket not in the dpdktel group'
        # And an application of the system's DPDK that is not ours: testpmd (22.11 on
        # bookworm, 24.11 on trixie), under /var/run/dpdk where the snippet's discovery looks.
        system = dpdk.system_release()
        pmd = dpdk.testpmd(release=system, nports=2, extra=['--total-num-mbufs=16384'])
        pmd.start()

        # ---- collectd with the packaged snippet enabled ----------------------------------
        text = open(SNIPPET).read()
        assert not re.search(r'^[^#\s]', text, re.M), 'the snippet loads something by default'
        enabled, n = ENABLE_RE.subn(r'\1', text)
        assert n == 3, f'expected 3 lines to uncomment, found {n}'
        with open(SNIPPET, 'w') as f:
            f.write(enabled)
        include = f'<Include "{os.path.dirname(SNIPPET)}">\n  Filter "dpdktel.conf"\n</Include>\n'
        cd = Collectd(None, source_dir, include, types_db=(),
                      ours=('dpdktel_stats', 'dpdktel_events'),
                      plugin_dir_source='/usr/lib/collectd')
        cd.start()
        log_re = f'plugin: dpdktel {version} \\(libdpdktel {version}\\)'
        for plugin in ('dpdktel_stats', 'dpdktel_events'):
            wait_until(lambda: re.search(f'{plugin} {log_re}', cd.log()), 10,
                       f'{plugin} logs its version')
        cd.wait_value(f'dpdktel_stats-{name}.port0/if_packets', what='dpdktel_stats values')
        cd.wait_value(f'dpdktel_events-{name}.port1/link_status', lambda r: r[1] == [1],
                      what='dpdktel_events: port 1 up')
        run(['ip', 'link', 'set', 'dev', ifaces[1], 'down'])
        note = wait_until(lambda: [n for n in cd.notifications()
                                   if n.get('plugin') == 'dpdktel_events' and
                                   n['message'].startswith(f'Link down on {name} port 1')],
                          15, 'link-down notification')[-1]
        assert note['severity'] == 'FAILURE', note
        cd.wait_value(f'dpdktel_events-{name}.port1/link_status', lambda r: r[1] == [0],
                      what='dpdktel_events: port 1 down')
        # testpmd read by the packaged plugins: its counters, its release in instance_info.
        cd.wait_value(f'dpdktel_stats-{pmd.prefix}.port1/if_packets',
                      what=f'dpdktel_stats values of testpmd (DPDK {system.version})')
        cd.wait_value(f'dpdktel_stats-{pmd.prefix}/instance_info-{system.version},'
                      f'dpdk-testpmd,{pmd.pid},{version},{pmd.pid}',
                      what=f'instance_info: DPDK {system.version}, dpdk-testpmd, dpdktel {version}')
        cd.wait_value(f'dpdktel_events-{pmd.prefix}.port0/link_status', lambda r: r[1] == [1],
                      what='dpdktel_events: testpmd port 0 up')
        cd.stop()
        cd.cleanup()
        cd = None
        assert app.stop() == 0, app.log()
        app.cleanup()
        app = None
        pmd.cleanup()
        pmd = None
        os.unlink(conf)

        # ---- purge: nothing of the packages is left ----------------------------------------
        apt('purge', *PACKAGES)
        purged = True
        left = [p for p in PACKAGES if installed(p)]
        assert not left, f'still known to dpkg after purge: {left}'
        left = [f for f in files if os.path.lexists(f)]
        assert not left, f'left after purge: {left}'
        for d in ('/etc/dpdktel', '/usr/share/dpdktel', '/usr/share/doc/collectd-dpdktel',
                  '/etc/collectd/collectd.conf.d/dpdktel.conf'):
            assert not os.path.lexists(d), f'{d} left after purge'
    finally:
        if cd is not None:
            cd.cleanup()
        if app is not None:
            app.cleanup()
        if pmd is not None:
            pmd.cleanup()
        if os.path.exists(conf):
            os.unlink(conf)
        if not purged and any(installed(p) for p in PACKAGES):
            subprocess.run(['apt-get', '-o', 'DPkg::Lock::Timeout=300', '-y', '-q', 'purge'] +
                           [p for p in PACKAGES if installed(p)],
                           env=dict(os.environ, DEBIAN_FRONTEND='noninteractive'),
                           capture_output=True, timeout=900)
        # Debian keeps a system group after purge (files may still carry its gid): the test
        # removes the one its install created.
        if not group_existed:
            subprocess.run(['groupdel', GROUP], capture_output=True)
        if not run_dpdk_existed:
            try:
                os.rmdir('/run/dpdk')
            except OSError:
                pass
        shutil.rmtree(work, ignore_errors=True)
