"""What the provenance guard (issue 23, engine/guard/provenance.py) adds, in one
run, against the same work without it:

1. Loading a conversation's transcript once per turn, with its provenance
   (every user message tokenised, every result's ids, numbers and names
   collected) against the transcript alone, for conversations of 10, 50
   and 200 earlier calls of ``odoo_search_read`` (20 partners each, with
   their names, e-mails and phones) between user messages.
2. The safety guard's check of a write (``odoo_write`` on a partner, values
   from the user's words) with the provenance of the 200-call conversation
   against the check without it.

Figures are medians of single operations. Run with ``bash bench/run.sh
provenance_overhead`` (uses the ``agentic_test`` database left by ``make
test``); everything is rolled back.
"""
import statistics
import time

from odoo.addons.agentic_ai.engine.guard.provenance import Provenance, field_info_of
from odoo.addons.agentic_ai.engine.guard.touched_models import touched_models
from odoo.addons.agentic_ai.engine.safety import SafetyGuard
from odoo.addons.agentic_ai.engine.turn.run_context import build_run_context
from odoo.addons.agentic_ai.engine.turn.transcript import Transcript
from odoo.addons.agentic_ai.llm import ToolCall

env = env  # provided by odoo-bin shell
REPEATS = 15

admin = env.ref("base.user_admin")
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
partners = env["res.partner"].search([], limit=20)
rows = [{"id": p.id, "name": p.name, "email": p.email or None, "phone": p.phone or None,
         "parent_id": [p.parent_id.id, p.parent_id.display_name] if p.parent_id else None} for p in partners]


def conversation(calls):
    thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": f"bench {calls}"})
    for k in range(calls):
        if k % 5 == 0:
            thread.add_user_message(f"Show me the contacts of page {k // 5} and call Azure Interior at +32 555 01 {k}")
        call = ToolCall(id=f"c{k}", name="odoo_search_read", arguments={
            "model": "res.partner", "domain": [["is_company", "=", True]], "limit": 20, "offset": k})
        thread.add_tool_call(call)
        thread.add_tool_result(f"c{k}", "odoo_search_read", "20 records", data={
            "model": "res.partner", "total": 200, "count": 20, "offset": k, "records": rows})
    return thread


def median_ms(work):
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


context = None
for calls in (10, 50, 200):
    thread = conversation(calls)
    context = build_run_context(agent, thread)
    info = field_info_of(thread.env)

    def with_provenance(thread=thread, context=context, info=info):
        thread.invalidate_recordset()
        Transcript(thread, provenance=Provenance(tools=context.tools, field_info=info))

    def without(thread=thread):
        thread.invalidate_recordset()
        Transcript(thread)

    base, measured = median_ms(without), median_ms(with_provenance)
    print(f"transcript of {calls} calls: {measured:.2f} ms with provenance, {base:.2f} ms without: "
          f"{measured / base:.2f}x (+{measured - base:.2f} ms per turn)")

spec = context.tools["odoo_write"]
params = spec.sanitize({"model": "res.partner", "record_ids": [partners[0].id], "values": {"phone": "+32 555 01 5"}})
guard = SafetyGuard(context, thread.env)
touched = touched_models(thread.env, spec, params)
provenance = Provenance(tools=context.tools, field_info=field_info_of(thread.env))
Transcript(thread, provenance=provenance)
assert not provenance.untrusted_values("odoo_write", params), "the bench's write must be the user's"
base = median_ms(lambda: [guard.check(spec, touched, params=params) for _ in range(100)]) / 100
measured = median_ms(lambda: [guard.check(spec, touched, params=params, provenance=provenance)
                              for _ in range(100)]) / 100
print(f"guard check of a write after 200 calls: {measured * 1000:.1f} us with provenance, {base * 1000:.1f} us "
      f"without: {measured / base:.2f}x (+{(measured - base) * 1000:.1f} us per call)")
env.cr.rollback()
