"""Many DPDK applications on one host: one collectd with both plugins, discovery, isolation.

8 applications with 8 ports each; with a forwarder whose DPDK allows 64 ports (scripts/check
runs this file again with dpdktel-fwd of DPDK 25.11: DTEL_FWD_BINARY) 8 with 64 ports each."""
import shutil
import tempfile

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.wait import wait_until

APPS = 8
# The most ports the forwarder's DPDK allows when that is 64 (RTE_MAX_ETHPORTS); else 8.
PORTS = 64 if dpdk.max_ethports(dpdk.build_release()) >= 64 else 8
# Each port's pool share (2336 mbufs) takes about 6 MiB of --no-huge memory; 64 ports: 1 GiB.
MEMORY = max(256, 16 * PORTS)


@pytest.fixture
def fleet(fwd_bin):
    """8 forwarders with PORTS sink ports each (no rx: idle), under a runtime dir of our own."""
    base = tempfile.mkdtemp(prefix='dtel-fleet-')
    apps = []
    try:
        for i in range(APPS):
            app = dpdk.fwd(fwd_bin, prefix=f'fl{i}', runtime_base=base,
                           vdevs=[f'net_null{p},no-rx=1' for p in range(PORTS)],
                           eal_extra=['-m', str(MEMORY)],
                           app_args=['--idle-sleep-us', '1000', '--stall-ms', '1000'])
            apps.append(app)
            app.start(timeout=60)
        yield base, apps
    finally:
        for app in apps:
            app.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def conf(runtime):
    return (f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  RuntimeDir "{runtime}"\n'
            f'  MemoryStats false\n</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  RuntimeDir "{runtime}"\n'
            f'  PollInterval 0.1\n</Plugin>\n')


def test_eight_applications_one_collectd(build_dir, source_dir, fleet):
    base, apps = fleet
    runtime = f'{base}/dpdk'
    with Collectd(build_dir, source_dir, conf(runtime), interval=1,
                  ours=('dpdktel_stats', 'dpdktel_events')) as cd:
        def all_reported():
            ids = set(cd.listval())
            want = {f'{cd.hostname}/dpdktel_stats-fl{i}.port{p}/if_packets'
                    for i in range(APPS) for p in range(PORTS)}
            want |= {f'{cd.hostname}/dpdktel_events-fl{i}.port{p}/link_status'
                     for i in range(APPS) for p in range(PORTS)}
            want |= {f'{cd.hostname}/dpdktel_events-fl{i}.lcore1/lcore_state' for i in range(APPS)}
            return not (want - ids) or None
        wait_until(all_reported, 40 if PORTS <= 8 else 90,
                   f'every instance, port and lcore of 8 applications of {PORTS} ports')
        ids = cd.listval()
        assert not any(f'.port{PORTS}/' in i for i in ids)
        # Kill one: only it goes down; the others stay up and keep their values flowing.
        victim = apps[3]
        victim.kill9()
        wait_until(lambda: any(n['message'] == 'DPDK application fl3 is gone'
                               for n in cd.notifications()), 10, 'fl3 gone')
        wait_until(lambda: cd.getval('dpdktel_stats-fl3/up') == {'value': 0.0}, 10, 'fl3 up 0')
        t_kill = cd.last('dpdktel_stats-fl3/up')[0]
        for i in range(APPS):
            if i == 3:
                continue
            assert cd.getval(f'dpdktel_stats-fl{i}/up') == {'value': 1.0}
            assert cd.getval(f'dpdktel_events-fl{i}/up') == {'value': 1.0}
            # Their reads go on after the outage, at the interval in force (1 s, or longer
            # where MaxAppLoad stretches them). Waited for: a read of 64 ports may still be
            # under way, its values not yet written, when fl3 is seen gone (seen: 2 s old).
            interval = cd.getval(f'dpdktel_stats-fl{i}/poll_interval-read')['value']
            row = wait_until(
                lambda: (r := cd.csv(f'dpdktel_stats-fl{i}.port0/if_packets')) and
                r[-1][0] > t_kill and r[-1], 2 * interval + 3,
                f'a read of fl{i} after fl3 was seen gone (reads every {interval:.2f} s)')
            print(f'fl{i}: reads every {interval:.2f} s, one {row[0] - t_kill:.2f} s after '
                  'fl3 was seen gone')
        events = [n for n in cd.notifications() if n.get('plugin') == 'dpdktel_events']
        assert {n['plugin_instance'] for n in events} == {'fl3'}, events
        assert not [n for n in events if n['message'].startswith('Link')]
