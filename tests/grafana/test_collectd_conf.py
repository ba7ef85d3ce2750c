"""plugins/conf/dpdktel.conf, the example for /etc/collectd/collectd.conf.d/.

Checked with Debian's collectd: the file and each of its commented variants pass
`collectd -T` (configure, initialise, read once) with no error logged; a broken variant
fails, so the check can fail. The dpdktel plugin blocks are included only when the plugins
have been built (they come with issues 4 and 5); until then those blocks are cut out and
the test that needs them is skipped. A live run then shows that the TypesDB line gives
write_prometheus our metric names and that the threshold variant notifies after `Hits`
values, not on a blip.
"""
import os
import re
import urllib.request

import pytest

from helpers.collectd import Collectd
from helpers.process import free_port
from helpers.wait import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

EXAMPLE = os.path.join(ROOT, 'plugins', 'conf', 'dpdktel.conf')
TYPES_DB = os.path.join(ROOT, 'plugins', 'dpdktel.types.db')
INSTALLED_TYPES_DB = '/usr/share/collectd/dpdktel.types.db'
BUILD = os.environ.get('DTEL_BUILD_DIR', os.path.join(ROOT, 'build'))
OURS = ('dpdktel_stats', 'dpdktel_events')
OUR_PLUGINS = [os.path.join(BUILD, 'plugins', f'{p}.so') for p in OURS]
STOCK = ('write_prometheus', 'network', 'notify_email', 'exec', 'threshold')
# What collectd logs when it rejects something; `collectd -T` does not always exit non-zero.
ERROR_LOG = re.compile(r'not allowed|failed|could not|unknown|error|did not register|'
                       r'invalid|no such', re.I)


def example():
    with open(EXAMPLE) as f:
        return f.read()


def split(text):
    """The active part and {title: variant text} ("## Variant: <title>" sections)."""
    parts = re.split(r'^## Variant: (.*)$', text, flags=re.M)
    return parts[0], dict(zip(parts[1::2], parts[2::2]))


def uncomment(variant):
    """Configuration lines are "#<...", "#Word" or "#  ..."; "# " lines are prose."""
    out = []
    for line in variant.splitlines():
        if re.match(r'#(?! )|#  ', line):
            out.append(line[1:])
    return '\n'.join(out)


def without_dpdktel_plugins(text):
    """Cut the dpdktel_stats/dpdktel_events LoadPlugin lines and blocks out."""
    out, skipping = [], None
    for line in text.splitlines():
        if skipping:
            if re.match(rf'\s*</{skipping}>', line):
                skipping = None
            continue
        m = re.match(r'\s*<(LoadPlugin|Plugin)\s+"?dpdktel_\w+"?\s*>', line)
        if m:
            skipping = m.group(1)
            continue
        if re.match(r'\s*LoadPlugin\s+"?dpdktel_', line):
            continue
        out.append(line)
    return '\n'.join(out)


def for_test(text, port):
    """The example as installed would be, on a port of the test's own."""
    assert f'"{INSTALLED_TYPES_DB}"' in text and 'Port "9103"' in text
    return text.replace(INSTALLED_TYPES_DB, TYPES_DB).replace('Port "9103"', f'Port "{port}"')


def collectd(body, ours=(), **kw):
    """A collectd with `body` after its header: the example's own TypesDB line, no csv
    writer, one write thread (the threshold plugin judges one identifier's values in order),
    log lines without a severity (ERROR_LOG looks at what the lines say)."""
    return Collectd(BUILD, ROOT, body, system_plugins=STOCK, ours=ours, csv=False, types_db=(),
                    hostname='hostA', write_threads=1, print_severity=False, **kw)


def check(body, ours=()):
    c = collectd(for_test(body, free_port()), ours)
    try:
        p = c.test_config()
        out = p.stdout + p.stderr + c.log()
    finally:
        c.cleanup()
    errors = [l for l in out.splitlines() if ERROR_LOG.search(l)]
    return p.returncode, errors, out


def test_example_has_every_documented_part():
    main, variants = split(example())
    assert re.search(r'^TypesDB "/usr/share/collectd/types.db" "%s"$' % INSTALLED_TYPES_DB,
                     main, re.M)
    for plugin in ('dpdktel_stats', 'dpdktel_events'):
        assert re.search(rf'^(<LoadPlugin {plugin}>|LoadPlugin {plugin})$', main, re.M), plugin
        block = re.search(rf'^<Plugin {plugin}>$(.*?)^</Plugin>$', main, re.M | re.S).group(1)
        assert re.search(r'^\s*Discover true$', block, re.M), plugin
    wp = re.search(r'^<Plugin write_prometheus>$(.*?)^</Plugin>$', main, re.M | re.S).group(1)
    assert 'Host "127.0.0.1"' in wp and 'Port "9103"' in wp
    titles = ' '.join(variants)
    for word in ('central collectd', 'mail', 'program', 'threshold'):
        assert word in titles, (word, list(variants))
    net = uncomment(next(v for t, v in variants.items() if 'central' in t))
    assert 'SecurityLevel Sign' in net and 'Username' in net and 'Password' in net
    mail = uncomment(next(v for t, v in variants.items() if 'mail' in t))
    assert 'LoadPlugin notify_email' in mail and 'NotificationExec' in mail
    thr = uncomment(next(v for t, v in variants.items() if 'threshold' in t))
    assert '<Type "link_status">' in thr and '<Type "lcore_state">' in thr


def test_example_without_the_dpdktel_plugins_is_accepted():
    main, _ = split(example())
    rc, errors, out = check(without_dpdktel_plugins(main))
    assert rc == 0 and not errors, out


@pytest.mark.skipif(not all(os.path.exists(p) for p in OUR_PLUGINS),
                    reason=f'dpdktel plugins not built ({", ".join(OUR_PLUGINS)})')
def test_example_with_the_dpdktel_plugins_is_accepted():
    main, _ = split(example())
    rc, errors, out = check(main, OURS)
    assert rc == 0 and not errors, out


@pytest.mark.parametrize('title', sorted(split(example())[1]))
def test_variant_is_accepted(title):
    main, variants = split(example())
    rc, errors, out = check(without_dpdktel_plugins(main) + '\n' + uncomment(variants[title]))
    assert rc == 0 and not errors, out


def test_a_broken_variant_is_refused():
    main, variants = split(example())
    thr = uncomment(next(v for t, v in variants.items() if 'threshold' in t))
    rc, errors, out = check(without_dpdktel_plugins(main) + '\n' +
                            thr.replace('FailureMin', 'FailureMn'))
    assert rc != 0 or errors, out


def test_types_and_threshold_variant_live():
    """write_prometheus names our types as docs/metrics.md says; the threshold variant
    (Hits 1) stays quiet for two values out of range, notifies on the third, and says when
    a value stops coming (Interesting)."""
    main, variants = split(example())
    thr = uncomment(next(v for t, v in variants.items() if 'threshold' in t))
    port = free_port()
    body = for_test(without_dpdktel_plugins(main), port) + '\n' + thr
    with collectd(body, http_port=port) as c:
        link = 'hostA/dpdktel_events-edge1.port0/link_status'
        # A blip of two values down, then three: one FAILURE, for the second episode.
        for v in (1, 0, 0, 1, 0, 0, 0):
            c.putval(link, f'N:{v}', interval=1)
        # Three EXITED lcore values after them: once their FAILURE is logged, the link
        # values (one write thread, in order) have all been judged.
        for _ in range(3):
            c.putval('hostA/dpdktel_events-edge1.lcore1/lcore_state', 'N:4', interval=1)
        wait_until(lambda: 'type = lcore_state, message = Host hostA' in c.log(), 10,
                   'the threshold FAILURE of lcore_state')
        failures = [l for l in c.log().splitlines() if 'severity = FAILURE' in l and
                    'plugin_instance = edge1.port0' in l and 'type = link_status' in l]
        assert len(failures) == 1, c.log()
        assert 'below the failure threshold' in failures[0]
        metrics = urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=5).read()
        assert re.search(rb'^collectd_dpdktel_events_link_status\{dpdktel_events="edge1.port0",'
                         rb'instance="hostA"\} 0 ', metrics, re.M), metrics
        assert b'collectd_dpdktel_events_lcore_state{dpdktel_events="edge1.lcore1"' in metrics
        # No more values: after Timeout x Interval the link value is missing.
        wait_until(lambda: re.search(r'edge1\.port0.*not been updated', c.log()), 15,
                   'a "not updated" FAILURE for the link value')
