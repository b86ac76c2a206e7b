#!/usr/bin/env bash
# Installs the external agent CLIs that `repoprobe answer --agent …` drives and its tests run:
# today the real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned) into $REPO/tools, only
# when that exact version is missing. Prints where `claude` is. First, bubblewrap (Debian
# `bubblewrap`), which confines every agent process, when `bwrap` is missing.
#
# Never fails the caller: without npm or without the registry it says so and exits 0, and the
# end-to-end test of the Claude Code preset then skips with a message. Nothing is downloaded but
# the npm package (which ships its own native binary).
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

CLAUDE_CODE_VERSION=2.1.332    # the version the end-to-end test was last run against
TOOLS="$PWD/tools"             # npm packages live here (git-ignored)
CLAUDE="$TOOLS/node_modules/.bin/claude"

installed_version() {
    # `claude --version` prints e.g. "2.1.332 (Claude Code)"; the package.json is the cheaper truth.
    local pkg="$TOOLS/node_modules/@anthropic-ai/claude-code/package.json"
    [ -f "$pkg" ] && node -e 'console.log(require(process.argv[1]).version)' "$pkg" 2>/dev/null
}

if [ "$(installed_version || true)" != "$CLAUDE_CODE_VERSION" ] || [ ! -x "$CLAUDE" ]; then
    if ! command -v npm >/dev/null; then
        echo "setup-agents: npm not found; Claude Code not installed (its end-to-end test will skip)"
        exit 0
    fi
    echo "== installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $TOOLS"
    mkdir -p "$TOOLS"
    if ! npm install --prefix "$TOOLS" --no-audit --no-fund \
            "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null; then
        echo "setup-agents: npm could not install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
             "(registry unreachable?); its end-to-end test will skip"
        exit 0
    fi
fi

if [ -x "$CLAUDE" ]; then
    # The version check runs the native binary; telemetry and the updater stay off.
    v=$(DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
        "$CLAUDE" --version 2>/dev/null || echo "version unknown")
    echo "claude: $CLAUDE ($v)"
else
    echo "setup-agents: $CLAUDE is missing after install; its end-to-end test will skip"
fi
exit 0
