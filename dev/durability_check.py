"""A real worker death in the middle of a tool call (issue 10 point 1,
case BR-25a), on a real Odoo server process, a real PostgreSQL and the
scripted LLM server in this process.

1. The scripted model answers "rename the partner" with ``odoo_write`` on
   a partner that this process holds locked (``SELECT ... FOR UPDATE`` in
   an open transaction), so the worker running the tool blocks in the
   UPDATE, as a slow or stuck tool would.
2. Once PostgreSQL shows the worker waiting for that lock, the server is
   killed with SIGKILL (its whole process group: no clean-up runs), and
   the lock released.
   Meanwhile a second ``chat/send`` on the same thread, from another
   client (another worker), is refused at once ("already being
   processed"), not held until the run ends and then run (issue 23).
3. In the database: the thread is still ``executing`` (its lease on it), the user's message,
   the model's call and its ``llm_call`` log row were committed, there is
   no result, and the partner is unchanged (the step in flight is lost).
4. A new server: ``/agentic_ai/thread/messages`` shows the thread
   ``interrupted`` with exactly one ``[OUTCOME UNKNOWN]`` result; "Did it
   work?" reaches the model with exactly one result per call id, and
   ``odoo_write`` never ran (no ``tool_execution`` log row, the partner
   unchanged).
5. A conflict inside a tool call (issue 26 point 3): on another thread,
   ``odoo_write`` renames the partner while this process holds the row
   with an UPDATE of its own; once the worker waits for it, this process
   commits. Under REPEATABLE READ the worker's UPDATE then fails with a
   serialization failure: the step is rolled back and run again on a fresh
   snapshot, so the run completes, the call has one successful result and
   one ``tool_execution`` row, and both changes are kept.
6. The same conflict inside a call the user approved (a thread whose
   agent asks before every write): the answer to the question is kept; the
   approved call meets the other session's change and is rolled back; an
   approval covers what the user was shown, once, so the call is judged
   again on a fresh snapshot and the user is asked again (no error, the
   agent's rename not written, the other change kept); approved again, the
   run completes with both changes kept.

Usage: ``python dev/durability_check.py DB`` with dev/env.sh's environment
(``bash dev/durability_check.sh`` makes the database, a copy of the test
database, and drops it). Prints its steps, then ``1 passed, 0 failed``, or
the reason and ``0 passed, 1 failed``; exits 0 or 1. The servers' log is
``.logs/durability-<time>-<n>.log``."""
from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev.odoo_process import OdooServer, RPCError, odoo_shell, rpc  # noqa: E402 - after the path is set
from dev.scripted_llm import Scenario, ScriptedLLMServer  # noqa: E402
from dev.scripted_llm.scenario import last_user_contains, tool_result_for  # noqa: E402

SERVER_OPTIONS = ("--workers=2",)  # prefork, as in production: the request runs in a worker process
WAIT_SECONDS = 30                  # longest wait for the worker to block, and for its session to end
NEW_NAME = "Renamed by the agent"
CONFLICT_NAME = "Renamed again by the agent"
CONFLICT_COMMENT = "changed by another user meanwhile"
APPROVED_NAME = "Renamed with the user's approval"
APPROVAL_COMMENT = "changed by another user while the approved call ran"
UNKNOWN = "[OUTCOME UNKNOWN]"
SECOND_SEND_SECONDS = 5            # a refusal, not a wait: the run holds the thread for as long as the tool blocks


class CheckFailed(Exception):
    """What the check found wrong."""


def expect(condition, reason: str) -> None:
    if not condition:
        raise CheckFailed(reason)


def step(text: str) -> None:
    print(f"[durability] {text}", flush=True)


def wait_for(probe, what: str):
    """Poll ``probe()`` until it returns a true value (returned), for at most WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    raise CheckFailed(f"timed out after {WAIT_SECONDS} s waiting for {what}")


def query(conn, sql: str, params=()) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def script(scenario: Scenario, partner_id: int) -> None:
    """The model's two answers: rename ``partner_id`` with odoo_write; then a text."""
    scenario.add({"tool_calls": [{"id": "call_rename_1", "name": "odoo_write", "arguments": {
        "model": "res.partner", "record_ids": [partner_id], "values": {"name": NEW_NAME}}}]},
        last_user_contains("rename the partner"))
    scenario.add({"content": "I will check the partner before doing anything again."},
                 last_user_contains("did it work"))
    scenario.add({"tool_calls": [{"id": "call_rename_2", "name": "odoo_write", "arguments": {
        "model": "res.partner", "record_ids": [partner_id], "values": {"name": CONFLICT_NAME}}}]},
        last_user_contains("rename it once more"))
    scenario.add({"tool_calls": [{"id": "call_rename_3", "name": "odoo_write", "arguments": {
        "model": "res.partner", "record_ids": [partner_id], "values": {"name": APPROVED_NAME}}}]},
        last_user_contains("rename it with my approval"))
    scenario.add({"content": "Renamed."}, tool_result_for("odoo_write"), uses=None)


class Check:
    """The check's state: database, scripted server, Odoo server, and the
    psycopg2 connections of this process (``probe`` autocommits; ``locker``
    holds the partner's row lock)."""

    def __init__(self, db: str):
        self.db = db
        self.scenario = Scenario()
        self.llm = ScriptedLLMServer(self.scenario)
        self.server: OdooServer | None = None
        self.probe = psycopg2.connect(dbname=db)
        self.probe.autocommit = True
        self.locker = psycopg2.connect(dbname=db)
        self.log_stem = str(ROOT / ".logs" / f"durability-{time.strftime('%Y%m%d-%H%M%S')}")
        self.clients: list[httpx.Client] = []

    def start_server(self) -> httpx.Client:
        """A new server (the previous one is dead) and an administrator's client on it."""
        (ROOT / ".logs").mkdir(exist_ok=True)
        self.server = OdooServer(self.db, SERVER_OPTIONS, f"{self.log_stem}-{len(self.clients) + 1}.log").start()
        self.clients.append(self.server.login(timeout=60))
        return self.clients[-1]

    def close(self) -> None:
        for client in self.clients:
            client.close()
        if self.server:
            self.server.stop()
        self.llm.stop()
        self.locker.close()
        self.probe.close()

    def run(self) -> None:
        self.llm.start()
        prep = json.loads(odoo_shell(self.db, (ROOT / "dev" / "durability_check_prep.py").read_text(), "PREP",
                                     {"CHECK_LLM_URL": self.llm.base_url}))
        thread_id, partner_id, partner_name = prep["thread_id"], prep["partner_id"], prep["partner_name"]
        script(self.scenario, partner_id)
        client = self.start_server()
        query(self.locker, "SELECT id FROM res_partner WHERE id = %s FOR UPDATE", [partner_id])
        step(f"server up ({' '.join(SERVER_OPTIONS)}); thread {thread_id}, partner {partner_id} locked by this process")
        sender = threading.Thread(target=self.send_blocked, args=(client, thread_id), daemon=True)
        sender.start()
        lock_pid = self.locker.get_backend_pid()
        blocked = wait_for(lambda: query(self.probe, "SELECT pid FROM pg_stat_activity WHERE datname = %s AND "
                                         "wait_event_type = 'Lock' AND %s = ANY(pg_blocking_pids(pid))",
                                         [self.db, lock_pid]), "the worker to block in odoo_write")
        step(f"worker's session {blocked[0][0]} waits for the partner's row lock")
        self.check_second_send_refused(thread_id)
        step("SIGKILL to the server")
        self.server.kill()
        # A session blocked in a statement would outlive its worker (PostgreSQL sees the client gone only
        # when it next talks to it), holding the step's locks: each step asks PostgreSQL to check its client every
        # 5 s (engine/durable/run_lease.py), so the dead worker's sessions end while this process still holds the row.
        own = [self.probe.get_backend_pid(), lock_pid]
        wait_for(lambda: not query(self.probe, "SELECT pid FROM pg_stat_activity WHERE datname = %s "
                                   "AND pid <> ALL(%s)", [self.db, own]),
                 "the dead server's sessions to end while the row lock is still held")
        self.locker.rollback()
        sender.join(5)
        self.check_after_death(thread_id, partner_id, partner_name)
        wait_for(lambda: query(self.probe, "SELECT h.alive_until < (now() AT TIME ZONE 'UTC') FROM agentic_ai_thread t "
                               "JOIN agentic_ai_run_holder h ON h.id = t.run_holder WHERE t.id = %s",
                               [thread_id])[0][0], "the dead server's run lease to run out")
        step("the dead server's run lease ran out")
        client = self.start_server()
        step("server restarted")
        self.check_after_restart(client, thread_id, partner_id, partner_name)
        self.check_conflict_retried(client, prep["conflict_thread_id"], partner_id)
        self.check_approved_conflict_retried(client, prep["approval_thread_id"], partner_id)

    def check_conflict_retried(self, client: httpx.Client, thread_id: int, partner_id: int) -> None:
        """Step 5 of the module docstring."""
        met, answer = self.conflicting(client, partner_id, CONFLICT_COMMENT, "/agentic_ai/chat/send",
                                       {"thread_id": thread_id, "message": "Please rename it once more."})
        expect(answer["result"]["state"] == "completed", f"the conflicting rename ended {answer}")
        self.check_kept(thread_id, partner_id, CONFLICT_NAME, CONFLICT_COMMENT)
        step(f"a serialization failure inside odoo_write ({met} in the server's log): the step was tried again; "
             "completed, one successful result and one tool_execution row, both changes kept")

    def check_approved_conflict_retried(self, client: httpx.Client, thread_id: int, partner_id: int) -> None:
        """Step 6 of the module docstring."""
        asked = rpc(client, "/agentic_ai/chat/send", {"thread_id": thread_id,
                                                      "message": "Please rename it with my approval."})
        expect(asked["result"]["state"] == "waiting_confirmation", f"the rename did not ask first: {asked['result']}")
        met, answer = self.conflicting(client, partner_id, APPROVAL_COMMENT, "/agentic_ai/confirm/approve",
                                       {"thread_id": thread_id, "tool_call_id": "call_rename_3"})
        result = answer["result"]
        expect(result["state"] == "waiting_confirmation" and "Asked again" in (result["reply"] or ""),
               f"after the conflict the approved rename was not asked again: {result}")
        found = query(self.probe, "SELECT name, comment FROM res_partner WHERE id = %s", [partner_id])[0]
        expect(found == (CONFLICT_NAME, APPROVAL_COMMENT), f"after the conflict the partner is {found!r}")
        errors = query(self.probe, "SELECT count(*) FROM agentic_ai_thread_message WHERE thread_id = %s "
                                   "AND role = 'tool_result'", [thread_id])[0][0]
        expect(errors == 0, f"{errors} result(s) of the call before it was approved again")
        again = rpc(client, "/agentic_ai/confirm/approve", {
            "thread_id": thread_id, "confirmation_id": result["confirmation"]["confirmation_id"]})
        expect(again["result"]["state"] == "completed", f"the rename approved again ended {again['result']}")
        self.check_kept(thread_id, partner_id, APPROVED_NAME, APPROVAL_COMMENT)
        step(f"the same conflict inside the approved call ({met} in the server's log in all): rolled back and "
             "asked again, nothing written; approved again, completed, one result, both changes kept")

    def conflicting(self, client: httpx.Client, partner_id: int, comment: str, route: str,
                    params: dict) -> tuple[int, dict]:
        """Call ``route`` while this process holds ``partner_id``'s row with an
        UPDATE of its comment, committed once the worker waits for it:
        ``(the server log's count of serialization failures, the answer)``."""
        before = Path(self.server.log_path).read_text(errors="replace").count("could not serialize access")
        query(self.locker, "UPDATE res_partner SET comment = %s WHERE id = %s RETURNING id", [comment, partner_id])
        answer = {}

        def send():
            try:
                answer["value"] = rpc(client, route, params)
            except (httpx.HTTPError, RPCError, ValueError) as error:
                answer["error"] = error
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        lock_pid = self.locker.get_backend_pid()
        wait_for(lambda: query(self.probe, "SELECT pid FROM pg_stat_activity WHERE datname = %s AND "
                               "wait_event_type = 'Lock' AND %s = ANY(pg_blocking_pids(pid))",
                               [self.db, lock_pid]), "the worker to wait for the partner changed by another user")
        self.locker.commit()  # the worker's UPDATE now meets a row changed after its snapshot
        sender.join(WAIT_SECONDS)
        expect("value" in answer, f"{route} of the conflicting rename failed: {answer.get('error')}")
        met = Path(self.server.log_path).read_text(errors="replace").count("could not serialize access")
        expect(met > before, "the server's log shows no new serialization failure: the conflict was not met")
        return met, answer["value"]

    def check_kept(self, thread_id: int, partner_id: int, name: str, comment: str) -> None:
        """One successful result and one tool_execution row on ``thread_id``; the partner has both changes."""
        results = query(self.probe, "SELECT tool_status, content FROM agentic_ai_thread_message WHERE thread_id = %s "
                                    "AND role = 'tool_result'", [thread_id])
        expect(len(results) == 1 and results[0][0] == "done", f"the call's results: {results}")
        logs = query(self.probe, "SELECT success FROM agentic_ai_execution_log WHERE thread_id = %s "
                                 "AND action_type = 'tool_execution'", [thread_id])
        expect(logs == [(True,)], f"tool_execution rows of the conflicting rename: {logs}")
        found = query(self.probe, "SELECT name, comment FROM res_partner WHERE id = %s", [partner_id])[0]
        expect(found == (name, comment), f"the partner is {found!r}: a change was lost")

    def check_second_send_refused(self, thread_id: int) -> None:
        """Issue 23 point 7: ``chat/send`` on a thread whose run is in
        progress (in another worker) is refused at once, as the stream and
        the queue refuse it, instead of waiting for the run and then running."""
        other = self.server.login(timeout=60)
        self.clients.append(other)
        started = time.monotonic()
        try:
            rpc(other, "/agentic_ai/chat/send", {"thread_id": thread_id, "message": "And now this."})
        except RPCError as error:
            refused = str(error)
        else:
            refused = ""
        elapsed = time.monotonic() - started
        expect("already being processed" in refused, f"a second chat/send on the running thread was not refused: "
                                                     f"{refused or 'it ran'}")
        expect(elapsed < SECOND_SEND_SECONDS, f"the second chat/send waited {elapsed:.1f} s before it was refused")
        step(f"a second chat/send on the running thread refused in {elapsed:.2f} s")

    def send_blocked(self, client: httpx.Client, thread_id: int) -> None:
        """The request the server dies in (its connection drops, or it times out)."""
        try:
            rpc(client, "/agentic_ai/chat/send", {"thread_id": thread_id, "message": "Please rename the partner."})
        except (httpx.HTTPError, RPCError, ValueError):
            return
        step("chat/send answered although its server was killed")

    def check_after_death(self, thread_id: int, partner_id: int, partner_name: str) -> None:
        state = query(self.probe, "SELECT state FROM agentic_ai_thread WHERE id = %s", [thread_id])[0][0]
        expect(state == "executing", f"after the death the thread is {state!r}, not 'executing'")
        rows = query(self.probe, "SELECT role, tool_name, content FROM agentic_ai_thread_message WHERE thread_id = %s "
                                 "ORDER BY id", [thread_id])
        roles = [role for role, _tool, _content in rows]
        expect(any(role == "user" and "rename the partner" in (content or "") for role, _t, content in rows),
               f"the user's message was not committed: {roles}")
        expect([tool for role, tool, _c in rows if role == "tool_call"] == ["odoo_write"],
               f"the model's odoo_write call was not committed once: {rows}")
        expect("tool_result" not in roles, f"a tool result exists for a call that never finished: {roles}")
        logs = Counter(kind for (kind,) in query(
            self.probe, "SELECT action_type FROM agentic_ai_execution_log WHERE thread_id = %s", [thread_id]))
        expect(logs == Counter({"llm_call": 1}), f"log rows after the death: {dict(logs)}, expected one llm_call")
        name = query(self.probe, "SELECT name FROM res_partner WHERE id = %s", [partner_id])[0][0]
        expect(name == partner_name, f"the partner was renamed to {name!r} by a step that never committed")
        step(f"after the death: thread executing; committed {roles}, one llm_call log row; partner unchanged")

    def check_after_restart(self, client: httpx.Client, thread_id: int, partner_id: int, partner_name: str) -> None:
        loaded = rpc(client, "/agentic_ai/thread/messages", {"thread_id": thread_id})
        expect(loaded["thread"]["state"] == "interrupted",
               f"thread/messages shows the thread {loaded['thread']['state']!r}, not 'interrupted'")
        results = [m for m in loaded["messages"] if m["role"] == "tool_result"]
        expect(len(results) == 1 and UNKNOWN in (results[0]["content"] or ""),
               f"expected one {UNKNOWN} result, got {[(m['tool_status'], m['content'][:60]) for m in results]}")
        step(f"thread/messages: interrupted, one result ({results[0]['tool_status']}): {results[0]['content'][:60]}...")
        answer = rpc(client, "/agentic_ai/chat/send", {"thread_id": thread_id, "message": "Did it work?"})
        expect(answer["result"]["state"] == "completed", f"'Did it work?' ended {answer['result']}")
        sent = self.scenario.chat_requests()[-1]["messages"]
        calls = [call["id"] for m in sent for call in m.get("tool_calls") or []]
        answered = Counter(m.get("tool_call_id") for m in sent if m["role"] == "tool")
        expect(len(calls) == 1 and answered == Counter(calls),
               f"the model got calls {calls} and results for {dict(answered)}: not one result per call id")
        unknown = sum((m.get("content") or "").count(UNKNOWN) for m in sent)
        expect(unknown == 1, f"the model read {unknown} {UNKNOWN} results")
        runs = query(self.probe, "SELECT count(*) FROM agentic_ai_execution_log WHERE thread_id = %s "
                                 "AND action_type = 'tool_execution'", [thread_id])[0][0]
        expect(runs == 0, f"odoo_write was executed {runs} time(s) after the restart")
        name = query(self.probe, "SELECT name FROM res_partner WHERE id = %s", [partner_id])[0][0]
        expect(name == partner_name, f"the partner was renamed to {name!r}")
        step("'Did it work?': one result per call id reached the model, odoo_write not run again, partner unchanged")


def main() -> int:
    started, check, failure = time.monotonic(), None, None
    try:
        check = Check(sys.argv[1])
        check.run()
    except CheckFailed as found:
        failure = str(found)
    except Exception as error:  # noqa: BLE001 - any error of the set-up fails the check, saying why
        failure = f"{type(error).__name__}: {error}"
    finally:
        if check:
            check.close()
    step(f"{'FAILED: ' + failure if failure else 'passed'} ({time.monotonic() - started:.1f} s)")
    print("0 passed, 1 failed" if failure else "1 passed, 0 failed", flush=True)
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
