"""Threads of a running process: find a DPDK lcore's thread by name, and stop one thread
while the others run on (tests/tools/thread_stop, which uses ptrace on that thread only).

DPDK names a worker lcore's thread after its lcore id: "lcore-worker-N" in DPDK 22.11.0,
"rte-worker-N" in Debian's 22.11 stable releases, "dpdk-workerN" from 23.11 on (seen on
23.11 to 26.07: the thread name has 15 characters at most). The main
lcore runs on the process's main thread (tid == pid).
"""
import glob
import os
import re
import select
import subprocess
import time

from .wait import Timeout

WORKER_NAME = re.compile(r'^(?:lcore|rte|dpdk)-worker-?(\d+)$')


def threads(pid):
    """{tid: name} of every thread of pid (threads may come and go while this reads)."""
    out = {}
    for task in glob.glob(f'/proc/{pid}/task/*'):
        try:
            with open(os.path.join(task, 'comm')) as f:
                out[int(os.path.basename(task))] = f.read().strip()
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended while we read (ESRCH once its comm was open)
    return out


def lcore_tid(pid, lcore, main_lcore=None):
    """The tid of DPDK lcore `lcore` of process pid; the main lcore is the main thread
    (give main_lcore, e.g. /fwd/info's, to ask for it). Raises LookupError naming the
    threads seen when there is none."""
    if main_lcore is not None and lcore == main_lcore:
        return pid
    found = threads(pid)
    for tid, name in found.items():
        m = WORKER_NAME.match(name)
        if m and int(m.group(1)) == lcore:
            return tid
    raise LookupError(f'no thread of lcore {lcore} in process {pid}: {sorted(found.values())}')


def tool(build_dir):
    return os.path.join(build_dir, 'tests', 'tools', 'thread_stop')


class ThreadStop:
    """Keep one thread stopped for the duration of a with-block (thread_stop
    --until-stdin-closes), or for for_ms milliseconds (--for-ms). Entering returns once
    the thread is really stopped ("stopped TID" read within timeout s)."""

    def __init__(self, build_dir, tid, for_ms=None, timeout=10):
        mode = ['--for-ms', str(for_ms)] if for_ms else ['--until-stdin-closes']
        self.argv = [tool(build_dir), '--tid', str(tid)] + mode
        self.tid = tid
        self.for_ms = for_ms or 0
        self.timeout = timeout
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ''
        if line != f'stopped {self.tid}\n':
            self.proc.kill()
            _, err = self.proc.communicate(timeout=self.timeout)
            raise Timeout(f'{self.argv}: no "stopped {self.tid}" within {self.timeout} s '
                          f'(got {line!r}, exit {self.proc.returncode}, stderr {err!r})')
        self.stopped_at = time.monotonic()
        return self

    def release(self):
        """Let the thread run on (closes stdin; for --for-ms, waits for its time to end).
        Returns thread_stop's exit code."""
        if self.proc is None:
            return None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(self.for_ms / 1000 + self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # the kernel detaches a dead tracer's tracee: it runs on
            self.proc.wait()
        return self.proc.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.release()


def run_tool(build_dir, *args, timeout=30):
    """thread_stop with the given arguments; the CompletedProcess."""
    return subprocess.run([tool(build_dir)] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
