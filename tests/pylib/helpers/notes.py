"""The notifications a real collectd hands to its exec plugin, with their own times.

collectd 5.12's exec plugin (`NotificationExec`, src/exec.c exec_notification_one) writes each
notification to the script's stdin as header lines ("Severity: ", "Time: " with 3 decimals,
"Host: ", "Plugin: ", "PluginInstance: ", "Type: ", ...), an empty line, then the message.
`Time:` is the notification's own time, which our plugins stamp (cdtime(), CLOCK_REALTIME)
just before they dispatch it: 1 ms resolution, where the logfile plugin gives 1 s.
"""
import glob
import os
import re
import time


class Notes:
    """The notifications collectd hands to exec's NotificationExec script, saved as files
    under `base` (a dir of the caller's own that `nobody` can reach)."""

    def __init__(self, base):
        os.chmod(base, 0o755)
        self.dir = os.path.join(base, 'notes')
        os.mkdir(self.dir)
        os.chmod(self.dir, 0o1777)  # the script runs as nobody
        self.script = os.path.join(base, 'notify.sh')
        with open(self.script, 'w') as f:
            f.write(f'#!/bin/sh\ncat > "$(mktemp {self.dir}/n.XXXXXXXX)"\n')
        os.chmod(self.script, 0o755)
        self.seen = set()

    def config(self):
        return (f'LoadPlugin exec\n<Plugin exec>\n  NotificationExec "nobody" '
                f'"{self.script}"\n</Plugin>\n')

    @staticmethod
    def parse(text):
        head, _, message = text.partition('\n\n')
        n = dict(line.split(': ', 1) for line in head.splitlines() if ': ' in line)
        n['time'] = float(n['Time'])
        n['message'] = message.strip()
        return n

    def new(self):
        """Notifications not returned before, as dicts with 'time' and 'message'."""
        out = []
        for path in sorted(glob.glob(os.path.join(self.dir, 'n.*'))):
            if path in self.seen:
                continue
            with open(path) as f:
                text = f.read()
            if not text.endswith('\n'):
                continue  # still being written
            self.seen.add(path)
            out.append(self.parse(text))
        return sorted(out, key=lambda n: n['time'])

    def all(self):
        """Every notification so far (complete ones), oldest first."""
        out = []
        for path in glob.glob(os.path.join(self.dir, 'n.*')):
            with open(path) as f:
                text = f.read()
            if text.endswith('\n'):
                out.append(self.parse(text))
        return sorted(out, key=lambda n: n['time'])

    def wait(self, pattern, timeout=15):
        """The first new notification whose message matches `pattern`."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for n in self.new():
                if rx.search(n['message']):
                    return n
            time.sleep(0.002)
        raise TimeoutError(f'no notification matching {pattern!r} within {timeout} s')

    def drain(self):
        time.sleep(0.05)
        self.new()
