"""The configuration matrix in a real collectd 5.12 daemon, one daemon per row.

For every option of both plugins (a wrong type, and an out-of-range value where it has a
range), an unknown key, an option in the wrong block and a duplicate instance: the daemon
logs our message (naming the option, the value and what is expected) once, refuses to
initialise the plugin and unregisters it (no value of it ever appears), and keeps running
its other plugins: the other dpdktel plugin goes on reading a (fake) DPDK application and a
value sent over unixsock PUTVAL reaches the csv writer. The plugin suite has the exhaustive
matrix against a fake collectd (tests/plugin/test_*.c); this proves the daemon does the same.
"""
import os
import shutil
import tempfile
import time

import pytest

from helpers.collectd import Collectd
from helpers.fakedpdk import FakeDpdk
from helpers.wait import wait_until

OTHER = {'dpdktel_stats': 'dpdktel_events', 'dpdktel_events': 'dpdktel_stats'}

# (plugin, option lines in the <Plugin> block, lines in <Instance "a">, message). A row
# with instance None has no <Instance> block of its own (the lines carry it).
ROWS = [
    # dpdktel_stats: every option of its table, then the instance and global ones.
    ('dpdktel_stats', 'BasicStats "yes"', '', "option 'BasicStats' has the invalid value \"yes\": expected true or false"),
    ('dpdktel_stats', 'PerQueue 1', '', "option 'PerQueue' has the invalid value 1: expected true or false"),
    ('dpdktel_stats', 'XStats true false', '', "option 'XStats' has the invalid value true false: expected true or false"),
    ('dpdktel_stats', 'XStatsInclude 5', '', "option 'XStatsInclude' has the invalid value 5: expected one or more shell patterns"),
    ('dpdktel_stats', 'XStatsExclude ""', '', "option 'XStatsExclude' has the invalid value \"\": expected one or more shell patterns"),
    ('dpdktel_stats', 'AppStats "on"', '', "option 'AppStats' has the invalid value \"on\": expected true or false"),
    ('dpdktel_stats', '', 'MemoryStats 0', "<Instance \"a\">: option 'MemoryStats' has the invalid value 0: expected true or false"),
    ('dpdktel_stats', 'Timeout "fast"', '', "option 'Timeout' has the invalid value \"fast\": expected seconds for one request"),
    ('dpdktel_stats', 'Timeout 61', '', "option 'Timeout' has the out-of-range value 61: expected seconds for one request, more than 0 and at most 60"),
    ('dpdktel_stats', 'Ports 3', '', "option 'Ports' has the invalid value 3: expected \"all\" or a list of port ids"),
    ('dpdktel_stats', '', 'Ports "0-1024"', "<Instance \"a\">: option 'Ports' has the out-of-range value \"0-1024\": expected \"all\" or a list of port ids below 1024"),
    ('dpdktel_stats', 'Discover "yes"', '', "option 'Discover' has the invalid value \"yes\": expected true or false"),
    ('dpdktel_stats', 'RuntimeDir 7', '', "option 'RuntimeDir' has the invalid value 7: expected a directory, one string"),
    ('dpdktel_stats', '', 'FilePrefix 5', "<Instance \"a\">: option 'FilePrefix' has the invalid value 5: expected the application's --file-prefix"),
    ('dpdktel_stats', '', 'SocketPath "' + 'x' * 120 + '"', "<Instance \"a\">: option 'SocketPath' has the invalid value"),
    ('dpdktel_stats', '', 'RuntimeDir true', "<Instance \"a\">: option 'RuntimeDir' has the invalid value true: expected a directory"),
    ('dpdktel_stats', 'Fooz 3', '', "unknown option 'Fooz'"),
    ('dpdktel_stats', 'FilePrefix "x"', '', "option 'FilePrefix' belongs in an <Instance \"name\"> block; did you forget to add one?"),
    ('dpdktel_stats', '', 'Discover true', "<Instance \"a\">: option 'Discover' belongs in the <Plugin dpdktel_stats> block"),
    ('dpdktel_stats', '<Instance "a">\n    SocketPath "/tmp/dt-other"\n  </Instance>', '', "<Instance \"a\">: a second <Instance \"a\">: instance names must be unique"),
    ('dpdktel_stats', '<Instance "a b">\n  </Instance>', '', "<Instance> has the invalid name \"a b\""),
    # dpdktel_events
    ('dpdktel_events', 'PollInterval "fast"', '', "option 'PollInterval' has the invalid value \"fast\": expected seconds between polls"),
    ('dpdktel_events', 'PollInterval 0', '', "option 'PollInterval' has the out-of-range value 0: expected seconds between polls, at least 0.001 and at most 60"),
    ('dpdktel_events', 'Ports "1-"', '', "option 'Ports' has the invalid value \"1-\": expected \"all\" or a list of port ids"),
    ('dpdktel_events', 'Ports "5000"', '', "option 'Ports' has the out-of-range value \"5000\""),
    ('dpdktel_events', 'Link "up"', '', "option 'Link' has the invalid value \"up\": expected true or false"),
    ('dpdktel_events', '', 'LinkConfirm 2', "<Instance \"a\">: option 'LinkConfirm' has the invalid value 2: expected true or false"),
    ('dpdktel_events', 'FlapWindow "10s"', '', "option 'FlapWindow' has the invalid value \"10s\": expected seconds"),
    ('dpdktel_events', 'FlapWindow -3', '', "option 'FlapWindow' has the out-of-range value -3: expected seconds, more than 0 and at most 86400"),
    ('dpdktel_events', 'FlapThreshold "3"', '', "option 'FlapThreshold' has the invalid value \"3\": expected a number of link changes"),
    ('dpdktel_events', 'FlapThreshold 1', '', "option 'FlapThreshold' has the out-of-range value 1: expected a number of link changes from 2 to 1000"),
    ('dpdktel_events', 'Lcores "no"', '', "option 'Lcores' has the invalid value \"no\": expected true or false"),
    ('dpdktel_events', 'StallThreshold false', '', "option 'StallThreshold' has the invalid value false: expected seconds without a heartbeat"),
    ('dpdktel_events', '', 'StallThreshold 0', "<Instance \"a\">: option 'StallThreshold' has the out-of-range value 0"),
    ('dpdktel_events', 'InstanceEvents "true"', '', "option 'InstanceEvents' has the invalid value \"true\": expected true or false"),
    ('dpdktel_events', 'ReportInitialState 0', '', "option 'ReportInitialState' has the invalid value 0: expected true or false"),
    ('dpdktel_events', 'Timeout "1"', '', "option 'Timeout' has the invalid value \"1\": expected seconds for one request"),
    ('dpdktel_events', 'Timeout 100', '', "option 'Timeout' has the out-of-range value 100"),
    ('dpdktel_events', 'PollInterval 1\n  FlapWindow 0.5', '', "FlapWindow 0.5 is shorter than PollInterval 1"),
    ('dpdktel_events', 'Discover 1', '', "option 'Discover' has the invalid value 1: expected true or false"),
    ('dpdktel_events', 'RetireAfter 0.5', '', "option 'RetireAfter' has the out-of-range value 0.5: expected seconds from 1 to 86400"),
    ('dpdktel_events', '', 'RetireAfter 5', "<Instance \"a\">: option 'RetireAfter' belongs in the <Plugin dpdktel_events> block"),
    ('dpdktel_stats', 'RetireAfter "1h"', '', "option 'RetireAfter' has the invalid value \"1h\": expected seconds from 1 to 86400"),
    ('dpdktel_events', 'RuntimeDir ""', '', "option 'RuntimeDir' has the invalid value \"\": expected a directory"),
    ('dpdktel_events', '', 'FilePrefix "a/b"', "<Instance \"a\">: FilePrefix \"a/b\" is not valid: expected a directory name without '/'"),
    ('dpdktel_events', '', 'SocketPath 1', "<Instance \"a\">: option 'SocketPath' has the invalid value 1"),
    ('dpdktel_events', 'Interval 3', '', "unknown option 'Interval'"),
    ('dpdktel_events', '', 'Instance "b"', "<Instance \"a\">: option 'Instance' belongs in the <Plugin dpdktel_events> block"),
    ('dpdktel_events', '<Instance "a">\n    SocketPath "/tmp/dt-other"\n  </Instance>', '', "<Instance \"a\">: a second <Instance \"a\">: instance names must be unique"),
]


@pytest.fixture(scope='module')
def app():
    """A well-behaved (fake) DPDK application for the plugin that is not broken."""
    d = tempfile.mkdtemp(prefix='dtconf-')
    os.chmod(d, 0o755)
    fake = FakeDpdk(os.path.join(d, 'dpdk_telemetry.v2')).start()
    yield fake
    fake.stop()
    shutil.rmtree(d, ignore_errors=True)


def config(plugin, global_lines, instance_lines, other_path):
    other = OTHER[plugin]
    # An instance row about FilePrefix or SocketPath has no other way to its socket.
    sock = ('' if instance_lines.startswith(('FilePrefix', 'SocketPath')) else
            'SocketPath "/tmp/dt-none/dpdk_telemetry.v2"')
    return (f'LoadPlugin {plugin}\n<Plugin {plugin}>\n  {global_lines}\n'
            f'  <Instance "a">\n    {sock}\n'
            f'    {instance_lines}\n  </Instance>\n</Plugin>\n'
            f'LoadPlugin {other}\n<Plugin {other}>\n  <Instance "ok">\n'
            f'    SocketPath "{other_path}"\n  </Instance>\n</Plugin>\n')


@pytest.mark.parametrize('plugin,global_lines,instance_lines,message', ROWS,
                         ids=[f'{r[0][8:]}-{i}' for i, r in enumerate(ROWS)])
def test_refused_by_the_daemon(build_dir, source_dir, app, plugin, global_lines,
                               instance_lines, message):
    other = OTHER[plugin]
    with Collectd(build_dir, source_dir, config(plugin, global_lines, instance_lines, app.path),
                  interval=0.25, ours=(plugin, other)) as cd:
        failed = f"Initialization of plugin `{plugin}' failed"
        wait_until(lambda: failed in cd.log(), 10, 'init failure')
        log = cd.log()
        # Every line of ours but the version it logs first (NEWS.md) is an error.
        ours = [l for l in log.splitlines()
                if f'{plugin} plugin: ' in l and f'{plugin} plugin: dpdktel ' not in l]
        assert [l for l in ours if message in l], (message, ours)
        assert all('[error]' in l for l in ours), ours
        assert sum(message in l for l in ours) == 1, ours
        # The daemon goes on: the other dpdktel plugin reads its application ...
        cd.wait_value(f'{other}-ok/up', lambda r: r[1] == [1] and
                      len(cd.csv(f'{other}-ok/up')) >= 2, what=f'{other} values')
        # ... a value sent over unixsock reaches the csv writer ...
        t = int(time.time())
        reply = cd.command(f'PUTVAL "{cd.hostname}/dtconf-x/gauge-probe" {t}:42')
        assert reply and reply[0].startswith('0 '), reply
        cd.wait_value('dtconf-x/gauge-probe', lambda r: r[1] == [42.0], what='PUTVAL in csv')
        # ... and the refused plugin has no value and no read callback left.
        assert not [i for i in cd.listval() if f'/{plugin}-' in i], cd.listval()
        assert not os.path.exists(os.path.join(cd.csv_dir, cd.hostname, f'{plugin}-a'))
        assert cd.running()
