"""Knowledge search benchmark (issue 13, point 8), fed to `odoo-bin shell` by
bench/rag_search.sh on the test database; everything is rolled back.

Embeddings with real structure: the .py/.md/.rst/.js files of Odoo's addons
(the Odoo source of dev/env.sh) cut into passages of about 300 characters;
each passage's words hashed into a bag of 16,384 buckets (weights
(1 + log tf) x idf), projected to 1,536 dimensions with a seeded Gaussian
matrix. Queries are passages of other files (held out). With
RAG_BENCH_COMMON=c every vector is mixed with one shared direction (unit
vectors scaled by sqrt(1 - c^2), plus c times the direction): c 0.84 makes
unrelated texts about 0.7 apart in cosine, as some embedding models do,
which binary signatures without centring handle badly.

At each size (RAG_BENCH_SIZES, default 10000,100000 chunks): the HNSW index
build time (pgvector, one CREATE INDEX after a COPY load), then retrieval
latency p50/p95 over RAG_BENCH_QUERIES queries (default 200) of
- `VectorStore.search` on pgvector (HNSW on the centred binary signatures,
  exact re-ranking; the product's filtered query),
- the raw pgvector query (the same signature scan and re-ranking as plain
  SQL, same hnsw.ef_search and candidates, no filter, no product code),
- `VectorStore.search` on NumPy, warm (matrix cached; the cold load is shown),
and HNSW recall@5 against the exact top 5 (NumPy brute force on the same
float32 vectors).
"""
import math
import os
import re
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

import odoo

from odoo.addons.agentic_ai.engine import vector_store
from odoo.addons.agentic_ai.engine.knowledge.vector_store import VectorStore

DIM, BUCKETS, MODEL = 1536, 16384, "bench-bow-1536"
SIZES = [int(x) for x in os.environ.get("RAG_BENCH_SIZES", "10000,100000").split(",")]
QUERIES = int(os.environ.get("RAG_BENCH_QUERIES", "200"))
vector_store.EF_SEARCH = int(os.environ.get("RAG_BENCH_EF_SEARCH", vector_store.EF_SEARCH))
vector_store.HNSW_M = int(os.environ.get("RAG_BENCH_M", vector_store.HNSW_M))
vector_store.HNSW_EF_CONSTRUCTION = int(os.environ.get("RAG_BENCH_EF_CONSTRUCTION", vector_store.HNSW_EF_CONSTRUCTION))
vector_store.CANDIDATES = int(os.environ.get("RAG_BENCH_CANDIDATES", vector_store.CANDIDATES))
COMMON = float(os.environ.get("RAG_BENCH_COMMON", "0"))
# more hnsw.ef_search values measured on the same graph (product p50/p95, recall@5)
EXTRA_EF = [int(x) for x in os.environ.get("RAG_BENCH_EXTRA_EF_SEARCH", "").split(",") if x]
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def odoo_source():
    for candidate in (os.environ.get("ODOO_SRC"), os.environ.get("ODOO"), str(Path(odoo.__path__[0]).parent)):
        if candidate and (Path(candidate) / "addons").is_dir():
            return Path(candidate)
    raise SystemExit("no Odoo source tree with addons/ found (ODOO_SRC)")


def passages(files, target=300):
    """Passages of about ``target`` characters: whole lines, cut at blank
    lines once long enough."""
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
        current = []
        size = 0
        for line in text.splitlines():
            if line.strip():
                current.append(line)
                size += len(line)
            if size >= target or (not line.strip() and size >= target // 2):
                yield "\n".join(current)
                current, size = [], 0
        if size >= 40:
            yield "\n".join(current)


def bags(texts):
    """Per text: (bucket ids, term frequencies)."""
    result = []
    for text in texts:
        counts = Counter(zlib.crc32(w.lower().encode()) % BUCKETS for w in WORD.findall(text))
        result.append((np.fromiter(counts.keys(), np.int64), np.fromiter(counts.values(), np.float32)))
    return result


def embed(bag_list, idf, projection):
    """Weighted sums of projection rows: (n, DIM) float32."""
    out = np.empty((len(bag_list), DIM), dtype=np.float32)
    for start in range(0, len(bag_list), 256):
        part = bag_list[start:start + 256]
        ids = np.concatenate([b[0] for b in part])
        weights = np.concatenate([(1 + np.log(b[1])) * idf[b[0]] for b in part])
        offsets = np.cumsum([0] + [len(b[0]) for b in part[:-1]])
        out[start:start + len(part)] = np.add.reduceat(projection[ids] * weights[:, None], offsets, axis=0)
    return out


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def timed(fn, queries):
    times, results = [], []
    for q in queries:
        start = time.perf_counter()
        results.append(fn(q))
        times.append((time.perf_counter() - start) * 1000)
    return pct(times, 50), pct(times, 95), results


def main(env):
    cr = env.cr
    store = VectorStore(cr)
    if not store._has_extension():
        raise SystemExit("the vector extension is not installed on this database")
    started = time.perf_counter()
    root = odoo_source() / "addons"
    files = sorted(p for ext in ("py", "md", "rst", "js") for p in root.rglob(f"*.{ext}"))
    held_out = files[::50]
    # distinct passages (license headers and boilerplate repeat verbatim)
    texts = list(dict.fromkeys(t for t in passages(f for i, f in enumerate(files) if i % 50)
                               if len(WORD.findall(t)) >= 5))
    queries_text = [t for t in passages(held_out) if len(WORD.findall(t)) >= 5]
    rng = np.random.default_rng(19)
    queries_text = [queries_text[i] for i in rng.choice(len(queries_text), QUERIES, replace=False)]
    if len(texts) < max(SIZES):
        raise SystemExit(f"only {len(texts)} passages in {root}")
    texts = [texts[i] for i in sorted(rng.choice(len(texts), max(SIZES), replace=False))]
    data_bags, query_bags = bags(texts), bags(queries_text)
    df = np.zeros(BUCKETS, np.float32)
    for ids, _tf in data_bags:
        df[ids] += 1
    idf = np.log((1 + len(data_bags)) / (1 + df)).astype(np.float32) + 1
    projection = rng.standard_normal((BUCKETS, DIM), dtype=np.float32)
    vectors, queries = embed(data_bags, idf, projection), embed(query_bags, idf, projection)
    del projection, data_bags
    if COMMON:
        shared = rng.standard_normal(DIM).astype(np.float32)
        shared /= np.linalg.norm(shared)
        for matrix in (vectors, queries):
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix *= math.sqrt(1 - COMMON ** 2)
            matrix += COMMON * shared
    print(f"corpus: {len(texts)} passages of {root} (median {int(np.median([len(t) for t in texts]))} chars), "
          f"{len(queries)} held-out queries; embeddings {vectors.shape} in {time.perf_counter() - started:.0f} s")

    cr.execute("SELECT to_regclass('agentic_ai_knowledge_chunk') IS NOT NULL")
    if not cr.fetchone()[0]:
        cr.execute("CREATE TABLE agentic_ai_knowledge_chunk (id serial PRIMARY KEY, source_id integer NOT NULL,"
                   " content text NOT NULL)")
    VectorStore.ensure_schema(cr)
    if "agentic.ai.knowledge.source" in env:
        source_ids = env["agentic.ai.knowledge.source"].create([{"name": f"bench {i}"} for i in range(2)]).ids
    else:
        source_ids = [-1, -2]
    cr.execute(f"DROP TABLE IF EXISTS {vector_store.vec_table(DIM)}")
    rows = []
    done = 0
    query_lists = [q.tolist() for q in queries]
    for size in SIZES:
        # the first size is one source; later sizes add a second one
        source = source_ids[0] if not done else source_ids[1]
        cr.execute("INSERT INTO agentic_ai_knowledge_chunk (source_id, content) SELECT %s, unnest(%s::text[])"
                   " RETURNING id", (source, texts[done:size]))
        new_ids = sorted(r[0] for r in cr.fetchall())
        store._ensure_vec_table(DIM)
        store.rebuild_index(DIM, drop_only=True)
        start = time.perf_counter()
        store.add([(cid, MODEL, vectors[done + i]) for i, cid in enumerate(new_ids)])
        load = time.perf_counter() - start
        start = time.perf_counter()
        store.rebuild_index(DIM)
        build = time.perf_counter() - start
        rows.extend(new_ids)
        done = size
        sources = source_ids[:1] if size == SIZES[0] else source_ids
        cr.execute("ANALYZE agentic_ai_knowledge_vector; ANALYZE agentic_ai_knowledge_vec_1536")
        env["ir.config_parameter"].sudo().set_param("agentic_ai.vector_backend", False)
        env.flush_all()
        for q in query_lists[:5]:
            store.search(q, MODEL, sources)  # warm-up (plan caches, index pages)
        pg50, pg95, pg_results = timed(lambda q, s=sources: store.search(q, MODEL, s, 5), query_lists)

        cr.execute("SELECT center::vector FROM agentic_ai_knowledge_vec_center WHERE embedding_model = %s", (MODEL,))
        center = cr.fetchone()[0]

        def raw(q, center=center):
            literal = "[" + ",".join(map(repr, q)) + "]"
            cr.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(vector_store.EF_SEARCH),))
            cr.execute("WITH c AS MATERIALIZED (SELECT chunk_id, embedding FROM agentic_ai_knowledge_vec_1536"
                       " ORDER BY signature <~> binary_quantize(%s::vector - %s::vector)::bit(1536) LIMIT %s)"
                       " SELECT chunk_id FROM c ORDER BY embedding <=> %s::vector LIMIT 5",
                       (literal, center, vector_store.CANDIDATES, literal))
            return cr.fetchall()
        for q in query_lists[:5]:
            raw(q)
        raw50, raw95, _ = timed(raw, query_lists)
        cr.execute("EXPLAIN SELECT chunk_id FROM agentic_ai_knowledge_vec_1536 WHERE embedding_model = %s"
                   " AND source_id = ANY(%s) ORDER BY signature <~> binary_quantize(%s::vector - %s::vector)::bit(1536)"
                   " LIMIT 100", (MODEL, sources, "[" + ",".join(map(repr, query_lists[0])) + "]", center))
        plan = " ".join(r[0] for r in cr.fetchall())
        print(f"\n== {size} chunks x {DIM} dims ==")
        cr.execute("SELECT pg_relation_size('agentic_ai_knowledge_vec_1536_signature_idx') >> 20")
        index_mb = cr.fetchone()[0]
        print(f"load (COPY + vector tables + signatures): {load:.1f} s; HNSW signature index build"
              f" (m {vector_store.HNSW_M}, ef_construction {vector_store.HNSW_EF_CONSTRUCTION}): {build:.1f} s,"
              f" {index_mb} MB ({'HNSW index scan' if 'signature_idx' in plan else 'NO index scan'} in the"
              f" product's plan); common direction {COMMON}")
        print(f"pgvector HNSW via VectorStore.search: p50 {pg50:.2f} ms, p95 {pg95:.2f} ms")
        print(f"raw pgvector SQL (ef_search {vector_store.EF_SEARCH}, {vector_store.CANDIDATES} candidates):"
              f" p50 {raw50:.2f} ms, p95 {raw95:.2f} ms",
              flush=True)
        env["ir.config_parameter"].sudo().set_param("agentic_ai.vector_backend", "numpy")
        env.flush_all()
        start = time.perf_counter()
        store.search(query_lists[0], MODEL, sources, 5)
        cold = time.perf_counter() - start
        np50, np95, np_results = timed(lambda q, s=sources: store.search(q, MODEL, s, 5), query_lists)
        recall = np.mean([len({c for c, _s in a} & {c for c, _s in b}) / 5
                          for a, b in zip(pg_results, np_results, strict=True)])
        # a result whose exact score equals the 5th best is as right (ties)
        index = {cid: i for i, cid in enumerate(rows)}
        recall_ties = np.mean([sum(float(vectors[index[c]] @ q) / float(np.linalg.norm(vectors[index[c]])
                                   * np.linalg.norm(q)) >= b[-1][1] - 1e-6 for c, _s in a) / 5
                               for a, b, q in zip(pg_results, np_results, queries, strict=True)])
        same_top1 = np.mean([a[0][0] == b[0][0] for a, b in zip(pg_results, np_results, strict=True)])
        print(f"NumPy warm via VectorStore.search:   p50 {np50:.2f} ms, p95 {np95:.2f} ms (cold load {cold:.1f} s)")
        print(f"ratios: product/raw p95 {pg95 / raw95:.2f}; NumPy warm/pgvector p95 {np95 / pg95:.2f}")
        print(f"HNSW recall@5 vs exact: {recall:.3f}, counting ties with the 5th: {recall_ties:.3f}"
              f" (same top-1: {same_top1:.3f})", flush=True)
        env["ir.config_parameter"].sudo().set_param("agentic_ai.vector_backend", False)
        env.flush_all()
        base_ef = vector_store.EF_SEARCH
        for ef in EXTRA_EF:
            vector_store.EF_SEARCH = ef
            for q in query_lists[:5]:
                store.search(q, MODEL, sources)
            e50, e95, e_results = timed(lambda q, s=sources: store.search(q, MODEL, s, 5), query_lists)
            e_recall = np.mean([len({c for c, _s in a} & {c for c, _s in b}) / 5
                                for a, b in zip(e_results, np_results, strict=True)])
            print(f"ef_search {ef}: VectorStore.search p50 {e50:.2f} ms, p95 {e95:.2f} ms, recall@5 {e_recall:.3f}",
                  flush=True)
        vector_store.EF_SEARCH = base_ef
        vector_store._matrix_cache.clear()
    cr.rollback()
    print("\nrolled back")


main(env)  # noqa: F821 (odoo-bin shell provides env)
