"""dpdktel_events' kernel-netdev link source (plugins/events/netdev.h) against real DPDK
processes: Debian's testpmd with net_af_packet on a veth pair and with net_tap, its
telemetry made slow with the shim (link_status 2 ms, sleeping as mlx5's ethtool ioctls do),
in collectd's network namespace and in one of its own, the link taken down from outside with
an ioctl (helpers/linkctl.py). tests/tools/netdev_watch runs the plugin's own code for it:
how each port is mapped to its netdev, each carrier change as it reaches us, and why the
source is not used where it cannot be (no netdev, no CAP_SYS_ADMIN, the pid not visible, a
PortNetdev that names nothing).

Each test asserts the mapping and the events exactly; every wait has a deadline (the events
come in milliseconds: tests/bench/netdev_latency measures them).

A real collectd with dpdktel_events watches the same testpmd (phase 2): its link poll is
slow (link_status 20 ms, PollLoad 1 %: the telemetry alone would ask each port only every
few seconds, a followed port every DownPollInterval), yet "Link down" and "Link up" come
well under a second after the ioctl, because a carrier event makes the port due at once and
wakes the poll thread; for af_packet on 22.11 they come though the telemetry never says
down. The latencies are printed (notification times from exec, 1 ms).
"""
import contextlib
import errno
import shutil
import tempfile
import time

import pytest

from helpers import dpdk, linkctl, netdev, telemetry
from helpers.collectd import Collectd
from helpers.netns import Namespaces
from helpers.notes import Notes
from helpers.wait import wait_until

SLOW = '/ethdev/link_status=20ms'
POLL_S = 0.1
TIMEOUT_S = 0.5
DOWN_POLL_S = 3  # DownPollInterval's default: a followed port's telemetry cadence
# Well under a second, where the telemetry alone takes seconds at this PollLoad.
DETECT_S = 0.5
RELEASE = dpdk.default_release()
# eth_link_update() of net_af_packet reads IFF_RUNNING from 24.11 on; before, it never
# follows the interface (netdev.h): the netdev is then the port's only true link.
AF_PACKET_FOLLOWS = RELEASE.key >= (24, 11)


def link_status(app, port):
    return telemetry.query(app.socket, f'/ethdev/link_status,{port}')['status']


@pytest.fixture
def netns():
    with Namespaces() as nss:
        yield nss.add(netdev.ifname('ns'))


def watching(stack, build_dir, source_dir, app, name):
    """collectd with dpdktel_events on `app` as instance `name`; notifications through exec
    (their own times)."""
    base = tempfile.mkdtemp(prefix='dtnd-')  # exec's script runs as nobody: not 0700
    stack.callback(shutil.rmtree, base, ignore_errors=True)
    notes = Notes(base)
    config = (notes.config() + 'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n'
              f'  PollInterval {POLL_S}\n  PollLoad 1\n  Timeout {TIMEOUT_S}\n'
              f'  <Instance "{name}">\n    SocketPath "{app.socket}"\n  </Instance>\n'
              '</Plugin>\n')
    cd = stack.enter_context(Collectd(build_dir, source_dir, config, ours=('dpdktel_events',),
                                      system_plugins=('exec',)))
    return cd, notes


def followed(cd, name, ports):
    """Wait for the plugin's INFO line of each followed port; return the log."""
    for port in ports:
        wait_until(lambda: f"port {port} (" in cd.log() and
                   f"of DPDK application '{name}': its link follows kernel netdev" in cd.log(),
                   10, f'port {port} followed')
    return cd.log()


def flip(ctl, iface, w, port, app=None, telemetry_follows=True, seen=None):
    """Down, then up: each seen by the watch; the telemetry follows (or, where DPDK never
    follows the netdev, still says UP after the netdev said down). seen: (notes, name), for
    the plugin's "Link down" and "Link up": their latencies from the ioctl are returned."""
    out = []
    if seen is not None:
        seen[0].drain()
    t0 = time.time()
    ctl.set(iface, 'down')
    w.wait_event(port, 0)
    if seen is not None:
        n = seen[0].wait(rf'^Link down on {seen[1]} port {port} ', 5)
        out.append(n['time'] - t0)
    if app is not None and telemetry_follows:
        wait_until(lambda: link_status(app, port) == 'DOWN', 5, f'port {port} DOWN in telemetry')
    elif app is not None:
        assert link_status(app, port) == 'UP'
    t0 = time.time()
    ctl.set(iface, 'up')
    w.wait_event(port, 1)
    if seen is not None:
        n = seen[0].wait(rf'^Link up on {seen[1]} port {port}: ', 5)
        out.append(n['time'] - t0)
    if app is not None:
        wait_until(lambda: link_status(app, port) == 'UP', 5, f'port {port} UP in telemetry')
    return out


def detected(what, latencies):
    print(f'{what}: Link down {latencies[0] * 1000:.0f} ms, Link up {latencies[1] * 1000:.0f} '
          'ms after the ioctl')
    assert max(latencies) < DETECT_S, f'{what}: {latencies}'


def test_collectd_netns(build_dir, source_dir):
    """af_packet and net_tap by iface=, a net_tap without it by its MAC address, a PortNetdev
    first (and one naming nothing said so), net_null without a netdev."""
    tap = netdev.ifname('tp')
    vdevs = ['net_af_packet0,iface={}', f'net_tap0,iface={tap}', 'net_tap1', 'net_null0']
    with contextlib.ExitStack() as stack:
        v = stack.enter_context(netdev.Veth())
        app = stack.enter_context(netdev.testpmd([vdevs[0].format(v.app)] + vdevs[1:],
                                                 slow=SLOW, build_dir=build_dir))
        w = stack.enter_context(netdev.Watch(build_dir, app.socket))
        ctl = stack.enter_context(linkctl.Client())
        cd, notes = watching(stack, build_dir, source_dir, app, 'nd')
        assert w.netns == 'same'
        own_tap = w.ports[2].get('netdev', '')  # net_tap names it dtap<N> itself
        assert w.ports == {
            0: {'name': 'net_af_packet0', 'netdev': v.app, 'by': 'iface',
                'only_signal': not AF_PACKET_FOLLOWS, 'carrier': 1},
            1: {'name': 'net_tap0', 'netdev': tap, 'by': 'iface', 'only_signal': False,
                'carrier': 1},
            2: {'name': 'net_tap1', 'netdev': own_tap, 'by': 'mac', 'only_signal': False,
                'carrier': 1},
            3: {'name': 'net_null0', 'none': 'net_null0 has no kernel netdev'},
        }
        assert own_tap.startswith('dtap')
        followed(cd, 'nd', (0, 1, 2))
        wait_until(lambda: "port 3 (net_null0) of DPDK application 'nd': its link comes from "
                   "the telemetry alone, not from a kernel netdev: net_null0 has no kernel "
                   "netdev" in cd.log(), 10, 'why port 3 has no netdev')
        # A followed port: its telemetry is a cross-check every DownPollInterval at most
        # (PollLoad may stretch it further), and a change is seen within the check's own
        # Timeout.
        wait_until(lambda: cd.getval('dpdktel_events-nd.port1/detection_bound-link') ==
                   {'value': TIMEOUT_S}, 10, f'port 1 detection_bound {TIMEOUT_S}')
        period = cd.getval('dpdktel_events-nd.port1/poll_interval-link')['value']
        assert period >= DOWN_POLL_S, period
        # af_packet: the peer goes down, the carrier of the port's interface follows.
        detected(f'af_packet (DPDK {RELEASE.version}), same netns',
                 flip(ctl, v.peer, w, 0, app, telemetry_follows=AF_PACKET_FOLLOWS,
                      seen=(notes, 'nd')))
        detected('net_tap, same netns', flip(ctl, tap, w, 1, app, seen=(notes, 'nd')))
        assert len(w.events) == 4
        with netdev.Watch(build_dir, app.socket, [f'1={own_tap}', '3=nope0']) as op:
            assert (op.ports[1]['netdev'], op.ports[1]['by']) == (own_tap, 'operator')
            assert op.ports[3]['none'] == ("PortNetdev 'nope0': no such netdev in the "
                                           "application's network namespace")


def test_application_in_its_own_netns(build_dir, source_dir, netns):
    """The netlink socket opened in the application's namespace; and why it is not used
    where that cannot be done."""
    tap = netdev.ifname('tp')
    with netdev.Veth(app_ns=netns) as v, \
            netdev.testpmd([f'net_af_packet0,iface={v.app}', f'net_tap0,iface={tap}'],
                           ns=netns, slow=SLOW, build_dir=build_dir) as app:
        with contextlib.ExitStack() as stack:
            w = stack.enter_context(netdev.Watch(build_dir, app.socket))
            host = stack.enter_context(linkctl.Client())
            inside = stack.enter_context(linkctl.Client(netns))
            cd, notes = watching(stack, build_dir, source_dir, app, 'ns')
            assert w.netns == 'other'
            assert (w.ports[0]['netdev'], w.ports[0]['by']) == (v.app, 'iface')
            assert (w.ports[1]['netdev'], w.ports[1]['by']) == (tap, 'iface')
            log = followed(cd, 'ns', (0, 1))
            assert log.count("(in the application's network namespace)") == 2, log
            # The veth's peer stays on the host: a container's link taken down from outside.
            detected(f'af_packet (DPDK {RELEASE.version}), own netns',
                     flip(host, v.peer, w, 0, app, telemetry_follows=AF_PACKET_FOLLOWS,
                          seen=(notes, 'ns')))
            detected('net_tap, own netns', flip(inside, tap, w, 1, app, seen=(notes, 'ns')))
        # Entering another namespace takes CAP_SYS_ADMIN: setpriv drops it (root's uid stays).
        drop = ['setpriv', '--inh-caps=-sys_admin', '--bounding-set=-sys_admin']
        with netdev.Watch(build_dir, app.socket, argv_prefix=drop) as w:
            assert w.unused is not None and w.unused[0] == -errno.EPERM
            assert 'needs CAP_SYS_ADMIN, which collectd does not have' in w.unused[1]
        # A collectd in a pid namespace of its own does not see the application's pid.
        pidns = ['unshare', '--pid', '--fork', '--mount-proc']
        with netdev.Watch(build_dir, app.socket, argv_prefix=pidns) as w:
            assert w.unused == (-errno.ESRCH, "the application's pid is not visible from "
                                              "collectd's pid namespace")
