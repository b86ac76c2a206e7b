#!/usr/bin/env bash
# Installs what building and testing the site needs, each tool only when the right version is
# missing: the wasm32 target, trunk, wasm-bindgen-cli (the exact version in Cargo.lock), wasm-opt
# (npm binaryen; Debian's and crates.io's are too old for current wasm-bindgen output) and,
# with --browser, Debian's Chromium and ChromeDriver. Nothing is downloaded but packages from
# the registries (crates.io, npm, Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14          # 0.22 needs rustc >= 1.96.1
BINARYEN_VERSION=132.0.0
TOOLS="$PWD/tools"             # npm packages live here (git-ignored)
export PATH="$TOOLS/node_modules/.bin:$HOME/.cargo/bin:$PATH"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
    echo "== installing trunk $TRUNK_VERSION (several minutes, once)"
    cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# wasm-bindgen-cli must equal the wasm-bindgen in Cargo.lock; without --locked because its own
# lockfile names a webpki-roots version the registry no longer serves.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[" ]/, "", $0); sub("version=", "", $0); print; exit}' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ]; then
    echo "== installing wasm-bindgen-cli $WB_VERSION"
    cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi

if [ "$("$TOOLS/node_modules/.bin/wasm-opt" --version 2>/dev/null | awk '{print $3}' || true)" != "${BINARYEN_VERSION%%.*}" ]; then
    echo "== installing wasm-opt (npm binaryen@$BINARYEN_VERSION)"
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund "binaryen@$BINARYEN_VERSION" >/dev/null
fi

if [ "${1:-}" = "--browser" ]; then
    if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
        echo "== installing Debian chromium and chromium-driver"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    fi
fi

# So that `cargo build --offline` inside trunk finds every crate.
cargo fetch --locked >/dev/null
