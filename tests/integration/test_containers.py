"""DPDK applications in containers (issue 32), with real processes: testpmd of each release
as pid 1 of its own pid namespace with a private tmpfs runtime dir (helpers/containers.py),
collectd with both plugins on the host, and collectd itself in a sibling pid namespace.

- On the host, DiscoverContainers: found through /proc/<pid>/root, named after its pod's
  cgroup, instance_info naming the real program and the pid the host knows it by, SIGSTOP
  "not responding" naming that pid, and killed then started again in a new namespace (pid 1
  again, a new container of the same pod): one "restarted" per plugin, restarts 1, its
  values those of the new process.
- From a sibling pid namespace sharing the runtime dir (SO_PEERCRED names no process): two
  restarts as pid 1, two "restarted" per plugin; no uptime, no host pid in instance_info,
  said once.
- Bad input: a container's dpdk_telemetry.v2 that is no DPDK socket, a cgroup name with
  characters outside the identifier rules, containers that come and go during the scans.

Each test skips, saying why, only where unshare is not permitted (and the per-release one on
releases other than 22.11 and 25.11, the dpdk_release fixture's). About a minute in all.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile

import pytest

from helpers import containers, dpdk
from helpers.collectd import Collectd
from helpers.wait import wait_until

PLUGINS = ('dpdktel_stats', 'dpdktel_events')
WHY_NOT = containers.unshare_ok()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or '')


# The two releases the issue names (scripts/check runs each per-release test in the matrix
# too, DTEL_MATRIX_ONLY): the matrix's others add minutes, not paths.
RELEASES = ('22.11', '25.11')


@pytest.fixture
def release(dpdk_release):
    if dpdk_release.name not in RELEASES:
        pytest.skip(f'DPDK {dpdk_release.version}: containers are checked on '
                    f'{" and ".join(RELEASES)} only')
    return dpdk_release


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix='dtc', dir='/tmp')  # 0700: a link dir of ours alone
    yield d
    shutil.rmtree(d, ignore_errors=True)


def config(rundir, links, extra=''):
    """Both plugins, discovery on @rundir (a dir of the test: other tests' applications under
    /var/run/dpdk are not this test's business) and into containers."""
    return ''.join(
        f'LoadPlugin {p}\n<Plugin {p}>\n  RuntimeDir "{rundir}"\n  DiscoverContainers true\n'
        f'  ContainerLinkDir "{links}"\n  RetireAfter 60\n{extra}</Plugin>\n'
        for p in PLUGINS)


def notes(cd, plugin, text):
    return [n for n in cd.notifications() if n.get('plugin') == plugin and text in n['message']]


def instance_info(cd, name):
    """The type instances of the instance_info values of @name in collectd's cache."""
    pat = re.compile(rf'[^/]+/dpdktel_stats-{re.escape(name)}/instance_info-(.*)')
    return [m.group(1) for m in map(pat.fullmatch, cd.listval()) if m]


def value(cd, ident):
    """A gauge in collectd's cache."""
    v = cd.getval(ident)
    return None if v is None else next(iter(v.values()))


def counter(cd, ident):
    """A counter as the plugin gave it (the csv writer keeps it raw)."""
    row = cd.last(ident)
    return None if row is None else row[1][0]


def test_container_found_named_and_followed(build_dir, source_dir, tmp, release):
    uid, pod_cgroup = containers.kubernetes_pod()
    top = f'dtel{os.getpid()}x{release.name.replace(".", "")}.slice'
    prefix = dpdk.unique_prefix('k')
    name = f'pod{uid}_{prefix}'
    links, rundir = os.path.join(tmp, 'links'), os.path.join(tmp, 'run')
    os.makedirs(rundir)
    cgs = []

    def start():
        cg = containers.Cgroup(top, *pod_cgroup())
        cgs.append(cg)
        app = containers.Contained(dpdk.testpmd(prefix=prefix, nports=2, release=release), cg)
        return app.__enter__()

    app = start()
    cd = Collectd(build_dir, source_dir, config(rundir, links, '  Timeout 0.2\n'),
                  ours=PLUGINS, interval=0.5)
    try:
        cd.start()
        assert app.inner_pid() == 1
        cd.wait_value(f'dpdktel_stats-{name}.port0/if_packets', timeout=20,
                      what=f'testpmd in its container as {name}')
        wait_until(lambda: value(cd, f'dpdktel_events-{name}/up') == 1, 10,
                   'dpdktel_events up')
        host_pid = app.pid
        info = wait_until(lambda: instance_info(cd, name), 10, 'instance_info')
        parts = info[0].split(',')
        # The real program and the pid the host knows it by; what it calls itself last.
        assert len(info) == 1 and parts[0].startswith(release.version) and \
            parts[1:3] == ['dpdk-testpmd', str(host_pid)] and parts[4] == '1', info
        log = cd.log()
        for p in PLUGINS:
            assert f"{p} plugin: DPDK application '{name}' runs in a container" in log, log
        assert 'cannot see into' not in log

        # Stopped: not responding, naming the process as the host knows it.
        os.kill(host_pid, signal.SIGSTOP)
        try:
            n = wait_until(lambda: notes(cd, 'dpdktel_events', 'is not responding'), 15,
                           '"not responding"')[-1]
        finally:
            os.kill(host_pid, signal.SIGCONT)
        assert f'(pid {host_pid} alive, no reply for ' in n['message'], n['message']
        wait_until(lambda: notes(cd, 'dpdktel_events', 'answers again'), 15, '"answers again"')

        # Killed, then a new container of the pod, pid 1 again: one restart per plugin.
        app.stop(signal.SIGKILL)
        app.cleanup()
        app = start()
        assert app.inner_pid() == 1 and app.pid != host_pid
        for p in PLUGINS:
            wait_until(lambda: notes(cd, p, f'DPDK application {name} restarted'), 30,
                       f'{p}: restarted')
            wait_until(lambda: counter(cd, f'{p}-{name}/restarts') == 1, 10, f'{p}: restarts 1')
        wait_until(lambda: any(i.split(',')[1:3] == ['dpdk-testpmd', str(app.pid)]
                               for i in instance_info(cd, name)), 10,
                   'instance_info of the new process')
        n = notes(cd, 'dpdktel_events', 'restarted')
        assert len(n) == 1 and f'(pid {host_pid} → {app.pid})' in n[0]['message'], n
        assert len(notes(cd, 'dpdktel_stats', 'restarted')) == 1
        # Caches reset: the new process's port counters, from 0 again, are read.
        cd.wait_value(f'dpdktel_events-{name}.port0/link_status', what='link of the new one')
        assert cd.running()
    finally:
        cd.cleanup()
        app.cleanup()
        for cg in reversed(cgs):  # the containers' cgroups, then their pod's
            cg.cleanup()


def test_sibling_namespace_restarts_as_pid_1(build_dir, source_dir, tmp):
    """collectd and the application in sibling pid namespaces sharing the runtime dir: no pid
    of the application is known to collectd, every start is pid 1, and only the socket file
    tells a restart."""
    base = os.path.join(tmp, 'rt')
    rundir = os.path.join(base, 'dpdk')
    os.makedirs(rundir)
    prefix = dpdk.unique_prefix('s')
    conf = ''.join(f'LoadPlugin {p}\n<Plugin {p}>\n  RuntimeDir "{rundir}"\n  Timeout 0.2\n'
                   f'</Plugin>\n' for p in PLUGINS)

    def start():
        app = dpdk.testpmd(prefix=prefix, nports=1, runtime_base=base)
        app.argv = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'] + app.argv
        return app.__enter__()

    cd = Collectd(build_dir, source_dir, conf, ours=PLUGINS, interval=0.5,
                  wrapper=['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'])
    app = start()
    try:
        cd.start()
        cd.wait_value(f'dpdktel_stats-{prefix}.port0/if_packets', timeout=20, what='testpmd')
        for restart in (1, 2):
            app.stop(signal.SIGKILL)
            app.cleanup()
            app = start()
            for p in PLUGINS:
                wait_until(lambda: len(notes(cd, p, f'DPDK application {prefix} restarted'))
                           == restart, 30, f'{p}: restart {restart}')
        for p in PLUGINS:
            msgs = [n['message'] for n in notes(cd, p, 'restarted')]
            # "?" where the new process was first reached before it greeted (a loaded
            # machine: testpmd's greeting later than Timeout): its socket file said it.
            assert len(msgs) == 2 and all(re.fullmatch(
                rf'DPDK application {prefix} restarted \(pid (1 in its pid namespace|\?) → '
                r'(1 in its pid namespace|\?)\)', m) for m in msgs), msgs
            wait_until(lambda: counter(cd, f'{p}-{prefix}/restarts') == 2, 10,
                       f'{p}: restarts 2')
        log = cd.log()
        for p in PLUGINS:
            said = f"{p} plugin: DPDK application '{prefix}' ({rundir}/{prefix}/" \
                "dpdk_telemetry.v2) runs in a pid namespace collectd cannot see into"
            assert log.count(said) == 1, log
        assert not [i for i in cd.listval() if i.endswith(f'dpdktel_stats-{prefix}/uptime')]
        info = instance_info(cd, prefix)
        assert info and all(re.fullmatch(r'[^,]*,,,[^,]*,1', i) for i in info), info
        assert cd.running()
    finally:
        cd.cleanup()
        app.cleanup()


def not_telemetry(path):
    """A SOCK_SEQPACKET listener that answers every connection with garbage, then closes."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(4)
    return s


def test_bad_input(build_dir, source_dir, tmp):
    """A container whose dpdk_telemetry.v2 is no DPDK socket, in a cgroup whose name has
    characters outside the identifier rules; containers that come and go while collectd scans
    (their /proc/<pid>/root vanishes under the scan): a clear line, no crash, the name
    sanitized."""
    links, rundir = os.path.join(tmp, 'links'), os.path.join(tmp, 'run')
    os.makedirs(rundir)
    cg = containers.Cgroup(f'dtel{os.getpid()}b', 'we ird:na,me')
    # A shell as pid 1 of the container; the "socket" is a Python listener it runs there.
    script = ('import socket,time\n'
              's=socket.socket(socket.AF_UNIX,socket.SOCK_STREAM)\n'
              'import os; os.makedirs("/var/run/dpdk/junk")\n'
              's.bind("/var/run/dpdk/junk/dpdk_telemetry.v2"); s.listen(4)\n'
              'print("ready", flush=True)\n'
              'while True:\n c,_=s.accept(); c.sendall(b"garbage"); c.close()\n')
    junk = subprocess.Popen(containers.contain(['/usr/bin/python3', '-c', script], cg),
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    churn = None
    cd = Collectd(build_dir, source_dir, config(rundir, links), ours=PLUGINS, interval=0.5)
    try:
        assert junk.stdout.readline().strip() == 'ready'
        cd.start()
        name = 'we_ird_na_me_junk'
        for p in PLUGINS:
            wait_until(lambda: f"{p} plugin: DPDK application '{name}' (" in cd.log(), 15,
                       f'{p}: a line about {name}')
        # Containers coming and going under the scans for a few passes.
        churn = subprocess.Popen(
            ['sh', '-c', 'while :; do unshare --mount --propagation private sleep 0.02 & '
             'sleep 0.01; done'],
            start_new_session=True)
        rows = len(cd.csv(f'dpdktel_stats-{name}/up'))
        wait_until(lambda: len(cd.csv(f'dpdktel_stats-{name}/up')) >= rows + 6, 15,
                   'six more reads while containers come and go')
        log = cd.log()
        for p in PLUGINS:
            # One line for what it is, not one per read.
            lines = [line for line in log.splitlines()
                     if f"{p} plugin: DPDK application '{name}' (" in line]
            assert 1 <= len(lines) <= 2, lines
            assert re.search(r'not a DPDK telemetry socket|cannot be read', lines[0]), lines
        # (A process this machine does not let root trace may be said once: not the scan.)
        assert 'DiscoverContainers: cannot look into containers' not in log, log
        assert log.count('DiscoverContainers: cannot look into the mount namespace') <= 2, log
        assert value(cd, f'dpdktel_stats-{name}/up') == 0
        assert cd.running()
    finally:
        if churn is not None:
            os.killpg(churn.pid, signal.SIGKILL)
            churn.wait()
        cd.cleanup()
        os.kill(junk.pid, signal.SIGKILL)
        junk.wait()
        cg.cleanup()
