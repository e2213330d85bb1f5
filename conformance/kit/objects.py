"""Which URL path an object selector in a scenario names, read from a published manifest.

A selector is `{"path": "/manifest.json"}` or `{"kind": K, ...}` with K one of
manifest, signature, artifact, segment_index, model_signature (and, for request
assertions only, key_set: keys/N.json and its signatures):
  {"kind": "artifact", "model": "m", "file": 0, "section": "release"|"rollback", "variant": "small"}
Selectors may name a snapshot (`"snapshot": "r1"`) to read that release's manifest instead.
"""

import json
import os
import urllib.parse


class SelectorError(Exception):
    pass


def manifest_path(selector):
    return selector.get("manifest", "/manifest.json")


def resolve(selector, root):
    """The URL path (starting with '/') the selector names, read from the target at root."""
    if "path" in selector:
        return selector["path"] if selector["path"].startswith("/") else "/" + selector["path"]
    kind = selector.get("kind")
    manifest_key = manifest_path(selector)
    if kind == "manifest":
        return manifest_key
    if kind == "signature":
        return manifest_key + ".minisig"
    manifest = load_manifest(root, manifest_key)
    section = manifest
    if selector.get("section") == "rollback":
        section = manifest.get("rollback") or {}
    models = section.get("models") or {}
    name = selector.get("model")
    if name not in models:
        raise SelectorError("the manifest names no model %r in %s" % (name, selector.get("section", "release")))
    model = models[name]
    if "variant" in selector:
        matches = [v for v in model.get("variants", []) if v.get("name") == selector["variant"]]
        if not matches:
            raise SelectorError("model %r has no variant %r" % (name, selector["variant"]))
        model = matches[0]
    if kind == "model_signature":
        entry = model.get("model_signature")
        if not entry:
            raise SelectorError("model %r carries no model_signature" % name)
        return url_path(entry)
    files = model.get("files") or []
    index = selector.get("file", 0)
    if index >= len(files):
        raise SelectorError("model %r has no file %d" % (name, index))
    entry = files[index]
    if kind == "artifact":
        return url_path(entry)
    if kind == "segment_index":
        if "segments" not in entry:
            raise SelectorError("file %d of model %r has no segment index" % (index, name))
        return url_path(entry["segments"])
    raise SelectorError("unknown object kind %r" % kind)


def url_path(entry):
    if "url" in entry:
        return urllib.parse.urlsplit(entry["url"]).path
    return "/" + entry["key"]


def load_manifest(root, key="/manifest.json"):
    with open(os.path.join(root, key.lstrip("/")), "rb") as handle:
        return json.load(handle)


def kinds_by_path(root, key="/manifest.json"):
    """URL path -> kind for every object the manifest at root names (both sections)."""
    kinds = {key: "manifest", key + ".minisig": "signature", key + ".sigs": "signature"}
    kinds.update(key_set_paths(root))
    try:
        manifest = load_manifest(root, key)
    except (OSError, ValueError):
        return kinds
    if not isinstance(manifest, dict):
        return kinds
    for section in (manifest, manifest.get("rollback") or {}):
        if not isinstance(section, dict):
            continue
        for model in (section.get("models") or {}).values():
            if not isinstance(model, dict):
                continue
            units = [model] + [v for v in model.get("variants", []) if isinstance(v, dict)]
            for unit in units:
                for entry in unit.get("files") or []:
                    if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                        kinds[url_path(entry)] = "artifact"
                        if isinstance(entry.get("segments"), dict) and isinstance(entry["segments"].get("url"), str):
                            kinds[url_path(entry["segments"])] = "segment_index"
                signature = unit.get("model_signature")
                if isinstance(signature, dict) and isinstance(signature.get("url"), str):
                    kinds[url_path(signature)] = "model_signature"
    return kinds


def key_set_paths(root):
    """URL path -> "key_set" for keys/1.json up to one past the newest the target holds (the
    one a client asks for to learn there is none newer), each with .minisig and .sigs."""
    newest = 0
    try:
        for name in os.listdir(os.path.join(root, "keys")):
            stem = name.split(".", 1)[0]
            if stem.isdigit() and name.startswith(stem + ".json"):
                newest = max(newest, int(stem))
    except OSError:
        pass
    if newest == 0:
        return {}
    return {"/keys/%d.json%s" % (n, ext): "key_set" for n in range(1, newest + 2) for ext in ("", ".minisig", ".sigs")}
