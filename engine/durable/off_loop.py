"""Long pure-Python work of a run kept off the gevent server's event loop
(issue 26 point 1).

Odoo's gevent server (``--gevent-port``) serves every request and every
streamed run of its process in greenlets of one thread: while one greenlet
computes, nothing else of the process moves (no stream event is written,
no ``/websocket`` message, no other request). A run's SQL and its provider
calls yield (psycopg2's wait callback, gevent's sockets), its own CPU work
does not. Most of that work is a few milliseconds a step; rendering a long
answer's Markdown is not: markdown-it-py, Odoo's sanitizer and lxml take
about 3-5 ms per KB of text on this project's machine (64 KB: 200-330 ms),
``bench/loop_block.py``.

``off_loop(fn, *args)`` runs such work in a native thread of gevent's
thread pool (``gevent.get_hub().threadpool``) when called on the gevent
server: the calling greenlet waits for the result and the loop serves the
others meanwhile. The thread and the loop then share the interpreter
lock: the thread holds it for at most ``sys.getswitchinterval()`` at a
time, 5 ms by default, and a request the loop serves needs it back many
times. ``install()``, on the gevent server only, makes that interval
``SWITCH_INTERVAL``: measured with a 48 KB answer rendered beside a probe
of ``/web/health`` (``bench/loop_block.py``), the probe's longest answer
went from 223 ms (rendered on the loop) to 44 ms (in the pool, 5 ms
interval) and 21-23 ms (0.5 ms), against 11-18 ms quiet. Elsewhere (HTTP workers, the
threaded server, the test suite) ``off_loop`` calls ``fn(*args)``
directly and the interval is left alone.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

import odoo

T = TypeVar("T")

#: Seconds a thread may hold the interpreter lock while another waits for it, on the gevent server.
SWITCH_INTERVAL = 0.0005


def on_gevent_server() -> bool:
    """Whether this process is Odoo's gevent server (``odoo.evented``)."""
    return bool(getattr(odoo, "evented", False))


def off_loop(fn: Callable[..., T], *args) -> T:
    """``fn(*args)``, in a thread of gevent's pool on the gevent server (see
    the module docstring), else here. ``fn`` must not touch a cursor, an
    environment or a request: it may run in another thread. Raises what
    ``fn`` raises."""
    if not on_gevent_server():
        return fn(*args)
    import gevent
    return gevent.get_hub().threadpool.apply(fn, args)


def install() -> bool:
    """On the gevent server, have a thread of the pool give the interpreter
    lock back to the loop after at most ``SWITCH_INTERVAL`` (see the module
    docstring); once per process. Returns whether it did."""
    if not on_gevent_server():
        return False
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
    return True
