"""Knowledge sources (spec 000 §3.8, §9; issue 13): indexing through the
Knowledge Indexing cron, batched embeddings from the scripted LLM server,
search, record and URL sources, BR-11 and BR-14 (a)(b)."""
import base64
import math

from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from .common import AgenticCase

CRON = "agentic_ai.ir_cron_knowledge_index"


def section_text(count):
    """``count`` paragraphs, each with two words of its own."""
    return "\n\n".join(f"Section {k} covers topic{k} and keyword{k} in detail." for k in range(1, count + 1))


def pdf_document(page_streams, with_image=False):
    """A minimal valid PDF whose pages draw ``page_streams`` (bytes), with
    Helvetica as /F1 and, when ``with_image``, a grey image as /Im1."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               4: (b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
                   b"/BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream")}
    resources = b"<< /Font << /F1 3 0 R >>" + (b" /XObject << /Im1 4 0 R >>" if with_image else b"") + b" >>"
    kids = []
    for index, stream in enumerate(page_streams):
        page_id, content_id = 5 + 2 * index, 6 + 2 * index
        kids.append(b"%d 0 R" % page_id)
        objects[page_id] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources " + resources
                            + b" /Contents %d 0 R >>" % content_id)
        objects[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    objects[2] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(kids)
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    return bytes(out)


@tagged("post_install", "-at_install", "agentic_ai_numpy")
class TestKnowledgeSources(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.Source = cls.env["agentic.ai.knowledge.source"]
        cls.cron = cls.env.ref(CRON)

    def setUp(self):
        super().setUp()
        dim = self.scenario.embedding_dim
        self.addCleanup(setattr, self.scenario, "embedding_dim", dim)
        self.addCleanup(setattr, self.scenario, "embeddings_error", None)
        self.scenario.embedding_dim = 1536
        self.scenario.requests.clear()

    # ------------------------------------------------------------- helpers
    def text_source(self, text, **values):
        return self.Source.with_user(self.operator).create(dict({
            "name": "Handbook", "source_type": "text", "raw_text": text, "chunk_size": 20, "chunk_overlap": 0,
            "agent_ids": [(6, 0, self.agent.ids)]}, **values)).sudo()

    def index(self, source):
        """Queue ``source`` as the operator and run the indexing cron."""
        source.with_user(self.operator).action_index()
        self.assertEqual(source.state, "queued", "action_index only queues: nothing is indexed in the request")
        self.run_cron()
        source.invalidate_recordset()
        return source

    def run_cron(self):
        self.run_knowledge_cron()
        self.assertEqual(self.cron.failure_count, 0, "the indexing never fails the cron")

    def embedding_batches(self):
        """The number of texts of each embedding request, in order."""
        sizes = []
        for request in self.scenario.requests:
            if request["path"].split("?")[0].endswith("/embeddings"):
                texts = request["body"].get("input")
                sizes.append(1 if isinstance(texts, str) else len(texts))
        return sizes

    def active_chunks(self, source):
        return source.chunk_ids.filtered(lambda c: c.generation == source.generation)

    # ---------------------------------------------------------------- tests
    def test_text_source_indexed_by_the_cron_in_batches_of_20(self):
        source = self.text_source(section_text(45))
        source.with_user(self.operator).action_index()
        self.assertEqual((source.state, source.progress, source.chunk_count), ("queued", 0.0, 0))
        self.assertFalse(self.embedding_batches(), "no embedding call inside the web request")
        self.assertTrue(self.env["ir.cron.trigger"].search([("cron_id", "=", self.cron.id)]),
                        "action_index wakes the indexing cron")
        self.run_cron()
        self.assertEqual((source.state, source.progress, source.error), ("indexed", 100.0, False))
        chunks = self.active_chunks(source)
        self.assertEqual(len(chunks), source.chunk_count)
        self.assertGreater(source.chunk_count, 40)
        batches = self.embedding_batches()
        self.assertEqual(batches, [20] * (source.chunk_count // 20) + ([source.chunk_count % 20] if
                                                                         source.chunk_count % 20 else []),
                         "embeddings are requested in batches of 20 (§9.1), every chunk once")
        self.assertEqual(set(chunks.mapped("embedding_model")), {"scripted-model"})
        self.assertEqual(set(chunks.mapped("embedding_dimension")), {1536})
        self.assertEqual((source.embedding_model, source.embedding_dimension), ("scripted-model", 1536))
        self.assertTrue(all(0 < c.token_count <= 20 for c in chunks), "every chunk within the chunk size")
        self.assertTrue(source.last_indexed)

    def test_search_similar_returns_the_right_chunk_first(self):
        source = self.index(self.text_source(section_text(30)))
        results = source.with_user(self.plain).search_similar("topic17 keyword17", limit=3)
        self.assertTrue(results, "an indexed source answers")
        best = results[0]
        self.assertIn("topic17 and keyword17", best["content"])
        self.assertEqual((best["source_id"], best["source"], best["method"]), (source.id, "Handbook", "vector"))
        self.assertTrue(all(math.isfinite(r["score"]) and -1.0 <= r["score"] <= 1.0 for r in results))
        self.assertLessEqual({"chunk_id", "content", "source_id", "source", "score"}, set(best))

    def test_reindex_replaces_the_old_chunks_only_once_complete(self):
        source = self.index(self.text_source(section_text(5)))
        first = source.chunk_ids
        source.raw_text = section_text(8)
        self.index(source)
        self.assertFalse(first.exists(), "the previous index is gone once the new one is complete")
        self.assertEqual(len(source.chunk_ids), source.chunk_count)
        self.assertIn("topic8", " ".join(source.chunk_ids.mapped("content")))

    def test_embedding_failure_marks_the_source_failed_with_the_reason(self):
        self.scenario.embeddings_error = (400, "model embed-x does not exist")
        source = self.index(self.text_source(section_text(3)))
        self.assertEqual(source.state, "failed")
        self.assertIn("does not exist", source.error)
        self.assertFalse(source.chunk_ids, "an unfinished index leaves no chunk behind")

    def test_odoo_model_source_renders_records_as_name_and_field_lines(self):
        partners = self.env["res.partner"].create([
            {"name": "KnowTest Alpha", "email": "alpha@example.com", "city": "Leuven"},
            {"name": "KnowTest Beta", "city": "Namur"},
        ])
        fields_ = self.env["ir.model.fields"].search(
            [("model", "=", "res.partner"), ("name", "in", ("email", "city"))])
        source = self.Source.with_user(self.operator).create({
            "name": "Partners", "source_type": "odoo_model",
            "model_id": self.env["ir.model"]._get_id("res.partner"),
            "domain": "[('name', 'ilike', 'KnowTest')]", "field_ids": [(6, 0, fields_.ids)],
            "agent_ids": [(6, 0, self.agent.ids)]})
        blocks = {block.split("\n")[0]: set(block.split("\n")[1:]) for block in source._extract_text().split("\n\n")}
        self.assertEqual(blocks, {"KnowTest Alpha": {"City: Leuven", "Email: alpha@example.com"},
                                  "KnowTest Beta": {"City: Namur"}},
                         "each record: its name, then a line per non-empty field")
        source = self.index(source.sudo())
        self.assertEqual((source.state, source.index_user_id), ("indexed", self.operator),
                         "records are read as the user who asked for the indexing")
        self.assertIn("KnowTest Beta", " ".join(source.chunk_ids.mapped("content")))
        partners.write({"active": False})
        self.assertEqual(source._extract_text(), "", "archived records are not rendered")

    def test_url_source_refused_for_non_operators(self):
        ai_user = new_test_user(self.env, "ai_knowledge_user", groups="base.group_user")
        with self.assertRaises(AccessError):
            self.Source.with_user(ai_user).create({"name": "Web", "source_type": "url",
                                                   "url": "https://example.com/"})
        source = self.Source.with_user(self.operator).create({"name": "Web", "source_type": "url",
                                                              "url": "https://example.com/"})
        self.assertEqual(source.url, "https://example.com/")
        with self.assertRaises(AccessError):
            source.with_user(ai_user).write({"url": "https://example.org/"})
        self.assertEqual(source.with_user(ai_user).read(["name"])[0]["name"], "Web",
                         "AI users read the sources of their company")
        with self.assertRaises(AccessError):
            source.with_user(ai_user).action_index()

    def test_BR_14_a_scanned_pdf_ends_in_no_extractable_text(self):
        scan = pdf_document([b"q 500 0 0 700 50 50 cm /Im1 Do Q"] * 3, with_image=True)
        self.check_no_text(scan, "scan.pdf")

    def test_BR_14_b_pdf_of_form_feeds_ends_in_no_extractable_text(self):
        feeds = pdf_document([b"BT /F1 12 Tf 72 720 Td (\\f\\f\\f) Tj ET"])
        self.check_no_text(feeds, "feeds.pdf")

    def check_no_text(self, data, name):
        source = self.Source.with_user(self.operator).create({
            "name": name, "source_type": "file", "file": base64.b64encode(data), "file_name": name,
            "agent_ids": [(6, 0, self.agent.ids)]}).sudo()
        self.index(source)
        self.assertEqual((source.state, source.chunk_count, len(source.chunk_ids)), ("indexed", 0, 0))
        self.assertIn("no extractable text", source.warning or "", "a visible warning on the form")
        self.assertEqual(self.embedding_batches(), [], "no embedding call for a document without text")

    def test_BR_11_model_switch(self):
        self.provider.embedding_model = "embed-1536"
        source = self.index(self.text_source(section_text(25)))
        self.assertEqual((source.embedding_model, source.embedding_dimension), ("embed-1536", 1536))
        old_chunks = self.active_chunks(source)

        # The administrator switches to a 768-dimension model and a question comes in.
        self.scenario.embedding_dim = 768
        self.provider.embedding_model = "embed-768"
        self.assertTrue(source.needs_reindex, "changing the model marks the sources for re-indexing")
        self.scenario.requests.clear()
        results = source.with_user(self.plain).search_similar("topic9 keyword9")
        self.assertTrue(results, "the question is still answered, from the old index")
        self.assertEqual({r["method"] for r in results}, {"keyword"}, "a 768 query is never compared with 1536 "
                                                                      "vectors")
        self.assertIn("topic9 and keyword9", results[0]["content"])
        self.assertIn("being rebuilt", source.index_notice())
        self.assertEqual(self.embedding_batches(), [], "the query is not embedded with a model the index lacks")

        # A half-built new generation is never read: search answers from one consistent index.
        new_chunks, _model, _dim = source.with_context(knowledge_commit=False)._embed_chunks(
            source._chunk_text(section_text(4)))
        results = source.search_similar("topic3 keyword3")
        self.assertTrue(results and {r["chunk_id"] for r in results} <= set(old_chunks.ids))
        new_chunks.unlink()

        # Then to a 3072-dimension model, and a re-index.
        self.scenario.embedding_dim = 3072
        self.provider.embedding_model = "embed-3072"
        self.index(source)
        self.assertEqual((source.state, source.error), ("indexed", False))
        self.assertEqual((source.embedding_model, source.embedding_dimension, source.needs_reindex),
                         ("embed-3072", 3072, False))
        self.assertFalse(old_chunks.exists())
        self.assertEqual(set(source.chunk_ids.mapped("embedding_dimension")), {3072})
        results = source.search_similar("topic9 keyword9")
        self.assertEqual(results[0]["method"], "vector")
        self.assertIn("topic9 and keyword9", results[0]["content"])
        self.assertEqual(source.index_notice(), "")

        # Another provider for the source, with another model: marked too.
        other = self.provider.copy({"name": "Other embeddings", "embedding_model": "embed-other"})
        source.embedding_provider_id = other
        self.assertTrue(source.needs_reindex)

    def test_record_source_is_read_with_the_indexers_rights(self):
        source = self.Source.with_user(self.operator).create({
            "name": "Invoices", "source_type": "odoo_model",
            "model_id": self.env["ir.model"]._get_id("account.move"), "agent_ids": [(6, 0, self.agent.ids)]})
        self.index(source.sudo())
        self.assertEqual(source.state, "failed", "the operator may not read invoices, so neither may the index")
        self.assertIn("account.move", source.error)
        self.assertFalse(source.chunk_ids)
        self.assertEqual(self.embedding_batches(), [])

    def test_reindex_cron_requeues_record_sources_only(self):
        cron = self.env.ref("agentic_ai.ir_cron_knowledge_reindex")
        self.assertEqual((cron.active, cron.interval_number, cron.interval_type), (False, 1, "days"),
                         "spec 000 §12: daily, disabled by default")
        records = self.Source.with_user(self.operator).create({
            "name": "Partners", "source_type": "odoo_model", "model_id": self.env["ir.model"]._get_id("res.partner"),
            "domain": "[('id', '=', %d)]" % self.operator.partner_id.id}).sudo()
        text = self.index(self.text_source(section_text(2)))
        self.index(records)
        self.assertEqual(self.Source._cron_reindex_model_sources(), 1)
        self.assertEqual((records.state, text.state), ("queued", "indexed"))
        self.assertEqual(records.index_user_id, self.operator, "read again as the user who indexed it")

    def test_operator_deletes_an_indexed_source_and_its_vectors(self):
        source = self.index(self.text_source(section_text(3)))
        chunk_ids = source.chunk_ids.ids
        self.assertTrue(chunk_ids)
        source.with_user(self.operator).unlink()
        self.env.cr.execute("SELECT count(*) FROM agentic_ai_knowledge_vector WHERE chunk_id = ANY(%s)", [chunk_ids])
        self.assertEqual(self.env.cr.fetchone()[0], 0)
        self.assertFalse(self.env["agentic.ai.knowledge.chunk"].browse(chunk_ids).exists())

    def test_sources_of_another_company_are_not_read(self):
        other = self.env["res.company"].create({"name": "Knowledge Elsewhere"})
        source = self.Source.create({"name": "Elsewhere", "source_type": "text", "raw_text": "x",
                                     "company_id": other.id})
        shared = self.Source.create({"name": "Shared", "source_type": "text", "raw_text": "x", "company_id": False})
        visible = self.Source.with_user(self.plain).search([("id", "in", (source | shared).ids)])
        self.assertEqual(visible, shared)
        self.assertEqual(source.with_user(self.plain).search_similar("x"), [], "never searched for this user")

    def test_stale_indexing_is_claimed_again(self):
        source = self.text_source(section_text(2))
        source.write({"state": "indexing"})
        self.env.flush_all()
        self.env.cr.execute("UPDATE agentic_ai_knowledge_source SET write_date = now() - interval '2 hours' "
                            "WHERE id = %s", [source.id])
        self.run_cron()
        self.assertEqual(source.state, "indexed", "a source its dead worker left indexing is indexed again")

    def test_provider_without_embeddings_indexes_for_keyword_search(self):
        anthropic = self.env["agentic.ai.llm.provider"].create({
            "name": "No embeddings", "provider_type": "anthropic", "api_base_url": self.llm.base_url,
            "default_model": "claude-test"})
        source = self.index(self.text_source(section_text(4), embedding_provider_id=anthropic.id))
        self.assertEqual((source.state, source.embedding_model, source.embedding_dimension), ("indexed", False, 0))
        self.assertIn("keyword search", source.warning)
        self.assertEqual(self.embedding_batches(), [])
        results = source.search_similar("topic3 keyword3")
        self.assertEqual((results[0]["method"], results[0]["score"]), ("keyword", 1.0))
        self.assertIn("topic3 and keyword3", results[0]["content"])

    def test_file_source_csv_indexed_row_by_row(self):
        data = b"Product,Qty\nDesk,4\nChair,12\n"
        source = self.Source.with_user(self.operator).create({
            "name": "Stock", "source_type": "file", "file": base64.b64encode(data), "file_name": "stock.csv",
            "agent_ids": [(6, 0, self.agent.ids)]}).sudo()
        self.index(source)
        self.assertEqual((source.state, source.chunk_count), ("indexed", 1))
        content = source.chunk_ids.content
        self.assertLess(content.index("Desk"), content.index("4"))
        self.assertLess(content.index("4"), content.index("Chair"))

    def test_url_source_to_a_loopback_address_fails_refused(self):
        source = self.Source.with_user(self.operator).create({
            "name": "Local", "source_type": "url", "url": self.llm.base_url + "/models",
            "agent_ids": [(6, 0, self.agent.ids)]}).sudo()
        self.index(source)
        self.assertEqual(source.state, "failed")
        self.assertIn("refused", source.error)
        self.assertFalse(self.scenario.requests, "nothing was sent to the private address")
