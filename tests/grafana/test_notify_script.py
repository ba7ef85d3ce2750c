"""docs/examples/dpdktel-notify, the severity router for collectd's exec plugin, fed what
collectd 5.12's exec plugin writes for a notification (src/exec.c exec_notification_one:
"Severity", "Time", "Host", "Plugin", "PluginInstance", "Type", "TypeInstance" header lines,
a blank line, the message). The live path through real collectd: tests/integration/
test_alert_delivery.py."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'docs', 'examples', 'dpdktel-notify')
ROUTES = ['--failure=echo page', '--warning=echo log', '--okay=echo resolve']


def notification(severity, plugin='dpdktel_events', pi='edge1.port1', msg='Link down'):
    return (f'Severity: {severity}\nTime: 1764860000.125\nHost: host1\nPlugin: {plugin}\n'
            f'PluginInstance: {pi}\nType: link_status\n\n{msg}\n')


def run(stdin, args=ROUTES):
    return subprocess.run([SCRIPT] + args, input=stdin, capture_output=True, text=True,
                          timeout=10)


@pytest.mark.parametrize('severity,route', [('FAILURE', 'page'), ('WARNING', 'log'),
                                            ('OKAY', 'resolve')])
def test_each_severity_to_its_command(severity, route):
    p = run(notification(severity))
    assert p.returncode == 0, p.stderr
    assert p.stdout == f'{route} {severity} edge1.port1 on host1: Link down\n'


def test_fields_in_the_environment():
    p = run(notification('FAILURE', msg='lcore 1 of edge1 stalled: no heartbeat for 120 ms'),
            ['--failure=echo "$DTEL_SEVERITY|$DTEL_TIME|$DTEL_HOST|$DTEL_PLUGIN|'
             '$DTEL_PLUGIN_INSTANCE|$DTEL_TYPE|$DTEL_MESSAGE"'])
    assert p.stdout.startswith('FAILURE|1764860000.125|host1|dpdktel_events|edge1.port1|'
                               'link_status|lcore 1 of edge1 stalled: no heartbeat for 120 ms')


def test_other_plugins_and_empty_routes_are_dropped():
    assert run(notification('FAILURE', plugin='cpu')).stdout == ''
    assert run(notification('FAILURE'), ['--failure=']).stdout == ''
    assert run(notification('FAILURE', plugin='dpdktel_stats')).stdout.startswith('page ')


def test_unknown_argument_is_an_error():
    p = run(notification('FAILURE'), ['--fail=echo x'])
    assert p.returncode == 2
    assert "unknown argument '--fail=echo x'" in p.stderr and '--failure=CMD' in p.stderr
