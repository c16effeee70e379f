"""The tamper-evident execution log (spec 000 §3.7, §7; issue 9, point 7):
rows hash-chained per company after their transaction commits, found out
when changed or deleted through SQL, immutable through the ORM and RPC for
everyone (administrators included), a purge that leaves a checkpoint the
chain goes on from, and tools refused by Odoo logged as warnings.

Concurrency (two runs sealing the same company's chain at once) cannot be
exercised in one test transaction; engine/durable/log_chain.py explains what keeps
the chain linear (advisory lock, READ COMMITTED seal, unique index)."""
import logging

from odoo import SUPERUSER_ID, api, sql_db
from odoo.exceptions import AccessError, UserError
from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException
from odoo.tools import SQL

from ..engine.durable import log_chain
from .common import AgenticCase, AgenticSetupMixin

ADMIN_GROUPS = "base.group_user,base.group_system,agentic_ai.group_agentic_ai_admin"


class ChainMixin:

    def rows(self, count, company=None, **values):
        """``count`` log rows of ``company`` (the current one by default),
        inserted by one ``log_many`` as a run's step does."""
        log = self.env["agentic.ai.execution.log"]
        if company:
            log = log.with_company(company)
        return log.log_many([("tool_execution", None, {"tool_name": f"t{i}", "input_data": {"i": i}, **values})
                             for i in range(count)])

    def seal(self):
        return log_chain.seal(self.env)

    def verify(self, company=None):
        """The one result of ``company`` (the current one by default)."""
        [result] = self.env["agentic.ai.execution.log"].verify_chain(company or self.env.company)
        return result

    def sql(self, query, *params):
        self.env.cr.execute(query, params)
        self.env.invalidate_all()


@tagged("post_install", "-at_install")
class TestAuditChain(ChainMixin, AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.company_b = cls.env["res.company"].create({"name": "Chain B Ltd"})
        cls.Log = cls.env["agentic.ai.execution.log"]

    # ------------------------------------------------------------- the chain
    def test_rows_are_chained_per_company_after_sealing(self):
        rows_a = self.rows(3)
        rows_b = self.rows(2, self.company_b)
        self.assertEqual(rows_a.mapped("chain_seq"), [0, 0, 0], "inserted unsealed")
        self.assertIn(self.env.company.id, self.env.cr.postcommit.data["agentic_ai.log_chain"],
                      "the seal is registered for after the commit")
        self.assertGreaterEqual(self.seal(), 5)
        seqs_a, seqs_b = rows_a.sorted("id").mapped("chain_seq"), rows_b.sorted("id").mapped("chain_seq")
        self.assertEqual(seqs_a, list(range(seqs_a[0], seqs_a[0] + 3)), "consecutive in id order")
        self.assertEqual(seqs_b, [1, 2], "company B has its own chain")
        self.assertTrue(all(len(h) == 64 for h in (rows_a | rows_b).mapped("chain_hash")))
        for company in (self.env.company, self.company_b):
            result = self.verify(company)
            self.assertTrue(result["ok"], result)
            self.assertEqual(result["unsealed"], 0)
        self.assertEqual(self.verify(self.company_b)["rows_checked"], 2)
        self.assertEqual(self.verify(self.company_b)["head"]["hash"], rows_b.sorted("id")[-1].chain_hash)
        more = self.rows(1, self.company_b)
        self.seal()
        self.assertEqual(more.chain_seq, 3, "the next seal goes on from the head")
        self.assertTrue(self.verify(self.company_b)["ok"])

    def test_post_commit_hook_seals_in_its_own_transaction(self):
        rows = self.rows(2, self.company_b)
        with self.enter_registry_test_mode():  # the hook's new cursor then shares the test's transaction
            self.env.flush_all()
            self.env.cr.postcommit.run()
        self.env.invalidate_all()
        self.assertEqual(rows.sorted("id").mapped("chain_seq"), [1, 2])
        self.assertNotIn("agentic_ai.log_chain", self.env.cr.postcommit.data, "one hook per transaction, done")

    def test_unsealed_rows_are_counted_not_trusted(self):
        self.rows(2, self.company_b)
        result = self.verify(self.company_b)
        self.assertEqual((result["ok"], result["rows_checked"], result["unsealed"]), (True, 0, 2))

    def test_a_row_unchained_by_sql_is_reported_at_once(self):
        """Clearing the newest row's chain fields (so that the next seal
        chains forged content) leaves the chain short of its recorded head:
        reported at once, not only once the row is old (issue 23 P-8)."""
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET chain_seq = NULL, chain_hash = NULL, output_data = 'x' "
                 "WHERE id = %s", rows[2].id)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"])
        self.assertEqual(result["first_broken"]["seq"], 3)
        self.assertIn("sealed up to number 3 but ends at 2", result["first_broken"]["reason"])

    def test_a_row_left_unsealed_is_reported_once_stale(self):
        """A row whose seal never ran (a crash between the commits) is
        chained by the next seal; verification reports it once it is old."""
        rows = self.rows(1, self.company_b)
        self.sql("UPDATE agentic_ai_execution_log SET create_date = create_date - interval '1 hour' WHERE id = %s",
                 rows.id)
        result = self.verify(self.company_b)
        self.assertEqual(result["first_broken"]["id"], rows.id)
        self.assertIn("still not chained", result["first_broken"]["reason"])
        self.seal()
        self.assertTrue(self.verify(self.company_b)["ok"])

    def test_sql_update_of_content_is_found_at_that_row(self):
        rows = self.rows(4, self.company_b).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET output_data = '{\"forged\": true}' WHERE id = %s", rows[2].id)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"])
        self.assertEqual((result["first_broken"]["id"], result["first_broken"]["seq"]), (rows[2].id, 3))
        self.assertIn("content changed", result["first_broken"]["reason"])

    def test_sql_update_of_a_hash_is_found(self):
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET chain_hash = %s WHERE id = %s", "f" * 64, rows[1].id)
        self.assertEqual(self.verify(self.company_b)["first_broken"]["id"], rows[1].id)

    def test_sql_delete_of_a_middle_row_is_found(self):
        rows = self.rows(5, self.company_b).sorted("id")
        self.seal()
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id = %s", rows[2].id)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"])
        self.assertEqual(result["first_broken"]["id"], rows[3].id)
        self.assertIn("rows missing: chain_seq 3 to 3", result["first_broken"]["reason"])

    def test_sql_delete_of_the_first_row_is_found(self):
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id = %s", rows[0].id)
        result = self.verify(self.company_b)
        self.assertEqual(result["first_broken"]["id"], rows[1].id)
        self.assertIn("chain link broken", result["first_broken"]["reason"])

    def test_deleting_a_thread_does_not_break_the_chain(self):
        thread = self.new_thread()
        rows = self.env["agentic.ai.execution.log"].log_many(
            [("llm_call", thread, {"input_tokens": 5}), ("tool_execution", thread, {"tool_name": "x"})])
        self.rows(1)
        self.seal()
        self.assertEqual(rows.mapped("logged_thread_id"), [thread.id] * 2)
        thread.unlink()
        self.env.invalidate_all()
        self.assertFalse(rows.mapped("thread_id"), "ondelete set null")
        self.assertTrue(self.verify()["ok"], self.verify())

    def test_sql_change_of_a_reference_is_found(self):
        thread = self.new_thread()
        other = self.new_thread()
        rows = self.env["agentic.ai.execution.log"].log_many(
            [("llm_call", thread, {}), ("llm_call", thread, {}), ("llm_call", thread, {})]).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET thread_id = NULL WHERE id = %s", rows[1].id)
        self.sql("UPDATE agentic_ai_execution_log SET thread_id = %s WHERE id = %s", other.id, rows[2].id)
        result = self.verify()
        self.assertEqual(result["first_broken"]["id"], rows[1].id, "cleared while the thread still exists")
        self.assertIn("thread_id cleared", result["first_broken"]["reason"])

    def test_every_stored_field_is_hashed_or_a_logged_reference(self):
        """A new column must be added to the chain on purpose (a new chain
        version), not left out by accident."""
        stored = {name for name, field in self.Log._fields.items() if field.store}
        self.assertEqual(stored - set(log_chain.HASHED_COLUMNS_V2) - set(log_chain.REFERENCES),
                         {"chain_seq", "chain_hash"})

    def test_usage_figures_are_chained_and_rows_of_version_1_still_verify(self):
        """Chain version 2 (issue 14) covers the usage split and its
        estimate flag; a row logged before (no chain_version) keeps its
        version-1 digest, and turning a row into one is found."""
        usage = {"input_tokens": 2000, "cache_read_tokens": 1500, "output_tokens": 500, "reasoning_tokens": 300,
                 "usage_estimated": False, "cost": 0.00575}
        rows = self.Log.with_company(self.company_b).log_many(
            [("llm_call", None, usage) for _i in range(4)]).sorted("id")
        self.sql("UPDATE agentic_ai_execution_log SET chain_version = NULL WHERE id = %s", rows[0].id)  # as before
        self.seal()
        self.assertEqual(rows.mapped("chain_version"), [0, 2, 2, 2])
        self.assertEqual(self.verify(self.company_b)["rows_checked"], 4)
        self.assertTrue(self.verify(self.company_b)["ok"])
        self.sql("UPDATE agentic_ai_execution_log SET cache_read_tokens = 0, usage_estimated = TRUE WHERE id = %s",
                 rows[2].id)
        self.assertEqual(self.verify(self.company_b)["first_broken"]["id"], rows[2].id)
        self.sql("UPDATE agentic_ai_execution_log SET cache_read_tokens = 1500, usage_estimated = FALSE, "
                 "chain_version = NULL WHERE id = %s", rows[2].id)
        self.assertEqual(self.verify(self.company_b)["first_broken"]["id"], rows[2].id, "version changed")
        self.sql("UPDATE agentic_ai_execution_log SET chain_version = 2 WHERE id = %s", rows[2].id)
        self.assertTrue(self.verify(self.company_b)["ok"], "restored, the chain verifies again")

    # ------------------------------------------------------------- the purge
    # ------------------------------------------------------------------ P-8
    def test_P_8_clearing_the_newest_rows_chain_fields_never_reseals_edited_content(self):
        """Issue 23 P-8: the attacker clears the chain fields of the two
        newest rows and edits one; the next seal refuses to chain over the
        cut, and verification reports it with the rows left below the head."""
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET chain_seq = NULL, chain_hash = NULL WHERE id IN %s",
                 tuple(rows[1:].ids))
        self.sql("UPDATE agentic_ai_execution_log SET output_data = '\"forged\"' WHERE id = %s", rows[2].id)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"])
        self.assertIn("sealed up to number 3 but ends at 1", result["first_broken"]["reason"])
        self.assertIn("2 rows are unsealed below that head", result["first_broken"]["reason"])
        with self.assertLogs("odoo.addons.agentic_ai.engine.durable.log_chain", "WARNING"):
            self.seal()
        self.assertEqual(rows.mapped("chain_seq"), [1, 0, 0], "nothing is chained again over the cut")
        self.rows(1, self.company_b)
        with self.assertLogs("odoo.addons.agentic_ai.engine.durable.log_chain", "WARNING"):
            self.seal()
        self.assertFalse(self.verify(self.company_b)["ok"], "later rows do not hide the cut either")

    def test_P_8_deleting_the_newest_rows_is_found(self):
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id = %s", rows[2].id)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"])
        self.assertIn("ends at 2", result["first_broken"]["reason"])

    def test_P_8_purge_over_a_broken_segment_keeps_the_break_in_its_checkpoint(self):
        rows = self.rows(4, self.company_b).sorted("id")
        self.sql("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' WHERE id IN %s",
                 tuple(rows[:3].ids))
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET output_data = '\"forged\"' WHERE id = %s", rows[1].id)
        with self.assertLogs("odoo.addons.agentic_ai.models.agent_execution_log", "WARNING"):
            self.Log._cron_purge_old_logs(90)
        self.assertEqual(rows.exists(), rows[3:], "the old segment is purged")
        checkpoint = self.env["agentic.ai.execution.log.checkpoint"].search([("company_id", "=", self.company_b.id)])
        self.assertEqual(checkpoint.broken_seq, 2)
        self.assertIn("content changed", checkpoint.broken_reason)
        result = self.verify(self.company_b)
        self.assertFalse(result["ok"], "verification never turns green over a purged break")
        self.assertIn("purged while broken", result["first_broken"]["reason"])

    def test_P_8_a_chain_rewritten_inside_the_database_is_found_against_a_head_kept_outside(self):
        """An attacker who rewrites the last row, its hash and the recorded
        head passes the chain's own checks; the head kept outside does not."""
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        kept = self.verify(self.company_b)["head"]
        expected = {self.company_b.id: (kept["seq"], kept["hash"])}
        self.sql("UPDATE agentic_ai_execution_log SET output_data = '\"forged\"' WHERE id = %s", rows[2].id)
        self.env.cr.execute(SQL("SELECT %s FROM agentic_ai_execution_log WHERE id = %s",
                                log_chain.content_digest_sql(), rows[2].id))
        digest = self.env.cr.fetchone()[0]
        forged = log_chain.link_hash(rows[1].chain_hash, 3, digest)
        self.sql("UPDATE agentic_ai_execution_log SET chain_hash = %s WHERE id = %s", forged, rows[2].id)
        self.sql("UPDATE agentic_ai_execution_log_head SET last_hash = %s WHERE company_id = %s", forged,
                 self.company_b.id)
        self.assertTrue(self.verify(self.company_b)["ok"], "rewritten whole, the chain checks out inside")
        [result] = self.Log.verify_chain(self.company_b, expected_heads=expected)
        self.assertFalse(result["ok"])
        self.assertIn("no longer has the hash kept outside", result["first_broken"]["reason"])
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id = %s", rows[2].id)
        self.sql("UPDATE agentic_ai_execution_log_head SET last_seq = 2, last_hash = %s WHERE company_id = %s",
                 rows[1].chain_hash, self.company_b.id)
        [result] = self.Log.verify_chain(self.company_b, expected_heads=expected)
        self.assertIn("before the head kept outside", result["first_broken"]["reason"])

    def test_P_8_a_kept_head_behind_a_forged_checkpoint_or_a_wiped_company_is_found(self):
        """The second review: rows deleted up to a forged checkpoint past
        the kept head, and a company whose every row and checkpoint was
        deleted, no longer pass."""
        rows = self.rows(3, self.company_b).sorted("id")
        self.seal()
        kept = self.verify(self.company_b)["head"]
        second = rows[1].chain_hash
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id IN %s", tuple(rows[:2].ids))
        self.sql("INSERT INTO agentic_ai_execution_log_checkpoint (company_id, last_seq, last_hash, rows_purged, "
                 "create_date) VALUES (%s, 2, %s, 2, now())", self.company_b.id, second)
        [result] = self.Log.verify_chain(self.company_b, expected_heads={self.company_b.id: (1, "0" * 64)})
        self.assertIn("cannot be checked", result["first_broken"]["reason"])
        self.sql("DELETE FROM agentic_ai_execution_log WHERE chain_company_id = %s", self.company_b.id)
        self.sql("DELETE FROM agentic_ai_execution_log_checkpoint WHERE company_id = %s", self.company_b.id)
        results = {r["company_id"]: r for r in self.Log.verify_chain()}
        self.assertFalse(results[self.company_b.id]["ok"], "a company found in the head table alone is verified")
        self.assertIn("sealed up to number 3 but ends at 0", results[self.company_b.id]["first_broken"]["reason"])
        self.assertEqual(kept["seq"], 3)

    def test_purge_leaves_a_checkpoint_and_the_chain_verifies(self):
        rows = self.rows(6, self.company_b).sorted("id")
        self.sql("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' WHERE id IN %s",
                 tuple(rows[:4].ids))
        self.seal()
        fourth_hash = rows[3].chain_hash
        self.assertGreaterEqual(self.Log._cron_purge_old_logs(90), 4)
        self.assertEqual(rows.exists(), rows[4:])
        checkpoint = self.env["agentic.ai.execution.log.checkpoint"].search([("company_id", "=", self.company_b.id)])
        self.assertEqual((checkpoint.last_seq, checkpoint.last_hash, checkpoint.rows_purged), (4, fourth_hash, 4))
        result = self.verify(self.company_b)
        self.assertTrue(result["ok"], result)
        self.assertEqual((result["checkpoint_seq"], result["rows_checked"]), (4, 2))
        later = self.rows(2, self.company_b).sorted("id")
        self.seal()
        self.assertEqual(later.mapped("chain_seq"), [7, 8])
        self.sql("DELETE FROM agentic_ai_execution_log WHERE id = %s", rows[5].id)
        result = self.verify(self.company_b)
        self.assertEqual(result["first_broken"]["id"], later[0].id, "a hole after the checkpoint is still found")

    def test_purge_cuts_the_chain_before_its_first_recent_row(self):
        rows = self.rows(3, self.company_b).sorted("id")
        self.sql("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' WHERE id IN %s",
                 (rows[0].id, rows[2].id))
        self.seal()
        self.Log._cron_purge_old_logs(90)
        self.assertEqual(rows.exists(), rows[1:], "row 3 is old but stays: purging it would hole the chain")
        self.assertTrue(self.verify(self.company_b)["ok"])

    def test_checkpoints_are_immutable(self):
        rows = self.rows(1, self.company_b)
        self.sql("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' WHERE id = %s",
                 rows.id)
        self.Log._cron_purge_old_logs(90)
        checkpoint = self.env["agentic.ai.execution.log.checkpoint"].search([("company_id", "=", self.company_b.id)])
        Checkpoint = self.env["agentic.ai.execution.log.checkpoint"]
        self.assertTrue(checkpoint)
        with self.assertRaises(UserError):
            checkpoint.write({"last_seq": 0})
        with self.assertRaises(UserError):
            checkpoint.unlink()
        with self.assertRaises(UserError):
            Checkpoint.create({"company_id": self.company_b.id, "last_seq": 99, "last_hash": "x"})
        with self.assertRaises(AccessError):
            Checkpoint.with_user(self.ai_admin).create({"company_id": self.company_b.id, "last_seq": 9,
                                                        "last_hash": "x"})
        self.assertEqual(checkpoint.with_user(self.ai_admin).read(["last_seq"])[0]["last_seq"], 1)
        with self.assertRaises(AccessError):
            checkpoint.with_user(self.plain).read(["last_seq"])

    # ------------------------------------------------ immutability, the ORM
    def test_admins_cannot_write_create_or_delete_rows(self):
        row = self.rows(1)
        self.seal()
        admin = self.env.ref("base.user_admin")
        settings_admin = new_test_user(self.env, "chain_admin", groups=ADMIN_GROUPS)
        for user in (admin, settings_admin):
            as_user = row.with_user(user)
            with self.assertRaises(UserError, msg=user.login):
                as_user.write({"output_data": "forged"})
            with self.assertRaises(AccessError, msg=user.login):
                as_user.unlink()
            with self.assertRaises(AccessError, msg=user.login):
                as_user.with_context(agentic_ai_log_purge=True).unlink()
            with self.assertRaises(AccessError, msg=user.login):
                self.Log.with_user(user).create({"action_type": "error", "chain_seq": 1, "chain_hash": "0" * 64})
        for forbidden in (lambda: row.sudo().write({"chain_hash": "0" * 64}),
                          lambda: self.Log.sudo().create({"action_type": "error"})):
            with self.assertRaises(UserError):
                forbidden()
        self.env.invalidate_all()
        self.assertTrue(row.exists())
        self.assertEqual(row.output_data, False)
        self.assertTrue(self.verify()["ok"])

    def test_verify_is_for_ai_admins(self):
        with self.assertRaises(AccessError):
            self.Log.with_user(self.operator).verify_chain()
        action = self.Log.with_user(self.ai_admin).action_verify_chain()
        self.assertEqual(action["tag"], "display_notification")
        self.assertEqual(action["params"]["type"], "success", action)

    def test_verify_button_names_the_first_broken_row(self):
        rows = self.rows(2, self.company_b).sorted("id")
        self.seal()
        self.sql("UPDATE agentic_ai_execution_log SET tool_name = 'forged' WHERE id = %s", rows[0].id)
        action = self.Log.with_user(self.ai_admin).action_verify_chain()
        self.assertEqual(action["params"]["type"], "danger")
        self.assertIn(f"row {rows[0].id} (chain number 1)", action["params"]["message"])

    # ------------------------------------------------------------ levels
    def test_tool_refused_by_odoo_is_a_warning_without_traceback(self):
        basic = new_test_user(self.env, "chain_basic", groups="base.group_user")
        with self.assertLogs("odoo.addons.agentic_ai.engine.executor", logging.WARNING) as logs:
            result = self.execute("odoo_search_read", {"model": "sale.order"}, user=basic)
        self.assertFalse(result.success)
        [record] = logs.records
        self.assertEqual(record.levelno, logging.WARNING)
        self.assertIsNone(record.exc_info, "no traceback for Odoo's own refusal")
        self.assertIn("odoo_search_read", record.getMessage())
        self.assertIn("sale.order", record.getMessage())
        self.assertNotIn("\n", record.getMessage())
        row = self.Log.search([("tool_name", "=", "odoo_search_read"), ("user_id", "=", basic.id)])
        self.assertEqual((row.level, row.success), ("warning", False))

    def test_a_tool_that_breaks_is_an_error_with_its_traceback(self):
        tool = self.env["agentic.ai.tool"].create({"name": "broken_tool", "description": "x",
                                                   "tool_type": "python_code", "python_code": "result = 1 / 0"})
        self.agent.tool_ids = [(4, tool.id)]
        with self.assertLogs("odoo.addons.agentic_ai.engine.executor", logging.ERROR) as logs:
            result = self.execute("broken_tool", {}, user=self.env.ref("base.user_admin"))
        self.assertFalse(result.success)
        self.assertIn("ZeroDivisionError", result.error)
        self.assertIsNotNone(logs.records[0].exc_info, "a tool that breaks keeps its traceback")
        row = self.Log.search([("tool_name", "=", "broken_tool")])
        self.assertEqual((row.level, row.success), ("error", False))

    def test_levels_of_success_and_of_errors_logged_outside_tools(self):
        self.assertEqual(self.rows(1).level, "info")
        self.assertEqual(self.Log.log("error", success=False, error_message="x").level, "error")
        self.assertEqual(self.Log.log("tool_execution", success=False, level="warning").level, "warning")


    def real_cursor(self):
        """A cursor on a connection of its own (not the test's transaction)."""
        cr = sql_db.db_connect(self.env.cr.dbname).cursor()
        self.addCleanup(cr.close)
        return cr

    def test_the_queue_cron_seals_rows_left_unsealed(self):
        """Rows a sealer could not chain (it failed, or its process stopped
        first) are chained by the queue's cron once a minute old; newer
        ones are left to their run's own seal."""
        old, new = self.rows(2, self.company_b), self.rows(1, self.company_b)
        self.env.cr.execute("UPDATE agentic_ai_execution_log SET create_date = create_date - interval '2 minutes' "
                            "WHERE id = ANY(%s)", [old.ids])
        self.registry_enter_test_mode()  # the seal's own cursor wraps this test's transaction, which holds the rows
        self.env["agentic.ai.thread"]._queue_seal_left()
        (old | new).invalidate_recordset()
        self.assertTrue(all(old.mapped("chain_seq")), "the rows left a minute ago are chained")
        self.assertEqual(self.verify(self.company_b)["unsealed"], 0 if new.chain_seq else 1)

    def test_a_seal_leaves_a_company_being_sealed_to_the_process_sealer(self):
        """While another transaction holds a company's chain lock (it is
        sealing), a run's seal does not wait for it with its connection
        held: the company is left to this process's sealer, which waits for
        the lock on a connection of its own and seals once it is free
        (issue 26 point 5: runs ending together queued for one lock)."""
        holder, other = self.real_cursor(), self.real_cursor()
        company = self.company_b.id
        self.assertTrue(log_chain.try_lock_company(holder, company))
        other.execute("SET LOCAL lock_timeout = '5s'")  # a seal that waited would fail here, not hang the suite
        busy = set()
        self.assertEqual(log_chain.seal(api.Environment(other, SUPERUSER_ID, {}), [company], busy=busy), 0)
        self.assertEqual(busy, {company}, "left to the sealer, not waited for")
        other.rollback()

        holder.rollback()  # the other seal ends: the lock is taken again, as the process's sealer then takes it
        self.assertTrue(log_chain.try_lock_company(other, company))
        other.rollback()
        # The sealer's thread itself needs a server (a test's registry gives every thread the test's cursor):
        # dev/connections_check.py (case L-1) has 200 runs end together and every row of theirs chained.


@tagged("post_install", "-at_install")
class TestAuditChainRpc(ChainMixin, AgenticSetupMixin, HttpCase):
    """The log through JSON-RPC as the administrator."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()

    def call(self, method, *args):
        return self.make_jsonrpc_request("/web/dataset/call_kw", {
            "model": "agentic.ai.execution.log", "method": method, "args": list(args), "kwargs": {}})

    def test_admin_cannot_write_create_or_delete_over_rpc(self):
        row = self.rows(1)
        self.seal()
        before = row.read(["output_data", "chain_hash", "chain_seq"])
        self.authenticate("admin", "admin")
        self.assertEqual(self.call("read", [row.id], ["tool_name"])[0]["tool_name"], "t0", "the admin reads it")
        for method, args in (("write", ([row.id], {"output_data": "forged", "chain_hash": "0" * 64})),
                             ("unlink", ([row.id],)),
                             ("create", ({"action_type": "error", "chain_seq": 1, "chain_hash": "0" * 64},)),
                             ("_cron_purge_old_logs", (0,))):
            with self.assertRaises(JsonRpcException, msg=method):
                self.call(method, *args)
        self.env.invalidate_all()
        self.assertEqual(row.read(["output_data", "chain_hash", "chain_seq"]), before)
        self.assertTrue(self.verify()["ok"])
        result = self.call("verify_chain")
        self.assertTrue(all(company["ok"] for company in result), result)
