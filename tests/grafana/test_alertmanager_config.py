"""grafana/alertmanager/alertmanager.yml, run by Debian's Alertmanager 0.25.

Alerts are posted to its API as Prometheus posts them (labels as dpdktel.rules.yml makes
them), and what it delivers is recorded by a webhook on loopback: the routing (critical to
the pager and the mailbox, warnings to the mailbox only, one message per application) and
each inhibit rule (the target alert is inhibited by the source and never delivered, while
the same alert of another application is: the control that shows the path delivers).
Timings are shortened (group_wait 1 s, group_interval 2 s); nothing else is changed.
"""
import datetime
import time

import pytest

from helpers.alertmanager import Alertmanager, Webhook, load_example, matches
from helpers.wait import wait_until

GROUP_INTERVAL = 2


@pytest.fixture
def am():
    with Webhook() as hook, Alertmanager(hook.url, group_wait='1s',
                                         group_interval=f'{GROUP_INTERVAL}s') as am:
        am.hook = hook
        yield am


def alert(name, severity, **labels):
    return {'labels': dict(alertname=name, severity=severity, job='dpdktel', **labels),
            'annotations': {'summary': f'{name} {labels}'}}


def delivered(am, receiver, status=None, **labels):
    return [a for a in am.hook.alerts(receiver)
            if matches(a[3], labels) and status in (None, a[2])]


def test_example_has_receivers_routes_and_inhibitions():
    doc = load_example()
    assert {r['name'] for r in doc['receivers']} == {'dpdktel-pager', 'dpdktel-mail',
                                                     'dpdktel-none'}
    none = next(r for r in doc['receivers'] if r['name'] == 'dpdktel-none')
    assert set(none) == {'name'}  # delivers nothing
    assert doc['route']['group_by'] == ['instance', 'dpdk_instance']
    assert len(doc['inhibit_rules']) == 4


def test_critical_pages_and_mails_warning_only_mails(am):
    am.post([alert('DpdkInstanceUnreachable', 'info', instance='hA', dpdk_instance='e9'),
             alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='0'),
             alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='1'),
             alert('DpdkRxNoMbuf', 'warning', instance='hA', dpdk_instance='e2', port='0')])
    wait_until(lambda: len(am.hook.received('dpdktel-pager')) >= 1, 30, 'a page')
    wait_until(lambda: delivered(am, 'dpdktel-mail', alertname='DpdkLinkDown'), 30,
               'the critical alerts in the mailbox')
    # Both ports of one application in one page, not two.
    pages = am.hook.received('dpdktel-pager')
    assert len(pages) == 1, pages
    assert sorted(a['labels']['port'] for a in pages[0][2]['alerts']) == ['0', '1']
    assert pages[0][2]['groupLabels'] == {'instance': 'hA', 'dpdk_instance': 'e1'}
    # The warning's route waits group_wait 1m before its first message (shortened here to
    # 1 s as well, like every group_wait): it goes to the mailbox, never to the pager.
    wait_until(lambda: delivered(am, 'dpdktel-mail', alertname='DpdkRxNoMbuf'), 30,
               'the warning in the mailbox')
    time.sleep(GROUP_INTERVAL + 1)  # one group_interval more, for a stray page
    assert not delivered(am, 'dpdktel-pager', alertname='DpdkRxNoMbuf')
    # Severity info (DpdkInstanceUnreachable) reaches nobody.
    assert not delivered(am, None, alertname='DpdkInstanceUnreachable')


# (source, target, control): the control is the target's twin that the source does not
# cover, delivered as the proof that the target would be delivered without the source.
INHIBITIONS = {
    'unreachable hides its link down': (
        alert('DpdkInstanceUnreachable', 'info', instance='hA', dpdk_instance='e1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e2', port='1')),
    'instance down hides its link down': (
        alert('DpdkInstanceDown', 'critical', instance='hA', dpdk_instance='e1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e2', port='1')),
    'instance down hides its lcore stall': (
        alert('DpdkInstanceDown', 'critical', instance='hA', dpdk_instance='e1'),
        alert('DpdkLcoreStalled', 'critical', instance='hA', dpdk_instance='e1', lcore='1'),
        alert('DpdkLcoreStalled', 'critical', instance='hB', dpdk_instance='e1', lcore='1')),
    'not responding hides its lcore stall': (
        alert('DpdkInstanceNotResponding', 'critical', instance='hA', dpdk_instance='e1'),
        alert('DpdkLcoreStalled', 'critical', instance='hA', dpdk_instance='e1', lcore='2'),
        alert('DpdkLcoreStalled', 'critical', instance='hA', dpdk_instance='e2', lcore='2')),
    'instance down hides its degraded telemetry': (
        alert('DpdkInstanceDown', 'critical', instance='hA', dpdk_instance='e1'),
        alert('DpdkTelemetryDegraded', 'warning', instance='hA', dpdk_instance='e1',
              stretched='read'),
        alert('DpdkTelemetryDegraded', 'warning', instance='hA', dpdk_instance='e2',
              stretched='read')),
    'not responding hides its link down': (
        alert('DpdkInstanceNotResponding', 'critical', instance='hA', dpdk_instance='e1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='0'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e2', port='0')),
    'flapping hides its own link down': (
        alert('DpdkLinkFlapping', 'warning', instance='hA', dpdk_instance='e1', port='1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='0')),
    'stale data of an application hides the rest of it': (
        alert('DpdkTelemetryStale', 'warning', instance='hA', dpdk_instance='e1'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='0'),
        alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e2', port='0')),
    'a host that cannot be scraped hides the rest of that host': (
        alert('DpdkTelemetryStale', 'warning', instance='hA'),
        alert('DpdkInstanceDown', 'critical', instance='hA', dpdk_instance='e3'),
        alert('DpdkInstanceDown', 'critical', instance='hB', dpdk_instance='e3')),
    '... also the stale data of each of its applications': (
        alert('DpdkTelemetryStale', 'warning', instance='hA'),
        alert('DpdkTelemetryStale', 'warning', instance='hA', dpdk_instance='e1'),
        alert('DpdkTelemetryStale', 'warning', instance='hB', dpdk_instance='e1')),
}


@pytest.mark.parametrize('case', INHIBITIONS)
def test_inhibition(am, case):
    source, target, control = INHIBITIONS[case]
    am.post([source])
    # The source is active before the target arrives, as with Prometheus (a target that
    # fires first is delivered first; inhibition then hides its later messages).
    wait_until(lambda: am.alert(**source['labels']), 10, 'the source alert active')
    am.post([target, control])
    got = wait_until(lambda: (lambda a: a if a['status']['inhibitedBy'] else None)(
        am.alert(**target['labels'])), 10, 'the target inhibited')
    assert got['status']['state'] == 'suppressed'
    wait_until(lambda: delivered(am, None, **control['labels']), 30, 'the control delivered')
    if source['labels']['severity'] != 'info':  # info goes nowhere
        wait_until(lambda: delivered(am, None, **source['labels']), 30, 'the source delivered')
    # The control came after the group_wait of the target's group too; one group_interval
    # more for any later message of the target's group.
    time.sleep(GROUP_INTERVAL + 1)  # the window in which it must not come
    assert not delivered(am, None, **target['labels']), am.hook.alerts()


def test_unreachable_hides_the_resolution_of_a_paged_link_down(am):
    """A link down is paged; its application goes: Prometheus resolves the link-down at the
    evaluation that fires DpdkInstanceUnreachable (the rules' `unless ... up == 0`). The
    resolution is not delivered while the application is unreachable."""
    link = alert('DpdkLinkDown', 'critical', instance='hA', dpdk_instance='e1', port='0')
    am.post([link])
    wait_until(lambda: len(delivered(am, None, 'firing', **link['labels'])) == 2, 30,
               'the link down paged and mailed')
    now = datetime.datetime.now(datetime.timezone.utc)
    am.post([alert('DpdkInstanceUnreachable', 'info', instance='hA', dpdk_instance='e1'),
             dict(link, startsAt=(now - datetime.timedelta(minutes=1)).isoformat(),
                  endsAt=now.isoformat())])
    wait_until(lambda: am.alert(alertname='DpdkInstanceUnreachable'), 10,
               'DpdkInstanceUnreachable active')
    time.sleep(2 * GROUP_INTERVAL + 1)  # two group_intervals, in which no resolution may come
    assert [a[2] for a in delivered(am, None, **link['labels'])] == ['firing', 'firing'], \
        am.hook.alerts()
