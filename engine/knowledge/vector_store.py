"""Vectors of knowledge chunks and the searches over them (issue 13, points 4
and 5; spec §3.8 and §9.2): pgvector when the extension exists, NumPy when it
does not, keyword search when there are no embeddings.

Storage
    ``agentic_ai_knowledge_vector`` is the canonical table, one row per chunk:
    ``(chunk_id, source_id, embedding_model, dim, embedding real[])``; a chunk
    deleted deletes its vector (``ON DELETE CASCADE``). It is what the NumPy
    path reads and what the pgvector tables are rebuilt from.

    With pgvector, each dimension ``d`` has its own table
    ``agentic_ai_knowledge_vec_<d>`` with a ``vector(d)`` column and a
    ``signature bit(d)`` column, created on first use and filled from the
    canonical table. The HNSW index is on the signature (``bit_hamming_ops``),
    for every dimension the store keeps: pgvector indexes ``bit`` up to
    64,000 dimensions, where ``vector`` stops at 2,000 and ``halfvec`` at
    4,000 (https://github.com/pgvector/pgvector, "Indexing"), so no plain HNSW
    index on a 3,072-dimension ``vector`` is ever attempted and an install
    or upgrade never fails on one (case BR-11).

Centred binary signatures
    A signature is pgvector's ``binary_quantize(embedding - centre)``: one
    bit per dimension, whether the value lies above the centre, the mean of
    that embedding model's vectors (``agentic_ai_knowledge_vec_center``).
    Without the centre the bits of models whose vectors share a large common
    direction (cosine about 0.7 between unrelated texts, as OpenAI's ada-002)
    are nearly all alike and say little: on the benchmark's 100k vectors
    mixed with such a direction (as RAG_BENCH_COMMON=0.84 of
    bench/rag_search.py does; raw SQL, 100 candidates), uncentred signatures
    gave recall@5 0.918 against 0.98 without the mix. The centre is computed
    again (and every signature of the model with it) each time the model's
    row count has doubled, until ``CENTER_STABLE_ROWS``: about two writes per
    row in all. The search takes the ``CANDIDATES`` nearest signatures by
    Hamming distance through the index and orders them by the exact cosine
    distance of their full vectors (pgvector's README, "Binary Quantization",
    re-ranking). The signature index is a tenth of a ``vector`` one (66 MB
    for 100k x 1,536 against 777 MB) and builds in 100 s against 180-750 s;
    at 100k chunks it gave recall@5 0.968-0.974 at p95 18-20 ms through this search,
    where the ``vector`` HNSW index reached 0.95 only at p95 18-20 ms for the
    raw query (m 24-32; 0.90 with m 16) (bench/rag_search.py, 2 cores).

    ``agentic_ai_knowledge_vector_version`` holds one version per source,
    taken from a sequence by triggers on the canonical table whenever a vector
    of the source is inserted, updated or deleted (also by the cascade of a
    chunk deleted). Sequence values are never reused, even after a rollback,
    so a version seen once names one state of the source's vectors.

Scores
    Cosine similarity, a finite float in [-1, 1], best first. A query is only
    compared with vectors of the same embedding model *and* dimension: a 768
    dimension query against 1,536 dimension data finds nothing, without a
    database error. Zero-norm, NaN and infinite vectors are refused when
    stored (``ValueError``); such a query finds nothing.

Filtered HNSW search
    pgvector 0.8 applies a ``WHERE`` after the index scan, so a filter on the
    source or model could leave fewer rows than asked. The search sets
    ``hnsw.iterative_scan = relaxed_order`` (the scan continues until enough
    rows pass the filter, up to ``hnsw.max_scan_tuples``) and
    ``hnsw.ef_search`` for the transaction, and re-sorts the rows in a
    materialized CTE as pgvector's documentation advises for relaxed order.

NumPy fallback
    The matrix of a (database, embedding model, dimension, set of sources) is
    loaded once, normalised, and kept in this process (least recently used
    first out beyond ``CACHE_BYTES``); each search checks the sources'
    versions with one small query and reloads when they changed. Cosine
    similarity is one matrix-vector product and ``numpy.argpartition``.
"""
from __future__ import annotations

import io
import logging
import math
import struct
import threading
from collections import OrderedDict

import numpy as np
from psycopg2 import Error as PsycopgError

from odoo.tools import SQL

_logger = logging.getLogger(__name__)

VECTOR_TABLE = "agentic_ai_knowledge_vector"
VERSION_TABLE = "agentic_ai_knowledge_vector_version"
VERSION_SEQUENCE = "agentic_ai_knowledge_vector_version_seq"
CHUNK_TABLE = "agentic_ai_knowledge_chunk"
CENTER_TABLE = "agentic_ai_knowledge_vec_center"
# The vector type stores up to 16,000 dimensions (pgvector README); the bit
# signatures' HNSW index takes up to 64,000.
VECTOR_MAX_DIM = 16000
# hnsw.ef_search for a search (pgvector's default is 40, its maximum 1,000):
# the size of the graph walk's candidate list; larger is slower and finds
# more of the true neighbours (bench/rag_search.py at 100k, two runs: 200
# gave recall@5 0.960-0.961 at p95 15-16 ms, 300 gave 0.968-0.974 at 18-20 ms).
EF_SEARCH = 300
# Signatures nearest by Hamming distance re-ranked by exact cosine distance:
# CANDIDATES at 1,536 dimensions and more, proportionally more below (fewer
# bits tell neighbours apart less finely; the re-ranking's cost, candidates x
# dimensions, stays the same), e.g. 400 at 384 dimensions.
CANDIDATES = 100
CANDIDATES_DIM = 1536
# HNSW build parameters (pgvector's defaults: m 16, ef_construction 64): on
# signatures a denser graph is cheap (Hamming distances) and raises recall
# (raw query at 100k: m 16 / 128 needed ef_search 800 for recall@5 0.954,
# m 32 / 256 gives 0.97 at 300-400; builds of 50 s and 100-170 s).
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 256
# A model's centre is computed again when its rows doubled, up to this many.
CENTER_STABLE_ROWS = 10000
# Memory the NumPy matrices of this process may hold together (bytes; the
# last one loaded stays even when larger). 100k chunks of 1,536 dimensions
# take 586 MiB: mind Odoo's limit_memory_hard (2.5 GiB of address space per
# worker by default) when the NumPy path serves that many.
CACHE_BYTES = 1 << 30
# Keyword search: terms searched at most, and characters kept of each term.
KEYWORD_MAX_TERMS = 64
KEYWORD_MAX_CHARS = 100
# Rows per COPY batch when storing vectors, and per query when loading them.
COPY_BATCH = 2000
LOAD_PAGE = 10000

_cache_lock = threading.Lock()
# (dbname, model, dim, source ids) -> (versions, chunk ids, normalised matrix)
_matrix_cache: OrderedDict = OrderedDict()
_fallback_logged = set()


def vec_table(dim: int) -> str:
    """Name of the pgvector table for vectors of ``dim`` dimensions."""
    return f"agentic_ai_knowledge_vec_{int(dim)}"


def ensure_extension(cr) -> bool:
    """Try ``CREATE EXTENSION IF NOT EXISTS vector`` (in a savepoint) when the
    server offers it in ``pg_available_extensions``, then build the
    per-dimension tables from the canonical one. Returns whether the extension
    is installed; when it cannot be, the NumPy path is used and this is
    logged once (at INFO: a database without pgvector is a supported set-up).
    Called when the module is installed (post_init_hook)."""
    cr.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    if not cr.fetchone():
        cr.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if not cr.fetchone():
            _log_fallback(cr, "the PostgreSQL server does not offer the pgvector extension")
            return False
        try:
            with cr.savepoint():
                cr.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except PsycopgError as error:
            _log_fallback(cr, f"CREATE EXTENSION vector failed: {error}".strip())
            return False
    cr.execute("SELECT to_regclass(%s) IS NOT NULL", (CHUNK_TABLE,))
    if not cr.fetchone()[0]:
        return True  # the chunk model's init() creates the tables, and the pgvector ones come on first use
    VectorStore.ensure_schema(cr)
    VectorStore(cr).ensure_vec_tables()
    return True


def drop_storage(cr) -> None:
    """Drop every table, sequence and function of this store (the pgvector
    extension stays: other modules may use it). Called when the module is
    uninstalled (uninstall_hook): these are not tables of Odoo models."""
    cr.execute("SELECT relname FROM pg_class WHERE relkind = 'r' AND relname ~ '^agentic_ai_knowledge_vec_[0-9]+$'")
    for (table,) in cr.fetchall():
        cr.execute(SQL("DROP TABLE IF EXISTS %s CASCADE", SQL.identifier(table)))
    cr.execute(SQL("DROP TABLE IF EXISTS %s, %s, %s CASCADE; DROP SEQUENCE IF EXISTS %s;"
                   " DROP FUNCTION IF EXISTS agentic_ai_knowledge_vector_bump() CASCADE",
                   SQL.identifier(VECTOR_TABLE), SQL.identifier(VERSION_TABLE), SQL.identifier(CENTER_TABLE),
                   SQL.identifier(VERSION_SEQUENCE)))


def _log_fallback(cr, reason):
    if cr.dbname not in _fallback_logged:
        _fallback_logged.add(cr.dbname)
        _logger.info("Knowledge search uses NumPy on database %s: %s", cr.dbname, reason)


def as_vector(vector, what="vector") -> np.ndarray:
    """``vector`` (a list of floats or a 1-d array) scaled to unit length, as
    float32. Cosine similarity does not depend on length, and unit vectors
    keep pgvector's and NumPy's single-precision sums of squares from
    overflowing (values near 1e20) or vanishing (near 1e-20). Raises
    ``ValueError`` naming ``what`` when it is empty, not 1-d, longer than
    16,000 values, has NaN or infinite values, or zero norm (cosine
    similarity is undefined there)."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what}: not a vector of numbers ({error})") from None
    if array.ndim != 1 or not array.size:
        raise ValueError(f"{what}: a vector must be a non-empty list of numbers")
    if array.size > VECTOR_MAX_DIM:
        raise ValueError(f"{what}: {array.size} dimensions, more than the {VECTOR_MAX_DIM} stored")
    if not np.isfinite(array).all():
        raise ValueError(f"{what}: the vector has NaN or infinite values")
    scale = float(np.abs(array).max())
    if not scale:
        raise ValueError(f"{what}: the vector has zero norm")
    array = array / scale  # no overflow in the norm below
    return (array / np.linalg.norm(array)).astype(np.float32)


class VectorStore:
    """Vectors of knowledge chunks, by embedding model and dimension.

    ``cr`` is an Odoo cursor; everything happens in its transaction (nothing
    is committed here). Chunk ids are ids of ``agentic_ai_knowledge_chunk``
    (columns ``id``, ``source_id``, ``content``)."""

    def __init__(self, cr):
        self.cr = cr

    # -- schema ---------------------------------------------------------

    @staticmethod
    def ensure_schema(cr) -> None:
        """Create the canonical vector table, the version table, their
        sequence and triggers (idempotent; the chunk table must exist).
        Called from the chunk model's ``init()``."""
        cr.execute(SQL(
            """
            CREATE TABLE IF NOT EXISTS %(vectors)s (
                chunk_id integer PRIMARY KEY REFERENCES %(chunks)s (id) ON DELETE CASCADE,
                source_id integer NOT NULL,
                embedding_model varchar NOT NULL,
                dim integer NOT NULL CHECK (dim > 0),
                embedding real[] NOT NULL
            );
            CREATE INDEX IF NOT EXISTS agentic_ai_knowledge_vector_source_model_dim_idx
                ON %(vectors)s (source_id, embedding_model, dim);
            CREATE TABLE IF NOT EXISTS %(versions)s (
                source_id integer PRIMARY KEY,
                version bigint NOT NULL
            );
            CREATE SEQUENCE IF NOT EXISTS %(sequence)s;
            CREATE TABLE IF NOT EXISTS %(centers)s (
                embedding_model varchar NOT NULL,
                dim integer NOT NULL,
                center real[] NOT NULL,
                row_count integer NOT NULL,
                PRIMARY KEY (embedding_model, dim)
            );
            CREATE OR REPLACE FUNCTION agentic_ai_knowledge_vector_bump() RETURNS trigger
            LANGUAGE plpgsql AS $fn$
            DECLARE
                changed text;
            BEGIN
                -- the statement's transition tables: new_rows (insert,
                -- update) and old_rows (update, delete)
                FOREACH changed IN ARRAY CASE TG_OP WHEN 'INSERT' THEN ARRAY['new_rows']
                                                    WHEN 'DELETE' THEN ARRAY['old_rows']
                                                    ELSE ARRAY['new_rows', 'old_rows'] END LOOP
                    EXECUTE format('INSERT INTO agentic_ai_knowledge_vector_version (source_id, version)
                                    SELECT s.source_id, nextval(''agentic_ai_knowledge_vector_version_seq'')
                                      FROM (SELECT DISTINCT source_id FROM %%I) s
                                    ON CONFLICT (source_id) DO UPDATE SET version = EXCLUDED.version', changed);
                END LOOP;
                RETURN NULL;
            END
            $fn$;
            CREATE OR REPLACE TRIGGER agentic_ai_knowledge_vector_bump_insert
                AFTER INSERT ON %(vectors)s REFERENCING NEW TABLE AS new_rows
                FOR EACH STATEMENT EXECUTE FUNCTION agentic_ai_knowledge_vector_bump();
            CREATE OR REPLACE TRIGGER agentic_ai_knowledge_vector_bump_update
                AFTER UPDATE ON %(vectors)s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                FOR EACH STATEMENT EXECUTE FUNCTION agentic_ai_knowledge_vector_bump();
            CREATE OR REPLACE TRIGGER agentic_ai_knowledge_vector_bump_delete
                AFTER DELETE ON %(vectors)s REFERENCING OLD TABLE AS old_rows
                FOR EACH STATEMENT EXECUTE FUNCTION agentic_ai_knowledge_vector_bump();
            """,
            vectors=SQL.identifier(VECTOR_TABLE), chunks=SQL.identifier(CHUNK_TABLE),
            versions=SQL.identifier(VERSION_TABLE), sequence=SQL.identifier(VERSION_SEQUENCE),
            centers=SQL.identifier(CENTER_TABLE),
        ))

    def _has_extension(self) -> bool:
        self.cr.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        return bool(self.cr.fetchone())

    def pgvector(self) -> bool:
        """Whether searches use pgvector: the extension is installed and the
        system parameter ``agentic_ai.vector_backend`` is not ``numpy``."""
        self.cr.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
                   (SELECT value FROM ir_config_parameter WHERE key = 'agentic_ai.vector_backend')
        """)
        present, backend = self.cr.fetchone()
        if not present:
            _log_fallback(self.cr, "the pgvector extension is not installed")
        return bool(present) and (backend or "").strip().lower() != "numpy"

    def ensure_vec_tables(self) -> None:
        """When the extension is installed, (re)build the pgvector table of
        every dimension stored that is missing or out of date (see
        ``_ensure_vec_table``). Called at install (``ensure_extension``) and
        at every upgrade (the chunk model's ``init()``), so tables made by
        an older version are rebuilt then, not in a user's first search."""
        if not self._has_extension():
            return
        self.cr.execute(SQL("SELECT DISTINCT dim FROM %s ORDER BY dim", SQL.identifier(VECTOR_TABLE)))
        for (dim,) in self.cr.fetchall():
            self._ensure_vec_table(dim)

    def _ensure_vec_table(self, dim: int) -> str:
        """Create (once, under an advisory lock) the pgvector table of ``dim``
        dimensions with its signatures and index, filled from the canonical
        table. A table left without its vector column by ``DROP EXTENSION
        vector CASCADE``, or made before signatures existed, is rebuilt.
        Returns its name."""
        cr, table = self.cr, vec_table(dim)
        complete = SQL("""
            SELECT count(*) = 2 FROM pg_attribute
             WHERE attrelid = to_regclass(%s) AND attname IN ('embedding', 'signature') AND NOT attisdropped
        """, table)
        cr.execute(complete)
        if cr.fetchone()[0]:
            return table
        cr.execute("SELECT pg_advisory_xact_lock(hashtext('agentic_ai_knowledge_vec'))")
        cr.execute(complete)
        if cr.fetchone()[0]:
            return table
        cr.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))
        exists = cr.fetchone()[0]
        ident = SQL.identifier(table)
        if exists:
            cr.execute(SQL("DROP TABLE %s", ident))
        cr.execute(SQL(
            """
            CREATE TABLE %(table)s (
                chunk_id integer PRIMARY KEY REFERENCES %(vectors)s (chunk_id) ON DELETE CASCADE,
                source_id integer NOT NULL,
                embedding_model varchar NOT NULL,
                embedding vector(%(dim)s) NOT NULL,
                signature bit(%(dim)s) NOT NULL
            );
            CREATE INDEX %(source_index)s ON %(table)s (source_id, embedding_model);
            DELETE FROM %(centers)s WHERE dim = %(dim)s;
            """,
            table=ident, vectors=SQL.identifier(VECTOR_TABLE), dim=SQL(str(int(dim))),
            source_index=SQL.identifier(f"{table}_source_idx"), centers=SQL.identifier(CENTER_TABLE),
        ))
        cr.execute(SQL("SELECT DISTINCT embedding_model FROM %s WHERE dim = %s", SQL.identifier(VECTOR_TABLE), dim))
        for (model,) in cr.fetchall():
            self._refresh_center(table, dim, model)
        self._copy_rows(table, dim, SQL("v.dim = %s", dim))
        self.rebuild_index(dim)
        return table

    def _refresh_center(self, table: str, dim: int, model: str) -> None:
        """Compute ``model``'s centre (the mean of its vectors of ``dim``
        dimensions in the canonical table) when it has none, or when its rows
        at least doubled since (while below ``CENTER_STABLE_ROWS``); then set
        again the signatures already in ``table`` with it, so that one centre
        serves all of them. Rows still to be copied get theirs from
        ``_copy_rows``."""
        cr = self.cr
        cr.execute(SQL("SELECT count(*) FROM %s WHERE embedding_model = %s AND dim = %s",
                       SQL.identifier(VECTOR_TABLE), model, dim))
        count = cr.fetchone()[0]
        cr.execute(SQL("SELECT row_count FROM %s WHERE embedding_model = %s AND dim = %s",
                       SQL.identifier(CENTER_TABLE), model, dim))
        row = cr.fetchone()
        if row is not None and (count < 2 * row[0] or row[0] >= CENTER_STABLE_ROWS):
            return
        cr.execute(SQL(
            """
            INSERT INTO %(centers)s (embedding_model, dim, center, row_count)
                 SELECT %(model)s, %(dim_value)s, avg(embedding::vector(%(dim)s))::real[], %(count)s
                   FROM %(vectors)s WHERE embedding_model = %(model)s AND dim = %(dim_value)s
            ON CONFLICT (embedding_model, dim) DO UPDATE
                    SET center = EXCLUDED.center, row_count = EXCLUDED.row_count;
            UPDATE %(table)s t SET signature = binary_quantize(t.embedding - c.center::vector(%(dim)s))::bit(%(dim)s)
              FROM %(centers)s c
             WHERE c.embedding_model = %(model)s AND c.dim = %(dim_value)s AND t.embedding_model = %(model)s;
            """,
            centers=SQL.identifier(CENTER_TABLE), vectors=SQL.identifier(VECTOR_TABLE), table=SQL.identifier(table),
            model=model, dim=SQL(str(int(dim))), dim_value=dim, count=count,
        ))

    def _copy_rows(self, table: str, dim: int, where: SQL) -> None:
        """Copy the canonical rows matching ``where`` (alias ``v``) into
        ``table`` with their signatures (rows already there are kept)."""
        self.cr.execute(SQL(
            """
            INSERT INTO %(table)s (chunk_id, source_id, embedding_model, embedding, signature)
                 SELECT v.chunk_id, v.source_id, v.embedding_model, v.embedding::vector(%(dim)s),
                        binary_quantize(v.embedding::vector(%(dim)s) - c.center::vector(%(dim)s))::bit(%(dim)s)
                   FROM %(vectors)s v
                   JOIN %(centers)s c ON c.embedding_model = v.embedding_model AND c.dim = v.dim
                  WHERE %(where)s
            ON CONFLICT (chunk_id) DO NOTHING
            """,
            table=SQL.identifier(table), vectors=SQL.identifier(VECTOR_TABLE), centers=SQL.identifier(CENTER_TABLE),
            dim=SQL(str(int(dim))), where=where,
        ))

    def rebuild_index(self, dim: int, drop_only: bool = False) -> None:
        """(Re)create the HNSW index on the signatures of the ``dim`` table
        (``bit_hamming_ops``). With ``drop_only`` the index is only dropped,
        e.g. before a bulk load whose index is built once after it (faster
        than inserting into the graph row by row). The build gets
        ``maintenance_work_mem`` of 1 GB for the transaction: pgvector builds
        much faster when the graph fits in it."""
        table = vec_table(dim)
        index = SQL.identifier(f"{table}_signature_idx")
        self.cr.execute(SQL("DROP INDEX IF EXISTS %s", index))
        if drop_only:
            return
        self.cr.execute("SELECT set_config('maintenance_work_mem', '1GB', true)")
        self.cr.execute(SQL("CREATE INDEX %s ON %s USING hnsw (signature bit_hamming_ops)"
                            " WITH (m = %s, ef_construction = %s)",
                            index, SQL.identifier(table), SQL(str(HNSW_M)), SQL(str(HNSW_EF_CONSTRUCTION))))

    # -- writes ---------------------------------------------------------

    def add(self, rows) -> None:
        """Store ``rows``, a list of ``(chunk_id, embedding_model, vector)``
        with ``vector`` a list of floats or a 1-d NumPy array (stored scaled
        to unit length, see ``as_vector``), replacing any vector these chunks
        had. Raises ``ValueError`` naming the chunk for a
        zero-norm, NaN or infinite vector, an empty model name, a chunk that
        does not exist, and when the vectors do not all have one dimension."""
        if not rows:
            return
        vectors, dim = [], None
        for chunk_id, model, vector in rows:
            what = f"chunk {chunk_id}"
            if not isinstance(model, str) or not model.strip():
                raise ValueError(f"{what}: an embedding model name is required")
            array = as_vector(vector, what)
            if dim is None:
                dim = array.size
            elif array.size != dim:
                raise ValueError(f"{what}: {array.size} dimensions where the other vectors have {dim} "
                                 "(one call stores one dimension)")
            vectors.append(array)
        chunk_ids = [int(row[0]) for row in rows]
        if len(set(chunk_ids)) != len(chunk_ids):
            raise ValueError("the same chunk appears twice in one call")
        cr = self.cr
        cr.execute(SQL("SELECT id FROM %s WHERE id = ANY(%s)", SQL.identifier(CHUNK_TABLE), chunk_ids))
        missing = set(chunk_ids) - {row[0] for row in cr.fetchall()}
        if missing:
            raise ValueError(f"chunk {min(missing)}: no such knowledge chunk")
        cr.execute("""
            CREATE TEMP TABLE IF NOT EXISTS agentic_ai_vector_staging (
                chunk_id integer, embedding_model varchar, dim integer, embedding real[]
            ) ON COMMIT DROP;
            TRUNCATE agentic_ai_vector_staging;
        """)
        matrix = np.vstack(vectors)
        for start in range(0, len(rows), COPY_BATCH):
            batch = rows[start:start + COPY_BATCH]
            data = _copy_binary(chunk_ids[start:start + COPY_BATCH], [row[1] for row in batch],
                                matrix[start:start + COPY_BATCH])
            cr.copy_expert("COPY agentic_ai_vector_staging FROM STDIN WITH (FORMAT binary)", data)
        cr.execute(SQL(
            """
            DELETE FROM %(vectors)s WHERE chunk_id = ANY(%(ids)s);
            INSERT INTO %(vectors)s (chunk_id, source_id, embedding_model, dim, embedding)
                 SELECT s.chunk_id, c.source_id, s.embedding_model, s.dim, s.embedding
                   FROM agentic_ai_vector_staging s JOIN %(chunks)s c ON c.id = s.chunk_id;
            """,
            vectors=SQL.identifier(VECTOR_TABLE), chunks=SQL.identifier(CHUNK_TABLE), ids=chunk_ids,
        ))
        if self._has_extension():
            table = self._ensure_vec_table(dim)
            # _ensure_vec_table fills a new table from the canonical one; an
            # existing one gets the rows just stored (old ones went by cascade).
            for model in sorted({row[1] for row in rows}):
                self._refresh_center(table, dim, model)
            self._copy_rows(table, dim, SQL("v.chunk_id = ANY(%s)", chunk_ids))

    def delete(self, chunk_ids) -> None:
        """Remove the vectors of ``chunk_ids`` (the pgvector rows follow by
        cascade; the sources' versions change, so NumPy caches reload)."""
        ids = [int(i) for i in chunk_ids or ()]
        if ids:
            self.cr.execute(SQL("DELETE FROM %s WHERE chunk_id = ANY(%s)", SQL.identifier(VECTOR_TABLE), ids))

    # -- searches -------------------------------------------------------

    def search(self, query, embedding_model: str, source_ids, limit: int = 5) -> list[tuple[int, float]]:
        """The ``limit`` chunks of ``source_ids`` nearest to ``query`` (a list
        of floats or 1-d array) among vectors of ``embedding_model`` with the
        query's dimension, as ``(chunk_id, cosine similarity)`` pairs, best
        first, the similarity a finite float in [-1, 1] (ties by chunk id).
        Returns ``[]`` when nothing is comparable, and for a zero-norm, NaN or
        infinite query. pgvector (HNSW, approximate) or NumPy (exact), see
        ``pgvector()``."""
        source_ids = sorted({int(i) for i in source_ids or ()})
        limit = int(limit)
        if not source_ids or limit <= 0 or not embedding_model:
            return []
        try:
            vector = as_vector(query, "query")
        except ValueError:
            return []
        if self.pgvector():
            return self._search_pgvector(vector, embedding_model, source_ids, limit)
        return self._search_numpy(vector, embedding_model, source_ids, limit)

    def _search_pgvector(self, vector, model, source_ids, limit):
        """The ``CANDIDATES`` nearest signatures through the HNSW index,
        ordered by the exact cosine distance of their vectors."""
        cr, dim = self.cr, vector.size
        cr.execute(SQL("SELECT EXISTS (SELECT 1 FROM %s WHERE source_id = ANY(%s) AND embedding_model = %s"
                       " AND dim = %s)", SQL.identifier(VECTOR_TABLE), source_ids, model, dim))
        if not cr.fetchone()[0]:
            return []
        table = SQL.identifier(self._ensure_vec_table(dim))
        query = SQL("%s::vector(%s)", "[" + ",".join(map(repr, vector.tolist())) + "]", SQL(str(dim)))
        candidates = max(limit, CANDIDATES, CANDIDATES * CANDIDATES_DIM // dim)
        cr.execute(SQL("SELECT set_config('hnsw.ef_search', %s, true),"
                       " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                       str(min(1000, max(EF_SEARCH, candidates)))))
        cr.execute(SQL(
            """
            WITH center AS (
                SELECT binary_quantize(%(query)s - center::vector(%(dim)s))::bit(%(dim)s) AS signature
                  FROM %(centers)s WHERE embedding_model = %(model)s AND dim = %(dim_value)s
            ), nearest AS MATERIALIZED (
                SELECT chunk_id, embedding
                  FROM %(table)s
                 WHERE embedding_model = %(model)s AND source_id = ANY(%(sources)s)
              ORDER BY signature <~> (SELECT signature FROM center)
                 LIMIT %(candidates)s
            )
            SELECT chunk_id, embedding <=> %(query)s AS distance
              FROM nearest ORDER BY distance, chunk_id LIMIT %(limit)s
            """,
            query=query, dim=SQL(str(dim)), dim_value=dim, centers=SQL.identifier(CENTER_TABLE),
            table=table, model=model, sources=source_ids, candidates=candidates, limit=limit,
        ))
        rows = cr.fetchall()
        return [(chunk_id, _score(1.0 - distance)) for chunk_id, distance in rows
                if distance is not None and math.isfinite(distance)]

    def _versions(self, source_ids):
        self.cr.execute(SQL("SELECT source_id, version FROM %s WHERE source_id = ANY(%s) ORDER BY source_id",
                            SQL.identifier(VERSION_TABLE), source_ids))
        return tuple(self.cr.fetchall())

    def _matrix(self, model, dim, source_ids):
        """``(chunk ids, normalised float32 matrix)`` of the vectors, cached
        per process until one of the sources' versions changes."""
        key = (self.cr.dbname, model, dim, tuple(source_ids))
        versions = self._versions(source_ids)
        with _cache_lock:
            cached = _matrix_cache.get(key)
            if cached and cached[0] == versions:
                _matrix_cache.move_to_end(key)
                return cached[1], cached[2]
        table = SQL.identifier(VECTOR_TABLE)
        where = SQL("source_id = ANY(%s) AND embedding_model = %s AND dim = %s", source_ids, model, dim)
        self.cr.execute(SQL("SELECT count(*) FROM %s WHERE %s", table, where))
        count = self.cr.fetchone()[0]
        ids = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, dim), dtype=np.float32)
        # Pages of rows (keyset on chunk_id): libpq holds a whole result in
        # memory and refuses one over 1 GB (100k x 1,536 values are 1.2 GB).
        done, last = 0, 0
        while done < count:
            self.cr.execute(SQL("SELECT chunk_id, array_send(embedding) FROM %s WHERE %s AND chunk_id > %s"
                                " ORDER BY chunk_id LIMIT %s", table, where, last, LOAD_PAGE))
            rows = self.cr.fetchall()
            if not rows:
                break
            page = slice(done, done + len(rows))
            ids[page] = [row[0] for row in rows]
            matrix[page] = _from_array_send(b"".join(row[1] for row in rows), len(rows), dim)
            done, last = done + len(rows), rows[-1][0]
        ids, matrix = ids[:done], matrix[:done]
        # stored vectors are unit already (as_vector); this only removes the
        # float32 rounding, in place (no second matrix in memory)
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        norms[norms == 0] = 1.0
        matrix /= norms[:, None]
        with _cache_lock:
            _matrix_cache[key] = (versions, ids, matrix)
            _matrix_cache.move_to_end(key)
            while len(_matrix_cache) > 1 and sum(v[2].nbytes for v in _matrix_cache.values()) > CACHE_BYTES:
                _matrix_cache.popitem(last=False)
        return ids, matrix

    def _search_numpy(self, vector, model, source_ids, limit):
        ids, matrix = self._matrix(model, vector.size, source_ids)
        if not ids.size:
            return []
        query = vector / np.linalg.norm(vector)
        scores = matrix @ query
        k = min(limit, ids.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < ids.size else np.arange(ids.size)
        ranked = sorted(((_score(scores[i]), int(ids[i])) for i in top), key=lambda r: (-r[0], r[1]))
        return [(chunk_id, score) for score, chunk_id in ranked]

    def keyword_search(self, terms, source_ids, limit: int = 5) -> list[tuple[int, float]]:
        """Chunks of ``source_ids`` whose content contains some of ``terms``
        (case-insensitive substrings; for sources without embeddings), as
        ``(chunk_id, share of the distinct terms found, in (0, 1])``, best
        first, ties by chunk id. At most ``KEYWORD_MAX_TERMS`` terms of
        ``KEYWORD_MAX_CHARS`` characters are searched: ILIKE lowers the
        pattern again for every row, and one 1 MB term took a minute over
        10,000 chunks."""
        words = sorted({t.strip().lower()[:KEYWORD_MAX_CHARS] for t in terms or ()
                        if isinstance(t, str) and t.strip()})[:KEYWORD_MAX_TERMS]
        source_ids = sorted({int(i) for i in source_ids or ()})
        if not words or not source_ids or int(limit) <= 0:
            return []
        patterns = ["%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words]
        self.cr.execute(SQL(
            """
            SELECT id, found::float / %(count)s
              FROM (SELECT c.id, (SELECT count(*) FROM unnest(%(patterns)s::text[]) p
                                   WHERE c.content ILIKE p) AS found
                      FROM %(chunks)s c
                     WHERE c.source_id = ANY(%(sources)s) AND c.content ILIKE ANY(%(patterns)s::text[])) m
          ORDER BY found DESC, id
             LIMIT %(limit)s
            """,
            count=len(words), patterns=patterns, chunks=SQL.identifier(CHUNK_TABLE),
            sources=source_ids, limit=int(limit),
        ))
        return [(chunk_id, _score(score)) for chunk_id, score in self.cr.fetchall()]


def _score(value) -> float:
    """A similarity as a finite Python float clamped to [-1, 1]."""
    value = float(value)
    return max(-1.0, min(1.0, value)) if math.isfinite(value) else -1.0


def _copy_binary(chunk_ids, models, matrix) -> io.BytesIO:
    """PostgreSQL binary COPY data for rows ``(chunk_id int, model varchar,
    dim int, embedding real[])`` (``matrix``: n x dim float32)."""
    n, dim = matrix.shape
    body = np.empty((n, dim), dtype=[("length", ">i4"), ("value", ">f4")])
    body["length"] = 4
    body["value"] = matrix
    array_header = struct.pack(">iiIii", 1, 0, 700, dim, 1)  # 1-d, no nulls, float4, dim, lower bound 1
    array_length = len(array_header) + body.itemsize * dim
    out = io.BytesIO()
    out.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
    for i in range(n):
        model = models[i].encode()
        out.write(struct.pack(">hii", 4, 4, int(chunk_ids[i])))
        out.write(struct.pack(">i", len(model)) + model)
        out.write(struct.pack(">iii", 4, dim, array_length) + array_header)
        out.write(body[i].tobytes())
    out.write(struct.pack(">h", -1))
    out.seek(0)
    return out


def _from_array_send(data: bytes, n: int, dim: int) -> np.ndarray:
    """The n x dim float32 matrix from ``n`` concatenated ``array_send`` of
    1-d ``real[]`` of ``dim`` values (20 header bytes, then length and value
    per element, big-endian)."""
    if not n:
        return np.zeros((0, dim), dtype=np.float32)
    words = np.frombuffer(data, dtype=">f4").reshape(n, 5 + 2 * dim)
    return words[:, 6::2].astype(np.float32)
