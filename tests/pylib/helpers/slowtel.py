"""The slow-telemetry shim (tests/tools/dtel_slow_telemetry.so): preloaded into a real DPDK
application, it delays the application's telemetry replies to chosen commands, on its own
telemetry thread, as a slow driver does (tests/tools/slow_telemetry.c, grammar in
tests/tools/slow_spec.h)."""
import os

from .wait import Fatal

# What issue 24 measured against: a driver whose xstats take 15 ms and link status 2 ms.
SLOW = '/ethdev/xstats=15ms,/ethdev/link_status=2ms'


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
