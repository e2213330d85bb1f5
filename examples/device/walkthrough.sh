#!/bin/sh
# The README's client walkthrough: publish with the CLI, run the device, publish again,
# run it again, roll back. Needs modelcast and modelcast-device on PATH (swift build,
# then PATH="$PWD/.build/debug:$PATH"); PORT picks the local server's port.
set -eu
EXAMPLES="$(cd "$(dirname "$0")/.." && pwd)"
PORT="${PORT:-8787}"
BASE="http://127.0.0.1:$PORT/models"
WORK="$(mktemp -d)"
cd "$WORK"
modelcast keygen --unencrypted --public-key demo.pub --secret-key demo.key > /dev/null
publish() { modelcast publish "$@" --name tiny-llm --base-url "$BASE" --to site --sign demo.key > /dev/null 2>&1; }
launch() { echo "== $1"; modelcast-device --manifest "$BASE/manifest.json" --dir phone --public-key demo.pub 2> /dev/null; }

publish "$EXAMPLES/models/tiny-llm.gguf" --version 1.0.0
modelcast serve site --port "$PORT" --base-path /models > /dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER; rm -rf "$WORK"' EXIT
until modelcast-device --check --manifest "$BASE/manifest.json" --dir probe > /dev/null 2>&1; do sleep 0.1; done

launch "first launch"
launch "next launch: nothing new (HTTP 304)"
publish "$EXAMPLES/models/tiny-llm.gguf" "$EXAMPLES/models/tiny-llm-mmproj.gguf" --version 1.1.0
launch "after publishing 1.1.0 with its mmproj"
modelcast rollback site --version 1.0.0 --sign demo.key > /dev/null 2>&1
launch "after rolling back to 1.0.0 (kept on the phone: nothing is downloaded)"
