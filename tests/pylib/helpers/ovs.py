"""Open vSwitch with DPDK, started by hand for a test (no systemd, nothing of the host's).

Debian's openvswitch-switch-dpdk 3.1 (DPDK 22.11) in a temporary dir of its own: its own
ovsdb-server and database, ovs-vswitchd-dpdk with dpdk-init=true, a `netdev` bridge and
one `dpdk` port per net_tap device. What it takes here, seen on this machine:
- OVS adds --in-memory to the EAL arguments unless they hold --in-memory or --legacy-mem
  (lib/dpdk.c construct_dpdk_args), and --no-huge needs legacy memory: dpdk-extra carries
  `--no-huge --legacy-mem -m 1024 --no-pci --vdev=net_tap...`;
- a real OVS runs on the prefix `rte`; a test passes --file-prefix of its own in dpdk-extra
  so that it never meets the host's (OVS passes dpdk-extra to the EAL as it is);
- net_tap wants as many rx as tx queues: options:n_rxq=2 (OVS sets up 2 tx queues);
- OVS leaves its telemetry socket behind after kill -9 and after SIGTERM (stale).
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile

from . import dpdk, telemetry
from .process import Daemon, end
from .wait import Fatal, wait_until

VSWITCHD = '/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk'
SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema'


def available():
    """'' when OVS-DPDK can run here, else why not (for a skip line)."""
    for path in (VSWITCHD, SCHEMA, shutil.which('ovsdb-server') or '/usr/sbin/ovsdb-server'):
        if not os.path.exists(path):
            return f'{path} is missing: apt-get install openvswitch-switch-dpdk'
    if not os.path.exists('/dev/net/tun'):
        return 'no /dev/net/tun for net_tap ports'
    return ''


class Ovs(Daemon):
    """OVS-DPDK with `nports` dpdk ports (dpdk-p0, dpdk-p1, ...) on net_tap devices whose
    kernel interfaces are `ifaces`. start() returns once both ports are started in DPDK;
    `proc` is ovs-vswitchd (stop() ends it, the database stays for a restart), `db` the
    ovsdb-server (ended by cleanup())."""

    def __init__(self, nports=2, prefix=None, tag='o', runtime_base=None):
        """runtime_base: a dir of the test's own; the EAL then puts the socket under
        <runtime_base>/dpdk/<prefix> (it honours systemd's RUNTIME_DIRECTORY), so that
        discovery there sees only this OVS."""
        self.dir = tempfile.mkdtemp(prefix='dtel-ovs-')
        self.prefix = prefix or dpdk.unique_prefix(tag)
        self.ifaces = [f'dt{tag}{os.getpid() % 10000}{i}' for i in range(nports)]
        self.db_sock = os.path.join(self.dir, 'db.sock')
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_LOGDIR=self.dir,
                        OVS_DBDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.db = self.proc = None
        self.runtime_dir = dpdk.RUNTIME_DIR
        if runtime_base is not None:
            os.makedirs(runtime_base, exist_ok=True)
            self.env['RUNTIME_DIRECTORY'] = runtime_base
            self.runtime_dir = os.path.join(runtime_base, 'dpdk')

    @property
    def socket(self):
        return dpdk.socket_path(self.prefix, 0, self.runtime_dir)

    @property
    def log_path(self):
        return os.path.join(self.dir, 'ovs-vswitchd.log')

    def vsctl(self, *args, timeout=30):
        p = subprocess.run(['ovs-vsctl', f'--db=unix:{self.db_sock}', f'--timeout={timeout}',
                            *args], capture_output=True, text=True, env=self.env,
                           timeout=timeout + 5)
        if p.returncode != 0:
            raise Fatal(f'ovs-vsctl {" ".join(args)}: {p.stderr.strip()}\n{self.log()}')
        return p.stdout

    def _start_db(self):
        subprocess.run(['ovsdb-tool', 'create', os.path.join(self.dir, 'conf.db'), SCHEMA],
                       check=True, env=self.env, capture_output=True)
        self.db = subprocess.Popen(
            ['ovsdb-server', os.path.join(self.dir, 'conf.db'),
             f'--remote=punix:{self.db_sock}', f'--unixctl={self.dir}/ovsdb.ctl',
             f'--log-file={self.dir}/ovsdb-server.log'],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True)
        wait_until(lambda: os.path.exists(self.db_sock), 10, 'ovsdb-server socket')
        eal = ['--no-huge', '--legacy-mem', '-m', '1024', '--no-pci',
               f'--file-prefix={self.prefix}'] + [
            f'--vdev=net_tap{i},iface={n}' for i, n in enumerate(self.ifaces)]
        self.vsctl('--no-wait', 'init')
        self.vsctl('--no-wait', 'set', 'Open_vSwitch', '.', 'other_config:dpdk-init=true',
                   f'other_config:dpdk-extra={" ".join(eal)}',
                   'other_config:dpdk-lcore-mask=0x1', 'other_config:pmd-cpu-mask=0x2')
        ports = []
        for i in range(len(self.ifaces)):
            ports += ['--', 'add-port', 'br0', f'dpdk-p{i}', '--', 'set', 'Interface',
                      f'dpdk-p{i}', 'type=dpdk', f'options:dpdk-devargs=net_tap{i}',
                      'options:n_rxq=2']
        self.vsctl('--no-wait', 'add-br', 'br0', '--', 'set', 'bridge', 'br0',
                   'datapath_type=netdev', *ports)

    def start(self, timeout=60):
        """Start ovs-vswitchd-dpdk (and, the first time, the database)."""
        if self.db is None:
            self._start_db()
        log = open(os.path.join(self.dir, 'vswitchd.out'), 'ab')
        self.proc = subprocess.Popen(
            [VSWITCHD, f'unix:{self.db_sock}', f'--unixctl={self.dir}/vswitchd.ctl',
             f'--log-file={self.log_path}'], env=self.env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        wait_until(lambda: self._alive() and self._answers(), timeout,
                   f'OVS-DPDK telemetry socket {self.socket}')
        wait_until(lambda: self._alive() and self._ports_started(), timeout,
                   'OVS-DPDK dpdk ports started')
        return self

    def _alive(self):
        if self.proc.poll() is not None:
            raise Fatal(f'ovs-vswitchd-dpdk exited with {self.proc.returncode}:\n{self.log()}')
        return True

    def _answers(self):
        try:
            with telemetry.Client(self.socket, timeout=1.0) as c:
                return c.greeting['pid'] == self.proc.pid
        except (OSError, ValueError):
            return False

    def _ports_started(self):
        with telemetry.Client(self.socket) as c:
            ports = c.query('/ethdev/list')
            return len(ports) == len(self.ifaces) and all(
                c.query(f'/ethdev/info,{p}')['dev_started'] == 1 for p in ports)

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()[-4000:]
        except FileNotFoundError:
            return ''

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """End ovs-vswitchd by PID (the database keeps running for a restart)."""
        return end(self.proc, sig, timeout)

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def cleanup(self):
        self.stop()
        end(self.db)
        shutil.rmtree(os.path.join(self.runtime_dir, self.prefix), ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def send_frames(iface, count):
    """Send `count` broadcast frames into a tap's kernel interface: its DPDK port receives
    them (the kernel side's transmit is the PMD's receive)."""
    frame = b'\xff' * 6 + b'\x02\x00\x00\x00\xdd\x01' + b'\x88\xb5' + b'dpdktel'.ljust(46, b'\0')
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((iface, 0))
        for _ in range(count):
            s.send(frame)
