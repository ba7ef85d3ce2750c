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
"""
import errno

import pytest

from helpers import dpdk, linkctl, netdev, telemetry
from helpers.netns import Namespaces
from helpers.wait import wait_until

SLOW = '/ethdev/link_status=2ms'
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


def flip(ctl, iface, w, port, app=None, telemetry_follows=True):
    """Down, then up: each seen by the watch; the telemetry follows (or, where DPDK never
    follows the netdev, still says UP after the netdev said down)."""
    ctl.set(iface, 'down')
    w.wait_event(port, 0)
    if app is not None and telemetry_follows:
        wait_until(lambda: link_status(app, port) == 'DOWN', 5, f'port {port} DOWN in telemetry')
    elif app is not None:
        assert link_status(app, port) == 'UP'
    ctl.set(iface, 'up')
    w.wait_event(port, 1)
    if app is not None:
        wait_until(lambda: link_status(app, port) == 'UP', 5, f'port {port} UP in telemetry')


def test_collectd_netns(build_dir):
    """af_packet and net_tap by iface=, a net_tap without it by its MAC address, a PortNetdev
    first (and one naming nothing said so), net_null without a netdev."""
    tap = netdev.ifname('tp')
    vdevs = ['net_af_packet0,iface={}', f'net_tap0,iface={tap}', 'net_tap1', 'net_null0']
    with netdev.Veth() as v, \
            netdev.testpmd([vdevs[0].format(v.app)] + vdevs[1:], slow=SLOW,
                           build_dir=build_dir) as app, \
            netdev.Watch(build_dir, app.socket) as w, linkctl.Client() as ctl:
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
        # af_packet: the peer goes down, the carrier of the port's interface follows.
        flip(ctl, v.peer, w, 0, app, telemetry_follows=AF_PACKET_FOLLOWS)
        flip(ctl, tap, w, 1, app)
        assert len(w.events) == 4
        with netdev.Watch(build_dir, app.socket, [f'1={own_tap}', '3=nope0']) as op:
            assert (op.ports[1]['netdev'], op.ports[1]['by']) == (own_tap, 'operator')
            assert op.ports[3]['none'] == ("PortNetdev 'nope0': no such netdev in the "
                                           "application's network namespace")


def test_application_in_its_own_netns(build_dir, netns):
    """The netlink socket opened in the application's namespace; and why it is not used
    where that cannot be done."""
    tap = netdev.ifname('tp')
    with netdev.Veth(app_ns=netns) as v, \
            netdev.testpmd([f'net_af_packet0,iface={v.app}', f'net_tap0,iface={tap}'],
                           ns=netns, slow=SLOW, build_dir=build_dir) as app:
        with netdev.Watch(build_dir, app.socket) as w, \
                linkctl.Client() as host, linkctl.Client(netns) as inside:
            assert w.netns == 'other'
            assert (w.ports[0]['netdev'], w.ports[0]['by']) == (v.app, 'iface')
            assert (w.ports[1]['netdev'], w.ports[1]['by']) == (tap, 'iface')
            # The veth's peer stays on the host: a container's link taken down from outside.
            flip(host, v.peer, w, 0, app, telemetry_follows=AF_PACKET_FOLLOWS)
            flip(inside, tap, w, 1, app)
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
