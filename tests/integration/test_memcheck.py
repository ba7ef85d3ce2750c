"""valgrind memcheck of a real collectd running both plugins against dpdktel-fwd.

READS reads of dpdktel_stats (Interval 0.1 s; dpdktel_events polls every 0.02 s meanwhile),
with the forwarder killed with SIGKILL after a third of them and ended with SIGTERM after
two thirds, each time started again: zero memcheck errors anywhere in collectd, zero bytes
definitely or indirectly lost with a frame of our code in the allocation stack.

DTEL_MEMCHECK_READS sets READS (default 300; scripts/check runs the short form, see
tests/integration/meson.build). The numbers are in docs/reliability.md.
"""
import os
import shutil
import signal
import tempfile
import time

import pytest

from helpers import dpdk, sanitizers, valgrind
from helpers.collectd import Collectd
from helpers.wait import wait_until

READS = int(os.environ.get('DTEL_MEMCHECK_READS', '300'))
INTERVAL = 0.1
BOTH = ('dpdktel_stats', 'dpdktel_events')

pytestmark = [
    pytest.mark.skipif(sanitizers.enabled(), reason='valgrind cannot run ASan-instrumented code'),
    pytest.mark.skipif(not shutil.which('valgrind'), reason='valgrind not installed'),
]


def config(socket_path):
    inst = f'  <Instance "f">\n    SocketPath "{socket_path}"\n  </Instance>\n'
    # Timeouts are generous: under memcheck collectd runs tens of times slower.
    return (f'LoadPlugin dpdktel_stats\n<Plugin dpdktel_stats>\n  Timeout 2\n  PerQueue true\n'
            f'{inst}</Plugin>\n'
            f'LoadPlugin dpdktel_events\n<Plugin dpdktel_events>\n  PollInterval 0.02\n'
            f'  Timeout 2\n{inst}</Plugin>\n')


def reads(cd):
    """Reads of dpdktel_stats so far: one `up` row per read in the csv."""
    return len(cd.csv('dpdktel_stats-f/up'))


def counter(cd, ident):
    row = cd.last(ident)
    return int(row[1][0]) if row else 0


def restart(cd, app, sig, n):
    app.stop(sig)
    wait_until(lambda: [m for m in (x.get('message') for x in cd.notifications())
                        if m == 'DPDK application f is gone'][n - 1:], 60,
               f'gone notification {n}')
    app.start()
    wait_until(lambda: counter(cd, 'dpdktel_stats-f/restarts') >= n, 60,
               f'dpdktel_stats counting restart {n}')


def test_memcheck_both_plugins_with_two_restarts(build_dir, source_dir, fwd_bin):
    xml_dir = tempfile.mkdtemp(prefix='dtel-memcheck-')
    app = dpdk.fwd(fwd_bin, nports=2, app_args=['--idle-sleep-us', '100'])
    cd = Collectd(build_dir, source_dir, config(app.socket), interval=INTERVAL, ours=BOTH,
                  wrapper=valgrind.command(xml_dir))
    try:
        with app:
            cd.start(timeout=120)
            t0 = time.monotonic()
            for n, (share, sig) in enumerate(((1 / 3, signal.SIGKILL),
                                              (2 / 3, signal.SIGTERM)), 1):
                wait_until(lambda: reads(cd) >= READS * share, READS * INTERVAL * 20,
                           f'{READS * share:.0f} reads')
                restart(cd, app, sig, n)
            wait_until(lambda: reads(cd) >= READS, READS * INTERVAL * 20, f'{READS} reads')
            polls = counter(cd, 'dpdktel_events-f/telemetry_requests-sent')
            elapsed = time.monotonic() - t0
            # The values came back after each restart: the last read found it up.
            assert cd.last('dpdktel_stats-f/up')[1] == [1]
            assert cd.last('dpdktel_events-f/up')[1] == [1]
        assert cd.stop(timeout=300) == 0, cd.log()
        report = valgrind.Report(xml_dir)
        print(f'memcheck: {reads(cd)} stats reads, {polls} events requests, 2 restarts in '
              f'{elapsed:.0f} s; errors {len(report.errors)}, our leaks '
              f'{report.our_lost_bytes()} bytes in {len(report.our_leaks())} records, '
              f'others {report.other_lost_bytes()} bytes')
        for r in report.leaks:
            if not r.ours:
                print('not ours:', r)
        assert not report.errors, '\n'.join(map(str, report.errors))
        assert not report.our_leaks(), '\n'.join(map(str, report.our_leaks()))
    finally:
        cd.cleanup()
        shutil.rmtree(xml_dir, ignore_errors=True)
