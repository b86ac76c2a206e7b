#!/usr/bin/env bash
# The main job: set up what the site needs, build it with the bundled data, and serve it on
# http://127.0.0.1:${PORT:-8080}/ (Ctrl-C to stop).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-site.sh
export PATH="$PWD/tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
trunk build --release --offline
echo "== serving dist/ on http://127.0.0.1:${PORT:-8080}/"
exec trunk serve --release --offline --no-autoreload --address 127.0.0.1 --port "${PORT:-8080}"
