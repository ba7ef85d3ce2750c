"""A collectd that is not root: it reads a forwarder that gives its socket to collectd's
group (dpdktel-fwd --telemetry-group), is refused with a clear message when it is not in
that group or when the socket's permissions change under it, and recovers by itself.

The users and the group are made for the test and removed afterwards; collectd runs as
the user (setuid in the child, so its PID is collectd's), in a temporary dir it owns.
"""
import os
import tempfile
import shutil
import time

import pytest

from helpers import dpdk
from helpers.collectd import Collectd
from helpers.fakedpdk import FakeDpdk
from helpers.process import status_field
from helpers.users import throwaway_users
from helpers.wait import wait_until
from test_faults import BOTH, INTERVAL, both_config, identifiers, HEALTH, ours_logged

DENIED = 'permission denied'
HINT = 'see dpdktel-fwd --telemetry-group'


@pytest.fixture
def users():
    """(group, member, outsider); /var/run/dpdk's mode is put back afterwards (the
    forwarder makes it searchable for its group)."""
    parent = dpdk.RUNTIME_DIR
    mode = os.stat(parent).st_mode & 0o7777 if os.path.exists(parent) else None
    try:
        with throwaway_users() as u:
            yield u
    finally:
        if mode is not None and os.path.exists(parent):
            os.chmod(parent, mode)


def uid_of(pid):
    return status_field(pid, 'Uid')


def wait_refused(cd, since):
    """Both plugins say why, once, and publish up 0. When the outage began as an exit
    (the application closed the connection, or left a stale socket), that came first."""
    for plugin in BOTH:
        line = wait_until(lambda: [l for l in ours_logged(cd, 'f') if f'{plugin} plugin' in l
                                   and DENIED in l], 10, f'{plugin}: {DENIED}')
        assert len(line) == 1 and HINT in line[0], line
        cd.wait_value(f'{plugin}-f/up', lambda r: r[1] == [0] and r[0] > since, timeout=10,
                      what=f'{plugin} up 0')
        # At most one line before it: how the outage began (the application exited).
        lines = [l for l in ours_logged(cd, 'f') if f'{plugin} plugin' in l]
        assert len(lines) <= 2 and DENIED in lines[-1], lines


def wait_reading(cd, since):
    for plugin in BOTH:
        cd.wait_value(f'{plugin}-f/up', lambda r: r[1] == [1] and r[0] > since, timeout=10,
                      what=f'{plugin} up 1')
    cd.wait_value('dpdktel_stats-f.port0/if_packets', lambda r: r[0] > since)


def test_member_of_the_group_reads_the_forwarder(build_dir, source_dir, fwd_bin, users):
    group, member, _ = users
    prefix = dpdk.unique_prefix('u')
    with_group = ['--telemetry-group', group, '--idle-sleep-us', '100']
    app = dpdk.fwd(fwd_bin, prefix=prefix, app_args=with_group)
    with app, Collectd(build_dir, source_dir, both_config({'f': app.socket}),
                       interval=INTERVAL, ours=BOTH, user=member) as cd:
        assert uid_of(cd.proc.pid) == member.pw_uid
        wait_reading(cd, 0)
        cd.wait_value('dpdktel_stats-f.lcore1/lcore_packets')
        cd.wait_value('dpdktel_events-f.lcore1/lcore_state')
        cd.wait_value('dpdktel_events-f.port0/link_status', lambda r: r[1] == [1])
        assert not ours_logged(cd, 'f'), cd.log()
        # The forwarder is restarted without --telemetry-group: its new socket is root's.
        app.kill9()
        plain = dpdk.fwd(fwd_bin, prefix=prefix, app_args=['--idle-sleep-us', '100'])
        try:
            plain.start()
            wait_refused(cd, time.time())
        finally:
            plain.stop()
            os.unlink(plain.log_file.name)
        # And again with it: collection comes back by itself.
        app.start()
        back = time.time()
        wait_reading(cd, back)
        cd.wait_value('dpdktel_events-f.lcore1/lcore_state', lambda r: r[0] > back)
        assert cd.running()


def test_outsider_is_told_why(build_dir, source_dir, fwd_bin, users):
    group, _, outsider = users
    app = dpdk.fwd(fwd_bin, app_args=['--telemetry-group', group, '--idle-sleep-us', '100'])
    with app, Collectd(build_dir, source_dir, both_config({'f': app.socket}),
                       interval=INTERVAL, ours=BOTH, user=outsider) as cd:
        assert uid_of(cd.proc.pid) == outsider.pw_uid
        wait_refused(cd, 0)
        cd.wait_value('dpdktel_stats-f/up', lambda r: len(cd.csv('dpdktel_stats-f/up')) >= 4,
                      what='4 reads')
        for plugin in BOTH:
            assert identifiers(cd, plugin, 'f') <= HEALTH
            assert all(r[1] == [0] for r in cd.csv(f'{plugin}-f/up'))
        assert not [n for n in cd.notifications() if n.get('plugin') == 'dpdktel_events']


def test_socket_mode_changed_under_a_running_collectd(build_dir, source_dir, users):
    """chmod 0600 on the socket, the application's connections drop: refused with the
    reason; chmod back: read again at once (the mode change ends the reconnect backoff)."""
    _, member, _ = users
    d = tempfile.mkdtemp(prefix='dtperm-')
    os.chmod(d, 0o755)
    path = os.path.join(d, 'dpdk_telemetry.v2')
    try:
        with FakeDpdk(path) as fake, Collectd(build_dir, source_dir, both_config({'f': path}),
                                               interval=INTERVAL, ours=BOTH, user=member) as cd:
            wait_reading(cd, 0)
            os.chmod(path, 0o600)
            fake.drop_clients()
            wait_refused(cd, time.time())
            back = time.time()
            os.chmod(path, 0o666)
            wait_reading(cd, back)
            for plugin in BOTH:
                lines = [l for l in ours_logged(cd, 'f') if f'{plugin} plugin' in l]
                assert len([l for l in lines if DENIED in l]) == 1, lines
                assert len(lines) <= 2, lines
    finally:
        shutil.rmtree(d, ignore_errors=True)
