#!/usr/bin/env bash
# Installs the external agent CLIs that `repoprobe answer --agent …` drives and its tests run:
# the real Claude Code, Codex and Gemini CLIs (npm `@anthropic-ai/claude-code`, `@openai/codex`,
# `@google/gemini-cli`, each pinned) into $REPO/tools, each only when that exact version is
# missing. Prints where each CLI is and its version. First, bubblewrap (Debian `bubblewrap`),
# which confines every agent process, when `bwrap` is missing.
#
# Never fails the caller: without npm or without the registry it says so and exits 0, and the
# end-to-end tests of that preset then skip with a message (under CI=true they fail, naming
# this script). Nothing is downloaded but the npm packages (Claude Code and Codex ship their
# own native binaries; Codex's comes as the optional dependency `@openai/codex-linux-x64`).
set -uo pipefail
cd "$(dirname "$0")/.."

# `answer` refuses external agents without bwrap (unless --no-sandbox), and the confinement
# tests fail rather than skip without it: a failed install shows there, not here.
if ! command -v bwrap >/dev/null; then
    echo "== installing Debian bubblewrap"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }; then
        echo "setup-agents: could not install the Debian package bubblewrap; agent runs will be refused"
    fi
fi

# The versions the end-to-end tests were last run against (docs/live-runs.md, "repoprobe answer", "Versions run").
CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_CLI_VERSION=0.61.0
TOOLS="$PWD/tools"             # npm packages live here (git-ignored)

installed_version() {
    # The package.json is the cheaper truth than running `--version`.
    local pkg="$TOOLS/node_modules/$1/package.json"
    [ -f "$pkg" ] && node -e 'console.log(require(process.argv[1]).version)' "$pkg" 2>/dev/null
}

# install PACKAGE VERSION BIN: npm-installs PACKAGE@VERSION unless that version and BIN are there.
install() {
    local package=$1 version=$2 bin="$TOOLS/node_modules/.bin/$3"
    if [ "$(installed_version "$package" || true)" = "$version" ] && [ -x "$bin" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "setup-agents: npm not found; $package not installed (its end-to-end tests will skip (and fail under CI=true))"
        return 0
    fi
    echo "== installing $package@$version into $TOOLS"
    mkdir -p "$TOOLS"
    if ! npm install --prefix "$TOOLS" --no-audit --no-fund --save-exact \
            "$package@$version" >/dev/null; then
        echo "setup-agents: npm could not install $package@$version" \
             "(registry unreachable?); its end-to-end tests will skip (and fail under CI=true)"
    fi
}

install @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" claude
install @openai/codex "$CODEX_VERSION" codex
install @google/gemini-cli "$GEMINI_CLI_VERSION" gemini

# The version checks run each CLI with its telemetry, update checks and network off, in a
# scratch HOME (Codex and Gemini would otherwise write their state into ours).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for cli in claude codex gemini; do
    bin="$TOOLS/node_modules/.bin/$cli"
    if [ -x "$bin" ]; then
        v=$(HOME="$scratch" CODEX_HOME="$scratch" DISABLE_TELEMETRY=1 \
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
            GEMINI_TELEMETRY_ENABLED=false GEMINI_CLI_NO_RELAUNCH=true \
            timeout 60 "$bin" --version 2>/dev/null || echo "version unknown")
        echo "$cli: $bin ($v)"
    else
        echo "setup-agents: $bin is missing after install; its end-to-end tests will skip (and fail under CI=true)"
    fi
done
exit 0
