#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for modelcast's S3 tests (loopback only).

    fault_proxy.py LISTEN_PORT UPSTREAM_PORT RULES_FILE

Forwards every request to 127.0.0.1:UPSTREAM_PORT (the moto S3 server) unless a
rule in RULES_FILE (JSON, re-read on every request) matches it first:

    [{"method": "PUT", "contains": "manifest.json", "action": "503", "times": 2}, ...]

"contains" is matched against the request path and query; "header" (optional)
makes a rule match only requests carrying a header whose name starts with it
(case-insensitive). Actions:
  503            answer 503 SlowDown without forwarding
  reset          close the connection without forwarding or answering
  lose-response  forward the request, then close the connection without answering
  delay:SECONDS  read the request, wait that long, then forward it as usual
  hold:NAME      read the request, wait until the file RULES_FILE + ".NAME"
                 exists (at most 300 s), then forward it as usual: a test
                 orders two writers' requests exactly (RULES_FILE + ".NAME.waiting"
                 is created when a request starts waiting)
  unsupported-header  answer 400 InvalidArgument "Unsupported header 'NAME'
                 received for this API call." naming the matched header, as
                 Backblaze B2 answers S3 checksum headers (every matching
                 request: "times" and "skip" do not apply)
  block          read the request and never forward nor answer it (the test
                 kills the client meanwhile: a write that never happened)
"methods" (a list) may stand for "method": the rule matches any of them.
"times" (default 1) is how many matching requests the rule applies to, after
"skip" (default 0) matching requests were let through untouched. Every
request is appended to RULES_FILE + ".log" as "METHOD PATH -> outcome".
"""
import http.client
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LISTEN, UPSTREAM, RULES = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
LOCK = threading.Lock()
USED = {}


def carried_header(rule, headers):
    """The name of the first request header the rule's "header" prefix matches ("" without one)."""
    prefix = rule.get("header")
    if prefix is None:
        return ""
    for name in headers.keys():
        if name.lower().startswith(prefix.lower()):
            return name.lower()
    return None


def matching_rule(method, path, headers):
    try:
        with open(RULES) as f:
            rules = json.load(f)
    except (OSError, ValueError):
        return None
    with LOCK:
        for index, rule in enumerate(rules):
            key = json.dumps(rule, sort_keys=True) + str(index)
            header = carried_header(rule, headers)
            methods = rule.get("methods") or [rule.get("method", method)]
            if method in methods and rule.get("contains", "") in path and header is not None:
                if rule["action"] == "unsupported-header":
                    return "unsupported-header:" + header
                seen = USED.get(key, 0)
                if seen < rule.get("skip", 0) + rule.get("times", 1):
                    USED[key] = seen + 1
                    if seen >= rule.get("skip", 0):
                        return rule["action"]
                    return None
    return None


def log(line):
    with LOCK, open(RULES + ".log", "a") as f:
        f.write(line + "\n")


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        action = matching_rule(self.command, self.path, self.headers)
        log("%s %s -> %s" % (self.command, self.path, action or "forwarded"))
        if action and action.startswith("unsupported-header:"):
            name = action.split(":", 1)[1]
            payload = ("<?xml version='1.0' encoding='UTF-8'?><Error><Code>InvalidArgument</Code><Message>Unsupported header '%s' received for this API call.</Message></Error>" % name).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            return
        if action == "503":
            payload = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code><Message>injected</Message></Error>"
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if action == "block":
            self.connection.settimeout(1)
            deadline = time.time() + 600
            while time.time() < deadline:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        break
                except socket.timeout:
                    continue
                except OSError:
                    break
            self.close_connection = True
            return
        if action == "reset":
            self.abort()
            return
        if action and action.startswith("delay:"):
            time.sleep(float(action.split(":", 1)[1]))
        if action and action.startswith("hold:"):
            gate = RULES + "." + action.split(":", 1)[1]
            open(gate + ".waiting", "a").close()  # the test sees the request has arrived
            deadline = time.time() + 300
            while not os.path.exists(gate) and time.time() < deadline:
                time.sleep(0.02)
        upstream = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        upstream.close()
        if action == "lose-response":
            self.abort()
            return
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                self.send_header(name, value)
        # A HEAD answer carries the object's length, not the (empty) body's.
        length = response.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length if length is not None else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def abort(self):
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", LISTEN), Proxy)
print("ready", flush=True)
server.serve_forever()
