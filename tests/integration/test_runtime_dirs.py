"""Applications found wherever they put their socket: the CLI and both plugins, with no
RuntimeDir or -d, find a testpmd whose socket is under /run/openvswitch/dpdk, the place
OVS-DPDK uses on Fedora and RHEL (run as user openvswitch with
XDG_RUNTIME_DIR=/run/openvswitch). The EAL puts its runtime dir under $RUNTIME_DIRECTORY
when that is set (lib/eal/linux/eal.c eal_create_runtime_dir), which places testpmd there.
"""
import json
import os
import shutil
import subprocess

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.wait import wait_until

OVS_RUN = '/run/openvswitch'


@pytest.fixture(scope='module')
def ovs_placed_app():
    made = not os.path.exists(OVS_RUN)
    app = dpdk.testpmd(nports=2, runtime_base=OVS_RUN)
    try:
        with app:
            assert app.socket.startswith(OVS_RUN + '/dpdk/'), app.socket
            yield app
    finally:
        if made:  # only what this test created
            shutil.rmtree(OVS_RUN, ignore_errors=True)


def cli(build_dir, *args):
    env = {k: v for k, v in os.environ.items() if k != 'RUNTIME_DIRECTORY'}
    return subprocess.run([f'{build_dir}/telemetry/dpdktel', *args], capture_output=True,
                          text=True, timeout=30, env=env)


def test_cli_lists_and_reads_it_without_d(ovs_placed_app, build_dir):
    app = ovs_placed_app
    p = cli(build_dir, 'list', '--json')
    assert p.returncode == 0, p.stderr
    mine = [a for a in json.loads(p.stdout) if a['prefix'] == app.prefix]
    assert len(mine) == 1 and mine[0]['socket'] == app.socket, p.stdout
    assert mine[0]['state'] == 'live' and mine[0]['pid'] == app.pid
    p = cli(build_dir, '-p', app.prefix, 'ports', '--json')
    assert p.returncode == 0, p.stderr
    assert [x['port_id'] for x in json.loads(p.stdout)] == [0, 1]
    # -d names one dir, and only that one is read.
    p = cli(build_dir, '-d', '/var/run/dpdk', 'list', '--json')
    assert app.prefix not in p.stdout


def test_plugins_discover_and_resolve_it_without_runtimedir(ovs_placed_app, build_dir,
                                                              source_dir):
    app = ovs_placed_app
    config = ('LoadPlugin dpdktel_stats\nLoadPlugin dpdktel_events\n'
              '<Plugin dpdktel_stats>\n  Discover true\n</Plugin>\n'
              '<Plugin dpdktel_events>\n  PollInterval 0.1\n'
              f'  <Instance "o">\n    FilePrefix "{app.prefix}"\n  </Instance>\n</Plugin>\n')
    with Collectd(build_dir, source_dir, config, interval=0.5,
                  ours=('dpdktel_stats', 'dpdktel_events')) as cd:
        cd.wait_value(f'dpdktel_stats-{app.prefix}.port1/if_packets',
                      what='dpdktel_stats discovered the socket under /run/openvswitch/dpdk')
        wait_until(lambda: cd.getval('dpdktel_events-o.port0/link_status') == {'value': 1.0},
                   10, 'dpdktel_events found FilePrefix under /run/openvswitch/dpdk')
        assert 'cannot read the DPDK runtime dir' not in cd.log(), cd.log()
