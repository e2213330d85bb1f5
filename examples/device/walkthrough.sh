#!/bin/sh
# docs/client.md's client walkthrough: publish with the CLI, run the device, publish again,
# run it again, roll back, then ship a retrained model the device fetches only the changed
# part of. Needs modelcast and modelcast-device on PATH (swift build, then
# PATH="$PWD/.build/debug:$PATH") and Python's gguf package (pip install gguf: llama.cpp's
# writer makes the retrained models); PORT picks the local server's port.
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
# A retrain: 2.0.0 is a 23 MB llama-shaped GGUF, 2.1.0 the same with only a new chat template.
MAKE="$EXAMPLES/../bench/delta_models.py"
mkdir v2.0 v2.1
python3 "$MAKE" gguf v2.0/tiny-llm.gguf --layers 2 --width 512 --vocab 6000 > /dev/null
python3 "$MAKE" gguf v2.1/tiny-llm.gguf --layers 2 --width 512 --vocab 6000 --template "{{ messages }}" > /dev/null
# 2.0.0 changes the vocabulary, a breaking interface change: publish refuses it unless it is
# intended (--interface-change) and min_app_version rises with it. 2.1.0 changes only the chat
# template, a compatible change: no flags (docs/interface-contract.md).
publish v2.0/tiny-llm.gguf --version 2.0.0 --interface-change --min-app-version 2.0
launch "after publishing 2.0.0"
publish v2.1/tiny-llm.gguf --version 2.1.0 --min-app-version 2.0
launch "after publishing 2.1.0, a new chat template (only the changed bytes are fetched)"
