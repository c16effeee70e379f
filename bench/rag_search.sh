#!/usr/bin/env bash
# bash bench/rag_search.sh: the knowledge search benchmark (bench/rag_search.py:
# pgvector HNSW vs NumPy vs raw pgvector SQL, index build, recall@5) in
# `odoo-bin shell` on the test database left by `make test`
# (AGENTIC_AI_TEST_DB); everything it writes is rolled back.
# RAG_BENCH_SIZES (default 10000,100000), RAG_BENCH_QUERIES (200) and
# RAG_BENCH_EF_SEARCH (hnsw.ef_search, default the product's), RAG_BENCH_M and
# RAG_BENCH_EF_CONSTRUCTION (HNSW build, default the product's) and
# RAG_BENCH_EXTRA_EF_SEARCH (more ef_search values on the same graph, e.g. 100,300).
source "$(dirname "$0")/../dev/env.sh"
export ODOO RAG_BENCH_SIZES RAG_BENCH_QUERIES RAG_BENCH_EF_SEARCH RAG_BENCH_M RAG_BENCH_EF_CONSTRUCTION RAG_BENCH_EXTRA_EF_SEARCH
# no address-space limit: the NumPy matrix of 100k x 1,536 is 586 MiB next to
# the benchmark's own copy of the vectors
odoo_bin shell -d "${AGENTIC_AI_TEST_DB:-agentic_test}" --no-http --log-level=warn --limit-memory-hard=0 < "$ROOT/bench/rag_search.py"
