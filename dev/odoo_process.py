"""A real Odoo server (or ``odoo-bin shell``) as a subprocess, for the
benchmarks (bench/step_overhead.py, bench/first_token.py) and the
worker-death check (dev/durability_check.py), which talk to it over HTTP.

The Odoo paths come from the environment dev/env.sh sets (``VENV``,
``ODOO``, ``ADDONS``, ``PGHOST``, ``PGPORT``, ``PGUSER``, ``DATA_DIR``):
run these scripts from a shell wrapper that sources it and exports
``DATA_DIR``."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


class RPCError(Exception):
    """A JSON-RPC call answered an error; the message holds its JSON."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def odoo_command(*args: str) -> list[str]:
    """``odoo-bin ARGS`` with the addons path, database server and data
    directory of dev/env.sh, logging warnings only; ``AGENTIC_AI_EXTRA_ADDONS``
    (a folder of addons, e.g. PyPI's ``odoo/addons`` of queue_job) is added
    to the addons path when set."""
    env = os.environ
    extra = f",{env['AGENTIC_AI_EXTRA_ADDONS']}" if env.get("AGENTIC_AI_EXTRA_ADDONS") else ""
    return [f"{env['VENV']}/bin/python", f"{env['ODOO']}/odoo-bin", *args,
            f"--addons-path={env['ODOO']}/addons,{env['ADDONS']}{extra}", f"--db_host={env['PGHOST']}",
            f"--db_port={env['PGPORT']}", f"--db_user={env['PGUSER']}", f"--data-dir={env['DATA_DIR']}",
            "--log-level=warn"]


def odoo_shell(db: str, script: str, marker: str, env: dict | None = None) -> str:
    """Run ``script`` in ``odoo-bin shell`` on ``db`` with ``env`` added to
    the environment; return the rest of the output line that starts with
    ``marker + " "``. Raises RuntimeError with the output's end when the
    shell fails or prints no such line."""
    out = subprocess.run(odoo_command("shell", "-d", db, "--no-http"), input=script, text=True,
                         env={**os.environ, **(env or {})}, capture_output=True, check=False)
    line = next((text for text in out.stdout.splitlines() if text.startswith(marker + " ")), None)
    if out.returncode or line is None:
        raise RuntimeError(f"odoo-bin shell failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return line.removeprefix(marker + " ")


def rpc(client: httpx.Client, path: str, params: dict):
    """POST a JSON-RPC call; its ``result``, or RPCError."""
    response = client.post(path, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
    body = response.json()
    if "error" in body:
        raise RPCError(f"{path}: {json.dumps(body['error'])[:2000]}")
    return body["result"]


def sse_events(response: httpx.Response):
    """``(name, data)`` of each server-sent event as soon as its bytes
    arrive (comments are skipped); ``name`` is None for unnamed events."""
    buffer = b""
    for chunk in response.iter_raw():
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            name, data = None, []
            for line in block.decode().split("\n"):
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
            if data:
                yield name, "\n".join(data)


class OdooServer:
    """``odoo-bin server`` on ``db``, listening on a free loopback port,
    in a process group of its own (``kill()`` ends it and its workers at
    once, as a crash would). ``extra``: more options, e.g.
    ``["--workers=2"]``; cron threads are off."""

    def __init__(self, db: str, extra: tuple[str, ...] = ("--workers=0",), log_path: str | None = None,
                 env: dict | None = None):
        """``env``: more environment variables; with ``log_path``, the
        server's standard error goes to ``log_path + ".stderr"``."""
        self.db, self.extra, self.log_path, self.env = db, list(extra), log_path, env or {}
        self.port = self.gevent_port = 0
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def gevent_url(self) -> str:
        """Odoo's long-lived server (``--gevent-port``), running beside the HTTP workers."""
        return f"http://127.0.0.1:{self.gevent_port}"

    def start(self, timeout: float = 120) -> OdooServer:
        """Start the server and wait until ``/web/health`` answers 200
        (RuntimeError when it exits first or after ``timeout`` seconds)."""
        self.port, self.gevent_port = free_port(), free_port()
        args = ["server", "-d", self.db, f"--http-port={self.port}", "--http-interface=127.0.0.1",
                f"--gevent-port={self.gevent_port}", "--max-cron-threads=0", *self.extra]
        if self.log_path:
            args.append(f"--logfile={self.log_path}")
        stderr = open(self.log_path + ".stderr", "w") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.process = subprocess.Popen(odoo_command(*args), stdout=subprocess.DEVNULL, stderr=stderr,
                                            start_new_session=True, env={**os.environ, **self.env})
        finally:
            if self.log_path:
                stderr.close()
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.base_url, timeout=5) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"odoo-bin server exited with {self.process.returncode}")
                try:
                    if client.get("/web/health").status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"odoo-bin server did not answer within {timeout} s")

    def wait_for_gevent(self, timeout: float = 60) -> None:
        """Wait until the gevent process (started by a multi-process server, a
        moment after its HTTP workers) answers ``/web/health``; RuntimeError
        after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.gevent_url, timeout=5) as client:
            while time.monotonic() < deadline:
                try:
                    if client.get("/web/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        raise RuntimeError(f"the gevent server did not answer within {timeout} s")

    def login(self, login: str = "admin", password: str = "admin", timeout: float = 300) -> httpx.Client:
        """A new httpx client logged in on the server as ``login``; the caller closes it."""
        client = httpx.Client(base_url=self.base_url, timeout=timeout)
        try:
            rpc(client, "/web/session/authenticate", {"db": self.db, "login": login, "password": password})
        except Exception:
            client.close()
            raise
        return client

    @contextmanager
    def client(self, login: str = "admin", password: str = "admin", timeout: float = 300) -> Iterator[httpx.Client]:
        """``login()`` as a context manager that closes the client."""
        client = self.login(login, password, timeout)
        try:
            yield client
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL the server's whole process group (no clean-up of any kind
        runs) and reap it."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds."""
        if not self.process or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> OdooServer:
        return self.start()

    def __exit__(self, *_exc) -> None:
        self.stop()
