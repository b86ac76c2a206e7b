#!/usr/bin/env bash
# Installs what the tests need and runs every test. CI (.ci/run) runs exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# The core must build for the browser too: the site compiles it to wasm.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

echo "== unit, property, golden and CLI tests"
cargo test --locked --workspace --exclude repoprobe-site

echo "== the core compiles for wasm32-unknown-unknown"
cargo check --locked -p repoprobe-core --target wasm32-unknown-unknown

echo "== the published JSON Schemas match the Rust types"
cargo run --locked -q -p repoprobe-cli -- schema --out-dir target/schema-check
diff -r target/schema-check public-data/schema

echo "== the bundled data validates"
cargo run --locked -q -p repoprobe-cli -- validate public-data/sample public-data/reported public-data/demo
