"""Vector storage and search (issue 13, points 4 and 5; case BR-11 for the
storage): engine/knowledge/vector_store.py on the real database, through pgvector when
the extension is installed and through NumPy when it is not. dev/test.sh runs
this class twice: in the suite (pgvector present) and in its [numpy] pass on
a copy of the database without the extension."""
import numpy as np

from odoo.tests import TransactionCase, tagged

from ..engine.knowledge import vector_store
from ..engine.knowledge.vector_store import VectorStore, drop_storage, ensure_extension


def clustered(rng, count, dim, centers=12, noise=0.35):
    """``count`` vectors of ``dim`` dimensions around ``centers`` random
    directions: data with neighbourhoods, as embeddings have."""
    middle = rng.standard_normal((centers, dim))
    picks = rng.integers(0, centers, count)
    return middle[picks] + noise * rng.standard_normal((count, dim))


def brute_force(ids, matrix, query, limit):
    """The exact top ``limit`` by cosine similarity, in float64."""
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:limit]
    return [(ids[i], float(scores[i])) for i in order]


@tagged("post_install", "-at_install", "agentic_ai_numpy")
class TestVectorStore(TransactionCase):
    """``VectorStore`` on both backends: same results, valid scores, models
    and dimensions kept apart, indexes per dimension, cache invalidation."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cr = cls.env.cr
        cr.execute("SELECT to_regclass('agentic_ai_knowledge_chunk') IS NOT NULL")
        if not cr.fetchone()[0]:
            # Until the knowledge models are there: the columns this store uses.
            cr.execute("""CREATE TABLE agentic_ai_knowledge_chunk (
                              id serial PRIMARY KEY, source_id integer NOT NULL, content text NOT NULL)""")
        VectorStore.ensure_schema(cr)
        cls.store = VectorStore(cr)
        cls.has_extension = cls.store._has_extension()
        cls.rng = np.random.default_rng(13)

    def new_sources(self, count):
        """Ids of ``count`` new knowledge sources."""
        if "agentic.ai.knowledge.source" in self.env:
            return self.env["agentic.ai.knowledge.source"].create(
                [{"name": f"Vector test source {i}"} for i in range(count)]).ids
        self.env.cr.execute("SELECT nextval('agentic_ai_knowledge_chunk_id_seq') FROM generate_series(1, %s)",
                            (count,))
        return [row[0] for row in self.env.cr.fetchall()]

    def new_chunks(self, source_id, contents):
        """Ids of new chunks of ``source_id`` with ``contents``."""
        self.env.cr.execute(
            "INSERT INTO agentic_ai_knowledge_chunk (source_id, content) SELECT %s, unnest(%s::text[]) RETURNING id",
            (source_id, list(contents)))
        return sorted(row[0] for row in self.env.cr.fetchall())

    def store_vectors(self, source_id, matrix, model="test-embed"):
        ids = self.new_chunks(source_id, [f"chunk {i}" for i in range(len(matrix))])
        self.store.add([(cid, model, vector) for cid, vector in zip(ids, matrix, strict=True)])
        return ids

    def force_numpy(self, on=True):
        self.env["ir.config_parameter"].sudo().set_param("agentic_ai.vector_backend", "numpy" if on else False)
        self.env.flush_all()

    def assert_same(self, found, expected, places=4):
        self.assertEqual([cid for cid, _s in found], [cid for cid, _s in expected])
        for (_a, got), (_b, want) in zip(found, expected, strict=True):
            self.assertAlmostEqual(got, want, places=places)

    def backends(self):
        """The backends this database has: NumPy always, pgvector when installed."""
        return [True, False] if self.has_extension else [True]

    # -- both paths ---------------------------------------------------------

    def test_pgvector_and_numpy_give_the_exact_top_5(self):
        sources = self.new_sources(3)
        data = {s: clustered(self.rng, 150, 48) for s in sources}
        ids = {s: self.store_vectors(s, m) for s, m in data.items()}
        queries = clustered(self.rng, 8, 48) + self.rng.standard_normal((8, 48))
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assertEqual(self.store.pgvector(), not numpy_forced)
            for query in queries:
                for chosen in (sources, sources[:1], sources[1:]):
                    all_ids = [cid for s in chosen for cid in ids[s]]
                    matrix = np.vstack([data[s] for s in chosen])
                    with self.subTest(numpy=numpy_forced, sources=len(chosen)):
                        self.assert_same(self.store.search(query.tolist(), "test-embed", chosen, 5),
                                         brute_force(all_ids, matrix, query, 5))

    def test_filtered_hnsw_search_keeps_the_filtered_results(self):
        """Few rows of the searched source among many of another: the
        iterative index scan still returns ``limit`` rows, the exact ones."""
        big, small = self.new_sources(2)
        self.store_vectors(big, clustered(self.rng, 600, 32))
        few = self.rng.standard_normal((12, 32))
        small_ids = self.store_vectors(small, few)
        query = self.rng.standard_normal(32)
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            if not numpy_forced:
                self.env.cr.execute("SELECT set_config('enable_seqscan', 'off', true)")
            self.assert_same(self.store.search(query, "test-embed", [small], 5), brute_force(small_ids, few, query, 5))
            self.env.cr.execute("SELECT set_config('enable_seqscan', 'on', true)")

    def test_scores_are_finite_cosines_within_minus_one_and_one(self):
        source = self.new_sources(1)[0]
        base = self.rng.standard_normal(16)
        tiny, huge = base * 1e-30, base * 1e30
        ids = self.store_vectors(source, np.vstack([base, -base, tiny, huge, self.rng.standard_normal(16)]))
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            found = self.store.search(base, "test-embed", [source], 10)
            self.assertEqual(len(found), 5)
            for cid, score in found:
                self.assertIsInstance(score, float)
                self.assertTrue(-1.0 <= score <= 1.0 and np.isfinite(score), (cid, score))
            self.assertEqual(found[-1][0], ids[1])
            self.assertAlmostEqual(found[-1][1], -1.0, places=5)
            self.assertEqual({cid for cid, _s in found[:3]}, {ids[0], ids[2], ids[3]})

    def test_zero_norm_nan_infinite_and_mixed_dimensions_are_refused(self):
        source = self.new_sources(1)[0]
        a, b = self.new_chunks(source, ["a", "b"])
        for bad in ([0.0] * 8, [float("nan")] + [1.0] * 7, [float("inf")] + [1.0] * 7, [], [[1.0]], "text"):
            with self.subTest(vector=str(bad)[:30]), self.assertRaisesRegex(ValueError, f"chunk {b}"):
                self.store.add([(a, "test-embed", [1.0] * 8), (b, "test-embed", bad)])
        with self.assertRaisesRegex(ValueError, f"chunk {b}.*dimensions"):
            self.store.add([(a, "test-embed", [1.0] * 8), (b, "test-embed", [1.0] * 9)])
        with self.assertRaisesRegex(ValueError, "chunk 0"):
            self.store.add([(0, "test-embed", [1.0] * 8)])
        self.env.cr.execute("SELECT count(*) FROM agentic_ai_knowledge_vector WHERE chunk_id IN %s", ((a, b),))
        self.assertEqual(self.env.cr.fetchone()[0], 0)
        # A query that cannot be compared finds nothing rather than failing.
        self.store.add([(a, "test-embed", [1.0] * 8)])
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assertEqual(self.store.search([0.0] * 8, "test-embed", [source]), [])
            self.assertEqual(self.store.search([float("nan")] * 8, "test-embed", [source]), [])
            self.assertEqual(self.store.search([1.0] * 8, "test-embed", [source])[0][0], a)

    def test_other_models_and_dimensions_are_never_compared(self):
        source = self.new_sources(1)[0]
        same = self.store_vectors(source, self.rng.standard_normal((4, 8)), "model-a")
        self.store_vectors(source, self.rng.standard_normal((4, 8)), "model-b")
        self.store_vectors(source, self.rng.standard_normal((4, 16)), "model-a")
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            found = self.store.search(self.rng.standard_normal(8), "model-a", [source], 20)
            self.assertEqual(sorted(cid for cid, _s in found), same)
            self.assertEqual(self.store.search(self.rng.standard_normal(8), "model-c", [source], 20), [])

    def test_BR_11_query_of_768_dimensions_against_1536_dimension_data_finds_nothing(self):
        source = self.new_sources(1)[0]
        ids = self.store_vectors(source, clustered(self.rng, 20, 1536), "text-embedding-3-small")
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            with self.env.cr.savepoint():  # a database error would abort the savepoint and raise here
                self.assertEqual(self.store.search(self.rng.standard_normal(768), "text-embedding-3-small",
                                                   [source]), [])
                self.assertEqual(self.store.search(self.rng.standard_normal(768), "nomic-embed-text", [source]), [])
            self.assertEqual(len(self.store.search(self.rng.standard_normal(1536), "text-embedding-3-small",
                                                   [source])), 5)
        # Re-indexing the chunks with another model replaces their vectors.
        self.store.add([(cid, "text-embedding-3-large", v) for cid, v in zip(
            ids, clustered(self.rng, 20, 3072), strict=True)])
        self.env.cr.execute("SELECT DISTINCT embedding_model, dim FROM agentic_ai_knowledge_vector"
                            " WHERE chunk_id = ANY(%s)", (ids,))
        self.assertEqual(self.env.cr.fetchall(), [("text-embedding-3-large", 3072)])
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assertEqual(self.store.search(self.rng.standard_normal(1536), "text-embedding-3-small", [source]),
                             [])

    def test_BR_11_3072_dimensions_index_their_signatures_never_a_plain_hnsw_vector(self):
        source = self.new_sources(1)[0]
        matrix = clustered(self.rng, 40, 3072)
        ids = self.store_vectors(source, matrix, "text-embedding-3-large")
        query = matrix[7] + 0.5 * self.rng.standard_normal(3072)
        expected = brute_force(ids, matrix, query, 5)
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assert_same(self.store.search(query, "text-embedding-3-large", [source]), expected)
        # Above 4,000 dimensions (halfvec's limit) too: the signature index.
        big = clustered(self.rng, 10, 4096)
        big_ids = self.store_vectors(source, big, "huge")
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assert_same(self.store.search(big[3], "huge", [source]), brute_force(big_ids, big, big[3], 5))
        if self.has_extension:
            for dim in (3072, 4096):
                self.env.cr.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s"
                                    " AND indexdef ILIKE '%%hnsw%%'",
                                    (f"agentic_ai_knowledge_vec_{dim}",))
                definitions = [row[0] for row in self.env.cr.fetchall()]
                self.assertEqual(len(definitions), 1, definitions)
                self.assertIn("signature bit_hamming_ops", definitions[0])

    def test_signatures_are_centred_per_model_and_recentred_as_rows_double(self):
        """Vectors sharing one large common direction (cosine about 0.7
        between unrelated ones, as some embedding models give): centred, each
        signature has about as many ones as zeros, and the search is exact.
        The centre is computed again when the model's rows doubled."""
        source = self.new_sources(1)[0]
        dim = 64
        common = self.rng.standard_normal(dim)
        common /= np.linalg.norm(common)
        rows = clustered(self.rng, 40, dim)
        rows = 0.55 * rows / np.linalg.norm(rows, axis=1, keepdims=True) + 0.84 * common
        ids = self.store_vectors(source, rows[:10], "anisotropic")

        def assert_center_rows(count):
            if self.has_extension:  # signatures exist on the pgvector path only, not in the [numpy] pass
                self.env.cr.execute("SELECT row_count FROM agentic_ai_knowledge_vec_center"
                                    " WHERE embedding_model = 'anisotropic' AND dim = %s", (dim,))
                self.assertEqual(self.env.cr.fetchone()[0], count)
        assert_center_rows(10)
        ids += self.store_vectors(source, rows[10:19], "anisotropic")
        assert_center_rows(10)  # 19 rows: not doubled yet
        ids += self.store_vectors(source, rows[19:], "anisotropic")
        assert_center_rows(40)
        if self.has_extension:
            self.env.cr.execute("SELECT length(replace(signature::text, '0', '')) FROM agentic_ai_knowledge_vec_64"
                                " WHERE chunk_id = ANY(%s)", (ids,))
            ones = [row[0] for row in self.env.cr.fetchall()]
            self.assertEqual(len(ones), 40)
            self.assertTrue(dim * 0.25 < np.mean(ones) < dim * 0.75, ones)
        for query in rows[:5] + 0.3 * self.rng.standard_normal((5, dim)):
            self.assert_same(self.store.search(query, "anisotropic", [source]), brute_force(ids, rows, query, 5))

    def test_tables_of_an_older_layout_are_rebuilt_at_upgrade(self):
        """A pgvector table without signatures (as 19.0.1.3.0 made them) is
        rebuilt by what an upgrade runs, and searches the same."""
        source = self.new_sources(1)[0]
        matrix = clustered(self.rng, 30, 24)
        ids = self.store_vectors(source, matrix)
        if self.has_extension:
            self.env.cr.execute("DROP INDEX agentic_ai_knowledge_vec_24_signature_idx;"
                                " ALTER TABLE agentic_ai_knowledge_vec_24 DROP COLUMN signature")
        self.env["agentic.ai.knowledge.chunk"].init()
        if self.has_extension:
            self.env.cr.execute("SELECT count(signature) FROM agentic_ai_knowledge_vec_24 WHERE chunk_id = ANY(%s)",
                                (ids,))
            self.assertEqual(self.env.cr.fetchone()[0], len(ids))
        for numpy_forced in self.backends():
            self.force_numpy(numpy_forced)
            self.assert_same(self.store.search(matrix[4], "test-embed", [source]),
                             brute_force(ids, matrix, matrix[4], 5))

    def test_BR_11_schema_and_extension_set_up_again_without_error(self):
        """What install and upgrade run, run again (idempotent), and a
        database whose extension was dropped and re-created gets its pgvector
        tables back from the canonical vectors."""
        source = self.new_sources(1)[0]
        matrix = clustered(self.rng, 30, 2560)
        ids = self.store_vectors(source, matrix, "m")
        VectorStore.ensure_schema(self.env.cr)
        VectorStore.ensure_schema(self.env.cr)
        self.env.cr.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        available = bool(self.env.cr.fetchone())
        query = self.rng.standard_normal(2560)
        expected = brute_force(ids, matrix, query, 5)
        if self.has_extension:
            self.assertTrue(ensure_extension(self.env.cr))
            self.env.cr.execute("DROP EXTENSION vector CASCADE")
        # Without the extension (the [numpy] pass starts here): NumPy answers.
        self.assertFalse(self.store.pgvector())
        self.assert_same(self.store.search(query, "m", [source]), expected)
        # The extension (re-)created: the pgvector tables are rebuilt from
        # the canonical vectors and answer the same.
        self.assertEqual(ensure_extension(self.env.cr), available)
        self.assertEqual(self.store.pgvector(), available)
        self.assert_same(self.store.search(query, "m", [source]), expected, places=3)
        if available:
            self.env.cr.execute("SELECT count(*) FROM agentic_ai_knowledge_vec_2560 WHERE chunk_id = ANY(%s)", (ids,))
            self.assertEqual(self.env.cr.fetchone()[0], len(ids))

    # -- keyword search and the NumPy cache -----------------------------------

    def test_keyword_search_scores_the_share_of_terms_found(self):
        source, other = self.new_sources(2)
        ids = self.new_chunks(source, ["Invoice INV/2025/0001 paid by wire transfer",
                                       "The invoice is overdue", "Delivery of 4 desks", "100% of 5_items"])
        self.new_chunks(other, ["invoice paid overdue"])
        found = self.store.keyword_search(["invoice", "Paid", "invoice", " "], [source])
        self.assertEqual(found, [(ids[0], 1.0), (ids[1], 0.5)])
        self.assertEqual(self.store.keyword_search(["desks", "chairs"], [source]), [(ids[2], 0.5)])
        self.assertEqual(self.store.keyword_search(["%"], [source]), [(ids[3], 1.0)])
        self.assertEqual(self.store.keyword_search(["_"], [source]), [(ids[3], 1.0)])
        self.assertEqual(self.store.keyword_search(["invoice"], [source], limit=1), [(ids[0], 1.0)])
        self.assertEqual(self.store.keyword_search([], [source]), [])
        self.assertEqual(self.store.keyword_search(["invoice"], []), [])

    def test_numpy_cache_is_reused_and_invalidated_by_add_delete_and_chunk_deletion(self):
        self.force_numpy()
        source, other = self.new_sources(2)
        matrix = self.rng.standard_normal((50, 24))
        ids = self.store_vectors(source, matrix)
        self.store_vectors(other, self.rng.standard_normal((5, 24)))
        query = self.rng.standard_normal(24)
        first = self.store.search(query, "test-embed", [source])
        key = (self.env.cr.dbname, "test-embed", 24, (source,))
        cached = vector_store._matrix_cache[key]
        self.assertEqual(self.store.search(query, "test-embed", [source]), first)
        self.assertIs(vector_store._matrix_cache[key], cached, "a second search reuses the matrix")
        # Another source's change leaves this source's matrix alone.
        self.store_vectors(other, self.rng.standard_normal((2, 24)))
        self.store.search(query, "test-embed", [source])
        self.assertIs(vector_store._matrix_cache[key], cached)
        # A new, closest vector is found at once.
        (new,) = self.store_vectors(source, [query * 2])
        found = self.store.search(query, "test-embed", [source])
        self.assertEqual(found[0][0], new)
        self.assertAlmostEqual(found[0][1], 1.0, places=5)
        self.store.delete([new])
        self.assertEqual(self.store.search(query, "test-embed", [source]), first)
        # A chunk deleted takes its vector with it (cascade), and the cache sees it.
        self.env.cr.execute("DELETE FROM agentic_ai_knowledge_chunk WHERE id = %s", (first[0][0],))
        self.assert_same(self.store.search(query, "test-embed", [source]), first[1:] + brute_force(
            ids, matrix, query, 6)[5:])
        # Re-embedding a chunk replaces its vector.
        self.store.add([(first[1][0], "test-embed", -query)])
        self.assertNotIn(first[1][0], [cid for cid, _s in self.store.search(query, "test-embed", [source])])

    def test_uninstall_drops_every_table_of_the_store(self):
        source = self.new_sources(1)[0]
        self.store_vectors(source, self.rng.standard_normal((3, 8)))
        drop_storage(self.env.cr)
        self.env.cr.execute("""SELECT relname FROM pg_class WHERE relname LIKE 'agentic\\_ai\\_knowledge\\_vec%'
                                UNION ALL SELECT proname FROM pg_proc WHERE proname LIKE 'agentic_ai_knowledge%'""")
        self.assertEqual(self.env.cr.fetchall(), [])
