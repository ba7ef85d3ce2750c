"""DPDK applications in containers, made of what a container runtime uses: a cgroup named as
runc/containerd name one, and `unshare --pid --fork --mount --mount-proc` with a private
tmpfs over /var/run/dpdk inside (the application's runtime dir, which the host never sees).

The application is pid 1 of its pid namespace (unshare's child execs it), as a container's
entrypoint is; the host knows it by another pid (Contained.pid). Its socket is reached from
the host through /proc/<pid>/root (proc(5)). Every process is ended by PID: unshare's
--kill-child ends the application with it.
"""
import os
import shlex
import subprocess
import uuid

from . import dpdk
from .wait import Fatal, wait_until


def unshare_ok():
    """None when this machine lets us make pid and mount namespaces, else why not."""
    p = subprocess.run(['unshare', '--pid', '--fork', '--mount', '--mount-proc', 'true'],
                       capture_output=True, text=True, timeout=30)
    return None if p.returncode == 0 else (
        f'unshare --pid --fork --mount --mount-proc is not permitted here: '
        f'{p.stderr.strip() or p.returncode}')


def cgroup_root():
    """Where this machine's cgroup v2 tree is mounted (/sys/fs/cgroup, or .../unified beside
    v1 hierarchies), else v1's name=systemd tree; None when neither is there."""
    v1 = None
    with open('/proc/self/mounts') as f:
        for line in f:
            dev, where, fstype, opts = line.split()[:4]
            if fstype == 'cgroup2':
                return where
            if fstype == 'cgroup' and 'name=systemd' in opts.split(','):
                v1 = where
    return v1


class Cgroup:
    """A cgroup of the test's own: <root>/<parts...>, made now, removed by cleanup() (once its
    processes are gone)."""

    def __init__(self, *parts):
        root = cgroup_root()
        if root is None:
            raise Fatal('no cgroup tree mounted (no cgroup2 and no name=systemd)')
        self.top = os.path.join(root, parts[0])
        self.path = os.path.join(root, *parts)
        self.made = []
        p = root
        for part in parts:
            p = os.path.join(p, part)
            if not os.path.isdir(p):
                os.mkdir(p)
                self.made.append(p)

    def cleanup(self):
        for p in reversed(self.made):
            wait_until(lambda: _rmdir(p), 10, f'cgroup {p} empty and removed')


def _rmdir(p):
    try:
        os.rmdir(p)
    except FileNotFoundError:
        pass
    return True


def kubernetes_pod():
    """A pod UID and the cgroup parts the kubelet's systemd driver makes for a container of
    it: kubepods-besteffort-pod<uid with '_'>.slice/cri-containerd-<64 hex>.scope."""
    uid = str(uuid.uuid4())
    return uid, lambda: [f'kubepods-besteffort-pod{uid.replace("-", "_")}.slice',
                         f'cri-containerd-{uuid.uuid4().hex}{uuid.uuid4().hex}.scope']


def contain(argv, cgroup=None, runtime='/var/run/dpdk'):
    """@argv in a new pid and mount namespace, pid 1 there, with a tmpfs of its own over
    @runtime, in @cgroup (a Cgroup) when given."""
    inner = (f'mount -t tmpfs -o size=256m,mode=0755 dtelrt {shlex.quote(runtime)} && '
             'exec "$@"')
    unshare = ['unshare', '--pid', '--fork', '--kill-child', '--mount', '--mount-proc',
               '--propagation', 'private', 'sh', '-c', inner, 'sh']
    if cgroup is None:
        return unshare + list(argv)
    # Join the cgroup first: unshare and the application inherit it.
    enter = f'echo $$ > {shlex.quote(os.path.join(cgroup.path, "cgroup.procs"))} && exec "$@"'
    return ['sh', '-c', enter, 'sh'] + unshare + list(argv)


def in_root(root, path):
    """@path as the process whose root is @root (/proc/<pid>/root) sees it, from the host:
    the kernel would follow an absolute link such as /var/run -> /run from the host's root."""
    done, rest, hops = '', [c for c in path.split('/') if c], 0
    while rest:
        c = rest.pop(0)
        if c == '..':
            done = done.rsplit('/', 1)[0]
            continue
        probe = f'{root}{done}/{c}'
        if os.path.islink(probe) and hops < 16:
            hops += 1
            target = os.readlink(probe)
            done = '' if target.startswith('/') else done
            rest = [t for t in target.split('/') if t and t != '.'] + rest
            continue
        done = f'{done}/{c}'
    return f'{root}{done}'


class Contained(dpdk.DpdkApp):
    """A DpdkApp (dpdk.testpmd(), dpdk.fwd()) run by contain(): pid is the application's pid
    on the host, socket its socket as the host reaches it (/proc/<pid>/root/...)."""

    def __init__(self, app, cgroup=None):
        os.makedirs(dpdk.RUNTIME_DIR, exist_ok=True)  # the tmpfs needs its mount point
        super().__init__(contain(app.argv, cgroup), app.prefix, name=app.name, env=app.env,
                         keep_stdin=app.keep_stdin, ready=app.ready)
        self.inside = app.socket  # its path inside the container

    @property
    def pid(self):
        """unshare's child: the application (pid 1 inside), once it runs."""
        unshare = self.proc.pid
        with open(f'/proc/{unshare}/task/{unshare}/children') as f:
            kids = f.read().split()
        if len(kids) != 1:
            raise RuntimeError(f'unshare (pid {unshare}) has children {kids}')
        return int(kids[0])

    @property
    def socket(self):
        """(A path that is not there until unshare has started the application.)"""
        try:
            return in_root(f'/proc/{self.pid}/root', self.inside)
        except (OSError, RuntimeError):
            return f'/proc/<the child of unshare {self.proc.pid}>/root{self.inside}'

    def inner_pid(self):
        """The application's pid in its own namespace (its greeting's)."""
        with open(f'/proc/{self.pid}/status') as f:
            for line in f:
                if line.startswith('NSpid:'):
                    return int(line.split()[-1])
        raise AssertionError('no NSpid')
