#!/usr/bin/env bash
# The bundled data in the terminal (the site, `scripts/serve.sh`, shows the same numbers): builds
# the `repoprobe` CLI and scores everything in public-data/: the paper's case studies, the
# paper's own tables (with the audit of what they get wrong) and the synthetic demo results.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --release -p repoprobe-cli
bin=target/release/repoprobe
echo "== validate"
"$bin" validate public-data/sample public-data/reported public-data/demo
echo
echo "== the paper's case studies (reconstructed), missing answers left out"
"$bin" score public-data/sample public-data/reported --missing exclude
echo
echo "== synthetic demo results (labelled synthetic), by category"
"$bin" score public-data/demo --by category
