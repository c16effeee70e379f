"""Cost of one rate-limit check (spec 000 §7.5) on a large execution log:
``_rate_limit_usage``, the query the runtime runs before each LLM call
(requests of a user in the last minute and hour, cost of an agent and of a
company over 24 hours).

The log is filled with SQL (generate_series) to 10,000 rows, then to
1,000,000, LLM calls for the most part, spread over 90 days (the purge
cron's default age) between 20 users, 10 agents and the database's
companies. The check is timed at 10k rows, at 1M rows with the partial
indexes (``_llm_call_*_idx``), and at 1M rows with those three indexes
dropped (the log's one-column indexes remain: the log as it was before
them). Figures are medians of single checks.

Caveat: the rows are never committed, so PostgreSQL cannot mark them
all-visible and its index-only scans still visit the table: a committed,
vacuumed log answers the cost sums faster than measured here.

Run with ``bash bench/run.sh rate_limit_check`` (uses the ``agentic_test``
database left by ``make test``, or ``$AGENTIC_AI_TEST_DB``); everything
is rolled back.
"""
import statistics
import time

from odoo.tools import SQL

env = env  # provided by odoo-bin shell
CHECKS = 200
TOTAL, SMALL = 1_000_000, 10_000
INDEXES = ("_llm_call_user_idx", "_llm_call_agent_idx", "_llm_call_company_idx")

Log = env["agentic.ai.execution.log"]
agent = env.ref("agentic_ai.agent_general_assistant")
agents = agent.browse([agent.id] + [agent.copy({"code": f"bench_rate_{n}"}).id for n in range(9)])
users = env["res.users"].create([{"name": f"Bench Rate {n}", "login": f"bench_rate_{n}"} for n in range(20)])
companies = env["res.company"].search([])
user, company = users[0], env.company


def fill(rows: int) -> None:
    """Add ``rows`` rows: 95% LLM calls, the rest tool calls, each at a
    random moment of the last 90 days, for users, agents and companies in
    turn."""
    env.cr.execute(SQL("""
        INSERT INTO agentic_ai_execution_log (action_type, user_id, agent_id, company_id, cost, success, create_date)
        SELECT CASE WHEN n %% 19 = 0 THEN 'tool_execution' ELSE 'llm_call' END,
               (%s::int[])[1 + n %% %s], (%s::int[])[1 + n %% %s], (%s::int[])[1 + n %% %s],
               0.0001 * (1 + n %% 7), true, now() AT TIME ZONE 'UTC' - random() * interval '90 days'
          FROM generate_series(1, %s) AS n""",
        users.ids, len(users), agents.ids, len(agents), companies.ids, len(companies), rows))
    env.cr.execute("ANALYZE agentic_ai_execution_log")


def check_once() -> float:
    """ms of one check (the runtime's call, its windows ending now)."""
    started = time.perf_counter()
    Log._rate_limit_usage(user.id, agent.id, company.id, env.cr.now())
    return (time.perf_counter() - started) * 1000


def timed(count=CHECKS) -> float:
    """Median ms of ``count`` checks."""
    return statistics.median(check_once() for _ in range(count))


def plan() -> str:
    """The scan of each of the four parts of the query, as PostgreSQL plans it."""
    env.cr.execute(SQL("EXPLAIN SELECT count(*) FROM agentic_ai_execution_log WHERE action_type = 'llm_call' "
                       "AND company_id = %s AND create_date > now() AT TIME ZONE 'UTC' - interval '24 hours'",
                       company.id))
    return " / ".join(line.strip() for (line,) in env.cr.fetchall() if "Scan" in line)


def drop_indexes() -> None:
    for name in INDEXES:
        env.cr.execute(SQL("DROP INDEX %s", SQL.identifier(Log._table + "_" + name.strip("_"))))


fill(SMALL)
for _ in range(20):  # warm-up
    check_once()
small = timed()
fill(TOTAL - SMALL)
usage = Log._rate_limit_usage(user.id, agent.id, company.id, env.cr.now())
with_indexes = timed()
plan_with = plan()
env.cr.execute("SAVEPOINT bench_rate_indexes")
drop_indexes()
env.cr.execute("ANALYZE agentic_ai_execution_log")
without = timed()
plan_without = plan()
# A second, shorter round of both, so that a slow moment of the shared
# machine during one of them shows as a disagreement.
env.cr.execute("ROLLBACK TO SAVEPOINT bench_rate_indexes")
with_again = timed(50)
drop_indexes()
without_again = timed(50)

print(f"rate-limit check, median of {CHECKS} checks (windows: user 1 min + 1 h, agent 24 h, company 24 h)")
print(f"  rows in the window at 1M: {', '.join(f'{k} {v.amount:g}' for k, v in usage.items())}")
print(f"  {SMALL:>9,} rows, with the indexes    : {small:.3f} ms")
print(f"  {TOTAL:>9,} rows, with the indexes    : {with_indexes:.3f} ms  ({with_indexes / small:.2f}x the 10k figure)"
      f"  again {with_again:.3f} ms")
print(f"  {TOTAL:>9,} rows, without them        : {without:.3f} ms  ({without / with_indexes:.1f}x slower than "
      f"with them)  again {without_again:.3f} ms")
print(f"  company sum, with the indexes : {plan_with}")
print(f"  company sum, without them     : {plan_without}")
env.cr.rollback()
