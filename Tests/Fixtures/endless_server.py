#!/usr/bin/env python3
"""A static server that misbehaves on the objects a rules file names, and counts what it sends.

    endless_server.py ROOT PORT RULES_FILE STATUS_FILE

Serves ROOT on 127.0.0.1:PORT under /models/ (Range and ETag supported, keep-alive),
the layout `modelcast publish --base-url http://127.0.0.1:PORT/models` writes. Before
answering, it reads RULES_FILE (JSON, re-read on every request; missing means none):

    [{"target": "artifact", "body": "chunked"}, {"target": "manifest", "body": "trickle", "rate": 12}]

The first rule whose "target" is the kind of object asked for applies ("times", optional,
is how many answers it applies to). Kinds: manifest (a manifest.json), minisig (any
.minisig), sigs (any .sigs signature list), keyset (a key set document, keys/N.json),
index (a segment index, .mcsx), bundle (a model signature, /signatures/), artifact
(anything else under models/). Bodies:

  lying    Content-Length: 1 TiB, keep-alive; the object's bytes, then zeros for ever
  close    no Content-Length, Connection: close; the object's bytes, then zeros for ever
  chunked  Transfer-Encoding: chunked; the object's bytes, then chunks of zeros for ever
  trickle  the honest answer (200, or 206 for a Range), its body "rate" bytes a second
  redirect a 302 to the same URL whose own body (chunked, zeros) never ends: with
           "times": 1, the request it redirects to gets the honest answer
  silent   reads the request and never answers
  huge     a finite body of "size" bytes (the object's, then spaces): with an honest
           Content-Length, or with "length": false none and the connection closed after it

A shaped answer ends (its connection closed) once its rule is no longer in RULES_FILE,
so a test that changes the rules stops the floods it started. Every answer a rule shaped
is counted: STATUS_FILE (JSON, rewritten every 0.1 s) maps
the client's port of each such connection to {"target", "body", "path", "sent" (body
bytes the kernel accepted, counted per send), "order" (0 for the first such answer, 1 for the
next…), "open" (false once the client went away
or the answer ended), "seconds" (from the request to now or to its end)}. A test
compares "sent" with what the client let itself read. Every request is logged on
stderr as "METHOD PATH RANGE".
"""
import hashlib
import itertools
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORT, RULES, STATUS = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
LOCK = threading.Lock()
USED = {}
CONNECTIONS = {}
ORDER = itertools.count()
ZEROS = bytes(16 << 10)


def kind_of(rest):
    name = rest.rsplit("/", 1)[-1]
    if name.endswith(".minisig"):
        return "minisig"
    if name.endswith(".sigs"):
        return "sigs"
    if rest.startswith("keys/") and name.endswith(".json"):
        return "keyset"
    if name == "manifest.json" and not rest.startswith("manifests/"):
        return "manifest"
    if name.endswith(".mcsx"):
        return "index"
    if "/signatures/" in rest:
        return "bundle"
    return "artifact"


def rule_for(kind):
    rules = current_rules()
    with LOCK:
        for index, rule in enumerate(rules):
            if rule.get("target") != kind:
                continue
            used = USED.get(index, 0)
            if "times" in rule and used >= rule["times"]:
                continue
            USED[index] = used + 1
            return rule
    return None


def current_rules():
    try:
        with open(RULES) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


class Withdrawn(Exception):
    """The rule that shaped an answer is no longer in the rules file."""


def write_status():
    while True:
        with LOCK:
            now = time.time()
            status = {str(port): dict(entry, seconds=round((entry["ended"] or now) - entry["start"], 3))
                      for port, entry in CONNECTIONS.items()}
        for entry in status.values():
            entry.pop("start", None)
            entry.pop("checked", None)
            entry.pop("ended", None)
        temporary = STATUS + ".tmp"
        with open(temporary, "w") as f:
            json.dump(status, f)
        os.replace(temporary, STATUS)
        time.sleep(0.1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        sys.stderr.write("GET %s %s\n" % (self.path, self.headers.get("Range") or "-"))
        sys.stderr.flush()
        path = self.path.split("?")[0]
        if not path.startswith("/models/"):
            return self.plain(404, b"not found")
        rest = path[len("/models/"):]
        file = os.path.join(ROOT, rest)
        if ".." in rest.split("/") or not os.path.isfile(file):
            return self.plain(404, b"not found")
        with open(file, "rb") as f:
            body = f.read()
        kind = kind_of(rest)
        rule = rule_for(kind)
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        status, headers = 200, {"ETag": etag, "Content-Type": "application/octet-stream"}
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes=") and self.headers.get("If-Range") in (None, etag):
            start, _, end = wanted[6:].partition("-")
            start = int(start)
            end = min(int(end) if end else len(body) - 1, len(body) - 1)
            if start >= len(body):
                return self.plain(416, b"")
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, end, len(body))
            body = body[start:end + 1]
            status = 206
        if rule is None:
            return self.answer(status, headers, body)
        shape = rule["body"]
        self.rule = rule
        if shape == "silent":
            time.sleep(600)
            return
        with LOCK:
            entry = {"target": kind, "body": shape, "path": rest, "sent": 0, "open": True, "order": next(ORDER),
                     "start": time.time(), "ended": None}
            CONNECTIONS[self.client_address[1]] = entry
        try:
            if shape == "trickle":
                self.send_head(status, dict(headers, **{"Content-Length": str(len(body))}))
                self.trickle(body, float(rule.get("rate", 1)), entry)
            elif shape == "lying":
                self.send_head(status, dict(headers, **{"Content-Length": str(1 << 40)}))
                self.endless(body, entry, chunked=False)
            elif shape == "close":
                self.send_head(status, dict(headers, Connection="close"))
                self.endless(body, entry, chunked=False)
            elif shape == "chunked":
                self.send_head(status, dict(headers, **{"Transfer-Encoding": "chunked"}))
                self.endless(body, entry, chunked=True)
            elif shape == "huge":
                padded = body + b" " * max(0, int(rule.get("size", 1 << 20)) - len(body))
                if rule.get("length", True):
                    self.send_head(status, dict(headers, **{"Content-Length": str(len(padded))}))
                else:
                    self.send_head(status, dict(headers, Connection="close"))
                for start in range(0, len(padded), len(ZEROS)):
                    self.send_counted(padded[start:start + len(ZEROS)], entry)
            elif shape == "redirect":
                self.send_head(302, {"Location": self.path, "Transfer-Encoding": "chunked"})
                self.endless(b"", entry, chunked=True)
        except (OSError, Withdrawn):
            pass  # the client went away, or the test withdrew the rule
        finally:
            with LOCK:
                entry["open"] = False
                entry["ended"] = time.time()
            self.close_connection = True

    def send_head(self, status, headers):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def send_counted(self, data, entry):
        now = time.time()
        if now - entry.get("checked", 0) > 0.1:
            entry["checked"] = now
            if self.rule not in current_rules():
                raise Withdrawn()
        view = memoryview(data)
        while view:
            sent = self.connection.send(view)
            view = view[sent:]
            with LOCK:
                entry["sent"] += sent

    def endless(self, body, entry, chunked):
        def frame(data):
            return b"%x\r\n" % len(data) + data + b"\r\n" if chunked else data
        for start in range(0, len(body), len(ZEROS)):
            self.send_counted(frame(body[start:start + len(ZEROS)]), entry)
        while True:
            self.send_counted(frame(ZEROS), entry)

    def trickle(self, body, rate, entry):
        step = max(1, int(rate / 10))
        for start in range(0, len(body), step):
            self.send_counted(body[start:start + step], entry)
            time.sleep(step / rate)

    def answer(self, status, headers, body):
        self.send_head(status, dict(headers, **{"Content-Length": str(len(body))}))
        self.wfile.write(body)

    def plain(self, status, body):
        self.send_head(status, {"Content-Type": "text/plain", "Content-Length": str(len(body))})
        self.wfile.write(body)


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
threading.Thread(target=write_status, daemon=True).start()
print("ready", flush=True)
server.serve_forever()
