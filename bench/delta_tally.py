#!/usr/bin/env python3
"""bench/delta's bookkeeping: reads manifests and the servers' own logs, and prints the
table and the goals. Nothing here trusts the client: bytes and requests come from what
nginx or the misbehaving server logged for the run.

    delta_tally.py file MANIFEST.json MODEL          JSON of the model's first file entry
    delta_tally.py count LOG FORMAT FROM_LINE SITE   JSON of the requests LOG holds after line
                                                     FROM_LINE for /SITE/… (FORMAT: nginx, or
                                                     misbehaving)
    delta_tally.py report RESULTS.jsonl              the table and the goals (markdown);
                                                     exits 1 when a hash was wrong
"""
import json, statistics, sys


def file_entry(manifest_path, model):
    manifest = json.load(open(manifest_path))
    entry = manifest["models"][model]
    files = entry["files"]
    return {"version": entry.get("version"), **files[0]}


def parse(line, fmt):
    """(status, bytes, range, path) of one log line."""
    if fmt == "nginx":  # $status $body_bytes_sent $request_uri "$http_range"
        status, sent, path, rng = line.rstrip("\n").split(" ", 3)
        rng = rng.strip('"')
        return int(status), int(sent), ("-" if rng in ("", "-") else rng), path
    status, sent, rng, path = line.rstrip("\n").split(" ", 3)  # the misbehaving server's answer log
    return int(status), int(sent), rng, path


def count(log, fmt, from_line, site):
    with open(log) as f:
        lines = f.readlines()[from_line:]
    totals = {"bytes": 0, "requests": 0, "kinds": {}, "artifact_statuses": [], "artifact_ranges": [],
              "artifact_requests": 0, "artifact_bytes": 0, "index_bytes": 0, "manifest_bytes": 0, "other_bytes": 0}
    prefix = "/%s/" % site
    for line in lines:
        status, sent, rng, path = parse(line, fmt)
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix):].split("?")[0]
        if rest.endswith(".mcsx"):
            kind = "index"
        elif rest.startswith("models/"):
            kind = "artifact"
        elif rest == "manifest.json":
            kind = "manifest"
        else:
            kind = "other"
        totals["bytes"] += sent
        totals["requests"] += 1
        totals["kinds"][kind] = totals["kinds"].get(kind, 0) + 1
        totals[kind + "_bytes"] += sent
        if kind == "artifact":
            totals["artifact_requests"] += 1
            totals["artifact_statuses"].append(status)
            totals["artifact_ranges"].append(rng)
    return totals


def mib(n):
    return "%.2f MiB" % (n / 1048576) if n >= 1048576 else "%.1f KiB" % (n / 1024)


SERVER_NAMES = {"nginx": "nginx", "ok": "honest", "multirangewhole": "multi-range → 200", "norange": "Range ignored",
                "corruptsegment": "honest, 1 corrupt segment"}


def report(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    bad_hash = [r for r in rows if not r.get("sha_ok")]
    w = print
    w("| pair | server | new file | fetched: artifact + index | manifest | requests (changed runs) | truth: changed + index | ratio | blockmap (electron-builder) | update / full download wall | peak RSS update / full | SHA-256 |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    goals = []
    for r in rows:
        fetched = r["fetched_artifact"] + r["fetched_index"]
        truth = r["changed_bytes"] + r["index_bytes"]
        ratio = fetched / truth if truth else float("nan")
        bm = r.get("blockmap")
        bm_text = "—"
        if bm:
            bm_text = "%s, %d req%s" % (mib(bm["fetched"]), bm["requests"], " (falls back whole: %s)" % bm["fallback"] if bm["fallback"] else "")
        upd, full = statistics.median(r["update_seconds"]), statistics.median(r["full_seconds"])
        w("| %s | %s | %s | %s | %d B | %d (%d) | %s | %.4f | %s | %.2f s / %.2f s | %.1f / %.1f MiB | %s |" % (
            r["pair"], SERVER_NAMES.get(r["server"], r["server"]), mib(r["size"]), mib(fetched), r["fetched_manifest"],
            r["requests"], r["runs"], mib(truth), ratio, bm_text, upd, full, r["peak_rss_kib"] / 1024,
            r["full_peak_rss_kib"] / 1024, "ok" if r.get("sha_ok") else "WRONG"))
        name = "%s / %s" % (r["pair"], SERVER_NAMES.get(r["server"], r["server"]))
        if r["server"] == "corruptsegment":
            extra = fetched - truth
            goals.append((name, "a corrupt segment is repaired by refetching that segment only",
                          0 < extra <= r["largest_segment"] and r["sha_ok"],
                          "fetched %d B = truth + %d B (the largest segment is %d B); %d requests for %d changed runs; artifact requests: %s"
                          % (fetched, extra, r["largest_segment"], r["requests"], r["runs"],
                             ", ".join("%s %s" % (st, g) for st, g in zip(r["artifact_statuses"], r["artifact_ranges"])))))
            goals.append((name, "result matches the manifest's SHA-256", bool(r["sha_ok"]), r.get("sha_detail", "")))
            continue
        if r["server"] == "norange":
            goals.append((name, "Range ignored: <= 1.01 x the full file", fetched <= 1.01 * r["size"],
                          "%d B fetched for a %d B file (%.4f x)" % (fetched, r["size"], fetched / r["size"])))
            goals.append((name, "Range ignored: one request for the file", r["artifact_requests"] == 1,
                          "%d requests for the artifact: %s" % (r["artifact_requests"], ", ".join(
                              "%s %s" % (st, g)
                              for st, g in zip(r["artifact_statuses"], r["artifact_ranges"])))))
        else:
            goals.append((name, "fetched <= 1.02 x (changed segments + index)", ratio <= 1.02,
                          "%d / %d = %.4f" % (fetched, truth, ratio)))
            goals.append((name, "requests <= changed runs + 2", r["requests"] <= r["runs"] + 2,
                          "%d requests, %d changed runs (%s)" % (r["requests"], r["runs"], json.dumps(r["kinds"], sort_keys=True))))
        if bm:
            goals.append((name, "never more than the blockmap approach", fetched + r["fetched_manifest"] <= bm["fetched"],
                          "modelcast %d B (manifest included) vs blockmap %d B (both maps included)" % (fetched + r["fetched_manifest"], bm["fetched"])))
        if r["pair"] == "c" and r["server"] != "norange":
            total = fetched + r["fetched_manifest"]
            goals.append((name, "(c) fetches <= 1 MiB", total <= 1048576, "%d B (artifact %d + index %d + manifest %d)"
                          % (total, r["fetched_artifact"], r["fetched_index"], r["fetched_manifest"])))
        if r["pair"] == "d":
            goals.append((name, "(d) fallback <= 1.01 x the full file", fetched <= 1.01 * r["size"],
                          "%d B for %d B (%.4f x)" % (fetched, r["size"], fetched / r["size"])))
        if r["server"] == "nginx":
            goals.append((name, "update wall time <= a full download's (nginx, loopback)", upd <= full,
                          "median %.3f s vs %.3f s (updates %s; full downloads %s)" % (upd, full, r["update_seconds"], r["full_seconds"])))
        goals.append((name, "peak memory < 64 MiB", r["peak_rss_kib"] < 65536 and r["full_peak_rss_kib"] < 65536,
                      "update %.1f MiB, full download %.1f MiB" % (r["peak_rss_kib"] / 1024, r["full_peak_rss_kib"] / 1024)))
        goals.append((name, "result matches the manifest's SHA-256", bool(r["sha_ok"]), r.get("sha_detail", "")))
    w()
    w("| pair / server | goal | result | figures |")
    w("|---|---|---|---|")
    for name, goal, ok, detail in goals:
        w("| %s | %s | %s | %s |" % (name, goal, "met" if ok else "**MISSED**", detail))
    missed = sum(1 for g in goals if not g[2])
    w()
    w("%d goal checks: %d met, %d missed" % (len(goals), len(goals) - missed, missed))
    return 1 if bad_hash else 0


def main(argv):
    if argv[:1] == ["file"] and len(argv) == 3:
        print(json.dumps(file_entry(argv[1], argv[2])))
        return 0
    if argv[:1] == ["count"] and len(argv) == 5:
        print(json.dumps(count(argv[1], argv[2], int(argv[3]), argv[4])))
        return 0
    if argv[:1] == ["report"] and len(argv) == 2:
        return report(argv[1])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
