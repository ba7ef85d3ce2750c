"""CPU time of processes and threads from /proc, for benchmarks.

schedstat's first field is the time a thread spent on a CPU, in nanoseconds (the tick-based
utime/stime of /proc/<pid>/stat are 10 ms coarse). A thread that ends between two snapshots
takes its time with it: `delta` counts such threads, so a caller can say so.
"""
import os


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None


def comm(pid, tid=None):
    text = _read(f'/proc/{pid}/task/{tid or pid}/comm')
    return text.strip() if text is not None else None


def thread_times(pid, name=None):
    """{tid: on-CPU ns} of pid's threads, only those whose comm starts with `name` if given."""
    out = {}
    try:
        tids = os.listdir(f'/proc/{pid}/task')
    except FileNotFoundError:
        return out
    for tid in tids:
        if name is not None:
            c = comm(pid, tid)
            if c is None or not c.startswith(name):
                continue
        text = _read(f'/proc/{pid}/task/{tid}/schedstat')
        if text is not None:
            out[int(tid)] = int(text.split()[0])
    return out


def run_wait_ns(pid, tid):
    """(on-CPU ns, ns spent runnable but waiting for a CPU) of one thread."""
    run, wait, _ = (int(x) for x in _read(f'/proc/{pid}/task/{tid}/schedstat').split())
    return run, wait


def children(pid):
    """Direct child processes of pid (by the parent pid in /proc/*/stat)."""
    out = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        text = _read(f'/proc/{entry}/stat')
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        if text is not None and int(text[text.rindex(')') + 2:].split()[1]) == pid:
            out.append(int(entry))
    return out


def tree_times(pid):
    """{(pid, tid): on-CPU ns} of pid and all its descendants (collectd and the DPDK
    secondary processes its dpdkstat/dpdkevents plugins fork)."""
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        out.update({(p, t): ns for t, ns in thread_times(p).items()})
        todo.extend(children(p))
    return out


def delta(before, after, exclude=()):
    """(ns used between two snapshots, threads that ended in between). A thread that is new
    in `after` counts from 0; keys in `exclude` are left out."""
    used = sum(ns - before.get(k, 0) for k, ns in after.items() if k not in exclude)
    lost = sum(1 for k in before if k not in after and k not in exclude)
    return used, lost


def find_thread(pid, name):
    """The tid of pid's thread called exactly `name`."""
    for tid in os.listdir(f'/proc/{pid}/task'):
        if comm(pid, tid) == name:
            return int(tid)
    raise RuntimeError(f'no thread {name!r} in process {pid}')
