"""How long a run waited for a database connection or for a lock, and how
much of that wait its server's core was busy running other work (issue 26
point 5).

A wait has two causes that look alike from inside: a resource that is
scarce (every connection of the gate or the pool in use by runs that wait on
something, a row lock held by another transaction), or a core that is busy
(the runs that hold the connections are working, but the one core their
Python runs on is shared by every request and run of the process, so they
give the connections back only as fast as the core gets through their
work). The first is what a bigger pool, more workers or shorter locks cure;
the second only less CPU per run or more cores.

``Waits.timing()`` tells them apart the way an off-CPU profile does: it
reads, beside the wall time of the wait, the CPU time of the operating-system
thread the waiting code runs on (``time.thread_time``). On Odoo's gevent
server every request and every run is a greenlet of one thread, so that
figure is the CPU the process's event loop spent on everyone else's work
while this one waited: ``core_busy``.

A core has a third state besides running and idle: the thread is ready to
run while the machine's cores run other processes (PostgreSQL, the HTTP
workers, whatever else the machine serves). The thread's CPU clock does not
move then, and the loop looks idle although it has work waiting. Measured
with 200 chats on 2 cores (bench/load.py, 2026-12-04): the gevent loop ran
80-86 % of the burst, waited 14-18 % for a core and slept 0-3 %, while
PostgreSQL's sessions of the runs sat "idle in transaction", waiting for
it. ``core_queued`` counts that state, from the seconds the thread spent on
a run queue (``run_queue_seconds``): it is the machine's CPU too, not a
scarce connection or lock.

What is left (``Waits.idle()``) is time the core was idle while the run
still waited: the resource, not the CPU. The split is meant for the gevent
server, where the streams run and the bench measures. On a multi-threaded
server (Odoo's threaded server, the cron's runs) the waiting thread's own
CPU is nearly nothing, while the threads holding the connections still
share the interpreter's one lock: nearly every second of a wait counts there
as the resource's, an upper bound. CPU spent by threads the gevent server
runs beside its loop (engine/durable/off_loop.py) is not seen as the loop's,
and the waiting greenlet's own CPU inside the block (a lock statement's)
counts as busy.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

#: The calling thread's scheduler statistics (Linux): time on a core, time ready on a run queue (ns), slices.
SCHEDSTAT = "/proc/thread-self/schedstat"
_schedstat = [True]  # False once the file could not be read: not asked again


def run_queue_seconds() -> float:
    """Seconds the calling operating-system thread has spent so far ready
    to run but waiting for a core (``SCHEDSTAT``'s second field, Linux
    kernel documentation, scheduler/sched-stats); 0.0 where the file cannot
    be read (not Linux, a kernel without scheduler statistics: from then on
    without asking again; another failure, such as no file descriptor left,
    only this once). The thread reads its own figure while it runs, so
    every wait it had is counted in it. About 10 us a call."""
    if _schedstat[0]:
        try:
            with open(SCHEDSTAT, "rb") as stat:
                return int(stat.read().split()[1]) / 1e9
        except (FileNotFoundError, NotADirectoryError, ValueError, IndexError):  # no such statistics here
            _schedstat[0] = False
        except OSError:  # this once (no file left to open: the process's limit): 0, asked again next time
            pass
    return 0.0


def clocks() -> tuple[float, float, float]:
    """The three clocks a wait is read on, now: wall time
    (``time.monotonic``), this thread's CPU (``time.thread_time``) and its
    time on a run queue (``run_queue_seconds``), in seconds. ``Waits.add(
    *elapsed(start))`` counts what passed since ``start = clocks()``."""
    return time.monotonic(), time.thread_time(), run_queue_seconds()


def elapsed(start: tuple[float, float, float]) -> tuple[float, float, float]:
    """``(seconds, core_busy, core_queued)`` since ``start`` (``clocks()``)."""
    now = clocks()
    return now[0] - start[0], now[1] - start[1], now[2] - start[2]


class Waits:
    """The waits of one run (or one kind of wait of it): ``seconds`` of
    wall time in all, ``core_busy`` seconds of them during which this
    thread's core ran other work, ``core_queued`` seconds during which the
    thread was ready to run but the machine's cores ran other processes
    (both together at most ``seconds``), and ``count``. ``idle()`` is the
    rest: the wait for the resource itself."""

    __slots__ = ("core_busy", "core_queued", "count", "seconds")

    def __init__(self):
        self.seconds = self.core_busy = self.core_queued = 0.0
        self.count = 0

    @contextmanager
    def timing(self):
        """Count the block as one wait (also when it raises)."""
        start = clocks()
        try:
            yield
        finally:
            self.add(*elapsed(start))

    def add(self, seconds: float, core_busy: float, core_queued: float = 0.0) -> None:
        """Count one wait of ``seconds``, ``core_busy`` of them with the
        core busy and ``core_queued`` with the thread waiting for a core
        (each at least 0, and both together at most ``seconds``: the clocks
        are read a moment apart)."""
        busy = min(seconds, max(0.0, core_busy))
        self.seconds += seconds
        self.core_busy += busy
        self.core_queued += min(seconds - busy, max(0.0, core_queued))
        self.count += 1

    def idle(self) -> float:
        """Seconds of these waits with the core idle and not wanted: the
        wait for a connection, a lock or the database's own work."""
        return max(0.0, self.seconds - self.core_busy - self.core_queued)
