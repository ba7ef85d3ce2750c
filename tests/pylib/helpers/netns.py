"""Network namespaces made by a test, for tests of what crosses a network.

Everything here stays inside the namespaces the test creates: addresses are set only on
their own interfaces, and the namespaces are deleted afterwards. run_in() runs a function
in a thread that has entered a namespace (setns only affects the calling thread), so that
the test process itself can talk to a service listening inside one.
"""
import ctypes
import os
import subprocess
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL('libc.so.6', use_errno=True)


def ip(*args, ns=None, check=True):
    cmd = (['ip', 'netns', 'exec', ns] if ns else []) + ['ip'] + list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def run_in(ns, fn, *args, **kwargs):
    """fn(*args, **kwargs) in network namespace ns; its result, or its exception raised."""
    if ns is None:
        return fn(*args, **kwargs)
    out = {}

    def body():
        fd = os.open(f'/var/run/netns/{ns}', os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f'setns {ns}')
            out['value'] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the caller
            out['error'] = e
        finally:
            os.close(fd)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if 'error' in out:
        raise out['error']
    return out['value']


def exec_prefix(ns):
    return ['ip', 'netns', 'exec', ns] if ns else []


class Namespaces:
    """Namespaces by name; all deleted by close() (their interfaces go with them)."""

    def __init__(self):
        self.names = []

    def add(self, name):
        subprocess.run(['ip', 'netns', 'add', name], check=True)
        self.names.append(name)
        ip('link', 'set', 'lo', 'up', ns=name)
        return name

    def veth(self, ns_a, if_a, ns_b, if_b):
        subprocess.run(['ip', 'link', 'add', if_a, 'netns', ns_a, 'type', 'veth', 'peer',
                        'name', if_b, 'netns', ns_b], check=True)
        ip('link', 'set', if_a, 'up', ns=ns_a)
        ip('link', 'set', if_b, 'up', ns=ns_b)

    def close(self):
        for name in reversed(self.names):
            subprocess.run(['ip', 'netns', 'delete', name], check=False)
        self.names = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
