"""The slow-telemetry shim (tests/tools/dtel_slow_telemetry.so): preloaded into a real DPDK
application, it delays the application's telemetry replies to chosen commands, on its own
telemetry thread, as a slow driver does (tests/tools/slow_telemetry.c, grammar in
tests/tools/slow_spec.h)."""
import os

from .wait import Fatal

# What issue 24 measured against: a driver whose xstats take 15 ms and link status 2 ms.
SLOW = '/ethdev/xstats=15ms,/ethdev/link_status=2ms'

# Driver profiles (issue 31), each what a driver's telemetry costs per
# ../shared/research/driver-costs.md (DPDK 25.11.2, tables 1a-1c): (DTEL_SLOW_TELEMETRY,
# mode). tests/bench/app_load --speeds and tests/bench/soak --profile take them.
PROFILES = {
    # Link-state interrupts (or a register/cached link: i40e, ixgbe, virtio): the link answer
    # costs nothing; the xstats still ask the firmware (i40e_dev_xstats_get: admin queue).
    'lsc': ('/ethdev/xstats=15ms', 'busy'),
    # mlx5 without LSC: mlx5_link_update's ethtool ioctls under RTNL (sleeps in the kernel),
    # mlx5_xstats_get's ETHTOOL_GSTATS, mlx5_stats_get's DevX QUERY_Q_COUNTER.
    'mlx5': ('/ethdev/link_status=2ms,/ethdev/xstats=15ms,/ethdev/stats=0.3ms', 'sleep'),
    # bnxt: bnxt_link_update_op's two HWRM commands, bnxt_stats_get_op's 2*nq and
    # bnxt_dev_xstats_get_op's 2*nq+2 STAT_CTX queries, each spinning on the HWRM lock.
    'bnxt': ('/ethdev/link_status=0.5ms,/ethdev/stats=2ms,/ethdev/xstats=4ms', 'busy'),
    # idpf: idpf_dev_link_update reads a cached vport->link_up; idpf_dev_stats_get and
    # idpf_dev_xstats_get spin in rte_delay_ms(10) steps for virtchnl2 GET_STATS.
    'idpf': ('/ethdev/stats=30ms,/ethdev/xstats=60ms', 'busy'),
}


def shim_path(build_dir):
    return os.path.join(build_dir, 'tests', 'tools', 'dtel_slow_telemetry.so')


def shim_env(build_dir, spec=SLOW, mode='busy', base=None):
    """base (default os.environ) with the shim preloaded (ahead of any LD_PRELOAD there)
    and its rules: `spec` as DTEL_SLOW_TELEMETRY, `mode` busy or sleep."""
    so = shim_path(build_dir)
    if not os.path.exists(so):
        raise Fatal(f'{so}: not built (ninja -C {build_dir})')
    env = dict(base if base is not None else os.environ)
    env['LD_PRELOAD'] = ':'.join(p for p in (so, env.get('LD_PRELOAD')) if p)
    env['DTEL_SLOW_TELEMETRY'] = spec
    env['DTEL_SLOW_TELEMETRY_MODE'] = mode
    return env
