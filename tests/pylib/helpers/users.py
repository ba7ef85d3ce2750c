"""Throwaway system users and groups for tests that need a process that is not root."""
import contextlib
import itertools
import os
import pwd
import subprocess

_ids = itertools.count()


def _run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError(f'{argv} exited {p.returncode}: {p.stdout} {p.stderr}')


@contextlib.contextmanager
def throwaway_users():
    """A system group with one member (its primary group), and one user outside it; both
    users and the group are removed afterwards. Yields (group, member, outsider), the users
    as pwd entries."""
    tag = f'{os.getpid() % 100000}x{next(_ids)}'
    group, member, outsider = f'dtg{tag}', f'dtm{tag}', f'dto{tag}'
    common = ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell',
              '/usr/sbin/nologin']
    made = []
    try:
        _run(['groupadd', '--system', group])
        made.append(('groupdel', group))
        _run(['useradd'] + common + ['--gid', group, member])
        made.append(('userdel', member))
        _run(['useradd'] + common + ['--gid', 'nogroup', outsider])
        made.append(('userdel', outsider))
        yield group, pwd.getpwnam(member), pwd.getpwnam(outsider)
    finally:
        # Users before their group.
        for cmd, name in sorted(made, key=lambda m: m[0] != 'userdel'):
            subprocess.run([cmd, name], capture_output=True, timeout=30)
