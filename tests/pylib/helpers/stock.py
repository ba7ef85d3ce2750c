"""What collectd 5.12's stock DPDK plugins need here (../shared/anchors.md), for benchmarks.

- `Hugepages`: dpdkstat and dpdkevents start a DPDK secondary process, so the application
  must run with hugepages. Reserves pages on top of what is reserved already, mounts a
  private hugetlbfs, and on exit unmounts it and puts the reservation back as it was.
- `SecondaryPrefix`: collectd 5.12 passes `FilePrefix "P"` to EAL as
  `--file-prefix /var/run/dpdk/P/config`. The application is started with that same prefix,
  after creating `/var/run/dpdk/var/run/dpdk/P/config/` (its runtime dir) and
  `<hugetlbfs>/var/run/dpdk/P/` (its hugepage files); `/var/run/dpdk/P` is a symlink to the
  runtime dir, so the telemetry sockets are also reachable as `/var/run/dpdk/P/...`.
- Config snippets for `dpdk_telemetry`, `dpdkstat` and `dpdkevents`.

Everything made here is removed again by its context manager; nothing else is touched.
"""
import os
import shutil
import subprocess
import tempfile

from .dpdk import RUNTIME_DIR

NR_HUGEPAGES = '/proc/sys/vm/nr_hugepages'


def _free_pages():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('HugePages_Free:'):
                return int(line.split()[1])
    return 0


class Hugepages:
    """`pages` 2 MiB hugepages reserved on top of the current reservation, and a private
    hugetlbfs mount (`.dir`) for --huge-dir."""

    def __init__(self, pages=512):
        self.pages = pages
        self.before = None
        self.dir = None
        self.mounted = False

    def __enter__(self):
        with open(NR_HUGEPAGES) as f:
            self.before = int(f.read())
        try:
            with open(NR_HUGEPAGES, 'w') as f:
                f.write(str(self.before + self.pages))
            if _free_pages() < self.pages:
                raise RuntimeError(f'could not reserve {self.pages} hugepages '
                                   f'(free: {_free_pages()})')
            self.dir = tempfile.mkdtemp(prefix='dtel-huge-')
            subprocess.run(['mount', '-t', 'hugetlbfs', 'nodev', self.dir], check=True)
            self.mounted = True
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.mounted:
            # Files an application left behind hold pages until the mount goes away.
            subprocess.run(['umount', self.dir], check=False)
            self.mounted = False
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self.before is not None:
            with open(NR_HUGEPAGES, 'w') as f:
                f.write(str(self.before))
            self.before = None


class SecondaryPrefix:
    """The runtime-dir layout that lets collectd 5.12's dpdkstat/dpdkevents attach to an
    application with a private prefix `name` (see the module comment).

    .eal_args: the application's --file-prefix and --huge-dir
    .socket:   its telemetry v2 socket; .legacy_socket: its v1 socket
    """

    def __init__(self, name, hugedir):
        self.name = name
        self.hugedir = hugedir
        self.file_prefix = f'{RUNTIME_DIR}/{name}/config'
        self.real_dir = f'{RUNTIME_DIR}/var/run/dpdk/{name}/config'
        self.link = f'{RUNTIME_DIR}/{name}'
        self.made = []

    @property
    def eal_args(self):
        return [f'--file-prefix={self.file_prefix}', '--huge-dir', self.hugedir]

    @property
    def socket(self):
        return os.path.join(self.link, 'dpdk_telemetry.v2')

    @property
    def legacy_socket(self):
        return os.path.join(self.link, 'telemetry')

    def _mkdirs(self, path):
        missing = []
        while not os.path.exists(path):
            missing.append(path)
            path = os.path.dirname(path)
        for d in reversed(missing):
            os.mkdir(d, 0o755)
            self.made.append(d)

    def __enter__(self):
        if os.path.lexists(self.link):
            raise RuntimeError(f'{self.link} exists already')
        try:
            self._mkdirs(self.real_dir)
            self._mkdirs(os.path.join(self.hugedir, 'var/run/dpdk', self.name))
            os.symlink(f'var/run/dpdk/{self.name}/config', self.link)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if os.path.islink(self.link):
            os.unlink(self.link)
        shutil.rmtree(self.real_dir, ignore_errors=True)
        hp = os.path.join(self.hugedir, 'var/run/dpdk', self.name)
        for f in os.listdir(hp) if os.path.isdir(hp) else ():
            os.unlink(os.path.join(hp, f))
        # Only the directories made here, deepest first, and only if empty (others may
        # share /var/run/dpdk/var/...).
        for d in reversed(self.made):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.made = []


def dpdk_telemetry_config(legacy_socket, client_socket):
    return (f'LoadPlugin dpdk_telemetry\n<Plugin dpdk_telemetry>\n'
            f'  ClientSocketPath "{client_socket}"\n  DpdkSocketPath "{legacy_socket}"\n'
            f'</Plugin>\n')


def eal_block(prefix_name):
    return (f'  <EAL>\n    Coremask "0x1"\n    MemoryChannels "1"\n'
            f'    FilePrefix "{prefix_name}"\n  </EAL>\n')


def dpdkstat_config(prefix_name, shm_name):
    """All ports (EnabledPortMask left out: a 0xffffffff literal overflows its parser)."""
    return (f'LoadPlugin dpdkstat\n<Plugin dpdkstat>\n{eal_block(prefix_name)}'
            f'  SharedMemObj "{shm_name}"\n</Plugin>\n')


def dpdkevents_config(prefix_name, notify=True):
    """Link status of all ports, the plugin's defaults otherwise, but notifications on
    (SendNotification defaults to false: values only). dpdkevents always uses the shared
    memory object /dev/shm/dpdk_collectd_events; collectd must also get `MaxReadInterval`
    equal to its `Interval` (anchors.md), which is a global option."""
    return (f'LoadPlugin dpdkevents\n<Plugin dpdkevents>\n{eal_block(prefix_name)}'
            f'  <Event "link_status">\n    SendNotification {"true" if notify else "false"}\n'
            f'  </Event>\n</Plugin>\n')
