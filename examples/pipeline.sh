#!/usr/bin/env bash
# The last step of a training pipeline: publish the new model version to a
# directory, preview it as a CDN would serve it, and verify it as a device would.
#
#   examples/pipeline.sh VERSION [SITE_DIR]
#
# MODELCAST  the modelcast binary (default: `modelcast` on PATH)
# PORT       where the preview server listens on 127.0.0.1 (default: 8765)
#
# In production, replace `serve` + the http base URL with your CDN's https URL,
# upload SITE_DIR with one of SITE_DIR/_modelcast/upload-*.sh (manifest last),
# and run `modelcast verify https://…/manifest.json` against the real host.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELCAST=${MODELCAST:-modelcast}
VERSION=${1:?usage: examples/pipeline.sh VERSION [SITE_DIR]}
SITE=${2:-/tmp/modelcast-site}
PORT=${PORT:-8765}
BASE="http://127.0.0.1:$PORT/models"

echo "== publish tiny-llm $VERSION to $SITE" >&2
"$MODELCAST" publish examples/models/tiny-llm.gguf examples/models/tiny-llm-mmproj.gguf \
    --name tiny-llm --version "$VERSION" --base-url "$BASE" --to "$SITE" \
    --meta "release_notes=pipeline build $VERSION"

echo "== serve $SITE on 127.0.0.1:$PORT" >&2
URL_FILE=$(mktemp)
"$MODELCAST" serve "$SITE" --port "$PORT" >"$URL_FILE" 2>/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -f "$URL_FILE"' EXIT
for _ in $(seq 1 100); do
    [[ -s $URL_FILE ]] && break
    kill -0 "$SERVER" 2>/dev/null || { echo "serve exited early" >&2; exit 1; }
    sleep 0.1
done
[[ -s $URL_FILE ]] || { echo "serve did not start" >&2; exit 1; }

echo "== verify $BASE/manifest.json as a device would" >&2
"$MODELCAST" verify "$BASE/manifest.json" --allow-http
