"""Every collectd configuration block of docs/applications.md, run as it is written in a real
collectd against a real process of that application (or its stand-in, said per block): a
block that stops working fails here. The only change made to a block: each `FilePrefix`
gets the test's own prefix, so that the test never reads a host's applications.
"""
import os
import re

import pytest

from helpers import dpdk, ovs
from helpers.collectd import Collectd
from helpers.wait import wait_until

DOC = 'docs/applications.md'
BLOCK = re.compile(r'<!-- tested: (\w+) -->\n```\n(.*?)```', re.S)


def blocks(source_dir):
    with open(os.path.join(source_dir, DOC)) as f:
        return dict(BLOCK.findall(f.read()))


def test_every_block_is_tested(source_dir):
    """A new block on the page must get a case below."""
    assert sorted(blocks(source_dir)) == sorted(CASES), blocks(source_dir).keys()


def with_prefix(block, prefix):
    out = re.sub(r'FilePrefix "[^"]*"', f'FilePrefix "{prefix}"', block)
    assert out != block or 'FilePrefix' not in block
    return out


def instance_of(block):
    """The <Instance "name"> the block configures (None: discovery)."""
    m = re.search(r'<Instance "([^"]+)">', block)
    return m.group(1) if m else None


def check_reads(cd, name, lcores=False):
    """Both plugins read the application under `name`: port counters, link state, and for
    applications with lcore data an lcore state."""
    cd.wait_value(f'dpdktel_stats-{name}.port0/if_packets', timeout=20,
                  what=f'dpdktel_stats values of {name}')
    wait_until(lambda: cd.getval(f'dpdktel_events-{name}.port0/link_status') ==
               {'value': 1.0}, 20, f'dpdktel_events link_status of {name}')
    if lcores:
        wait_until(lambda: cd.getval(f'dpdktel_events-{name}.lcore1/lcore_state') is not None,
                   20, f'dpdktel_events lcore_state of {name}')
    errors = [l for l in cd.log().splitlines()
              if ' error' in l.lower() and 'set_thread_name(' not in l]
    assert not errors, cd.log()


def run_block(build_dir, source_dir, app, block, lcores=False):
    name = instance_of(block) or app.prefix
    with Collectd(build_dir, source_dir, with_prefix(block, app.prefix), interval=0.5,
                  ours=('dpdktel_stats', 'dpdktel_events')) as cd:
        check_reads(cd, name, lcores)


def case_testpmd(build_dir, source_dir, block, fwd_bin):
    with dpdk.testpmd(nports=2) as app:
        run_block(build_dir, source_dir, app, block)


def case_fwd(build_dir, source_dir, block, fwd_bin):
    with dpdk.fwd(fwd_bin, app_args=['--idle-sleep-us', '100']) as app:
        run_block(build_dir, source_dir, app, block, lcores=True)


def case_ovs(build_dir, source_dir, block, fwd_bin):
    if ovs.available():
        pytest.skip(ovs.available())
    with ovs.Ovs(nports=2) as sw:
        run_block(build_dir, source_dir, sw, block)


def case_vpp(build_dir, source_dir, block, fwd_bin):
    # VPP is not packaged in Debian: testpmd as VPP runs DPDK (src/plugins/dpdk/device/
    # init.c: --in-memory and a file prefix). --in-memory needs hugepages (without them the
    # EAL takes legacy memory, which it refuses beside --in-memory): --no-shconf, the part
    # of --in-memory that places the socket (no shared config, a :N socket beside others).
    app = dpdk.testpmd(nports=2)
    app.argv.insert(app.argv.index(f'--file-prefix={app.prefix}'), '--no-shconf')
    with app:
        run_block(build_dir, source_dir, app, block)


def case_discover(build_dir, source_dir, block, fwd_bin, tmp_path=None):
    # Discovery reads the host's runtime dirs: it finds this testpmd among whatever else runs.
    with dpdk.testpmd(nports=2) as app:
        run_block(build_dir, source_dir, app, block)


CASES = {'testpmd': case_testpmd, 'fwd': case_fwd, 'ovs': case_ovs, 'vpp': case_vpp,
         'discover': case_discover}


@pytest.mark.parametrize('app', sorted(CASES))
def test_block(app, build_dir, source_dir, fwd_bin):
    CASES[app](build_dir, source_dir, blocks(source_dir)[app], fwd_bin)
