#!/usr/bin/env python3
"""A deliberately misbehaving static server for modelcast's verify tests.

    misbehaving_server.py ROOT PORT [CERT KEY]

Serves ROOT on 127.0.0.1:PORT (over TLS with CERT and KEY, PEM files, when given).
Every request is logged on stderr as "METHOD PATH" (query included), so a test can
tell what was requested and what never was. The first path segment (less trailing digits)
picks a behaviour and the file lives at ROOT/<segment>/<rest>, so a site published with base URL
http://127.0.0.1:PORT/<mode> is served with that mode's fault:

  ok            correct headers (manifest no-cache; objects immutable), Range support
  gzip          gzip-encodes every response (Content-Encoding: gzip)
  norange       ignores Range and answers 200 with the whole body
  drip          sends artifact bodies one byte per second
  flaky         answers 503 to the first two requests of each path
  shortcache    objects get Cache-Control: max-age=60
  shortcdn      objects get Cache-Control: public, max-age=31536000, s-maxage=60, immutable
  quoted        objects get Cache-Control: public, max-age="31536000", immutable (a quoted value)
  longmanifest  the manifest gets Cache-Control: public, max-age=3600
  wrongtype     objects get Content-Type: text/html
  corrupt       flips one byte in the middle of every object body
  extra         appends one byte to every object body (Content-Length matches the longer body)
  redirect      answers every object with a 302 to the same path with ?moved=1 (inside
                the site's prefix), which is served normally
  redirectout   answers every object with a 302 to the same path under /ok/ (outside the
                site's prefix, on the same server)
  redirectdisguised
                answers every object with a 302 to http://2130706433:PORT/ok/<path>: 127.0.0.1
                written as one decimal number, so it looks like another host (if it is
                followed, this server sees it in its log)
  redirectmeta  answers every object with a 302 to http://169.254.169.254/latest/meta-data/
                (a cloud metadata address: it must never be requested)
  redirectloop  answers every object with a 302 to the same path with ?hop=N+1, for ever
  redirectmanifest
                answers the manifest with a 302 to /ok/manifest.json (outside its directory)
  stall         sends the headers and the first half of every object body, then nothing
  nolength      sends objects without Content-Length (connection close)
  deflate       zlib-encodes every response (Content-Encoding: deflate, the zlib format)
  br            labels the manifest Content-Encoding: br (the bytes are not brotli: Python has
                no encoder; verify must refuse the encoding by name before reading them)
  negotiate     labels the manifest Content-Encoding: br only when the request's Accept-Encoding
                offers br; otherwise serves it as stored
  sigerror      answers 500 to every *.minisig request (a signature that exists but cannot be fetched)
  rangeflaky    answers 503 to the first request for each distinct byte range of each path
  wrongtotal    206 answers claim, in Content-Range, an object one byte larger than the one served
  corruptonce   flips the middle byte of the body sent (a range's, after slicing) in the first
                answer for each path only; later answers are clean
  corruptranges flips the middle byte of the body of every 206 answer
  wholewrong    ignores Range like norange, and flips the middle byte of every object body
  stallonce     honest, except that the second 206 answer for each path sends its headers and the
                first half of its body, then nothing (a device killed mid-update; the first range
                is a client's probe, sent alone)
  dropfirst     objects carry an ETag; the first GET of each object sends the headers (with the
                whole Content-Length) and the first half of the body, then drops the connection;
                a Range request is answered 206 only when its If-Range is that ETag. Its log
                lines add the request's Range and If-Range headers (stallonce's too).
  multirangewhole
                single byte ranges answered honestly (206); a Range naming several ranges (a comma)
                answered 200 with the whole body, as servers and CDNs without multipart support do
  corruptsegment
                flips the middle byte of the body of the first 206 answer for each path only (a
                plain 200 is never touched): one corrupt segment in an update built from ranges
  private       answers 403 (AccessDenied) instead of 404 for a file that is not there, as a
                private S3 bucket does when the reader may not list it

With MISBEHAVING_SERVER_LOG=FILE in the environment, every answer that goes through the
common reply path also appends a line "STATUS BYTES RANGE PATH" to FILE: BYTES are the body
bytes written to the socket (counted per 1 MiB write, so a client that hangs up mid-body is
counted up to the write that failed), RANGE is the request's Range header or "-". bench/delta
counts bytes and requests with it.
"""
import gzip
import zlib
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
PORT = int(sys.argv[2])
COUNTS = {}
ANSWER_LOG = os.environ.get("MISBEHAVING_SERVER_LOG")
FIRST_RANGE_LOCK = threading.Lock()  # corruptsegment: one first answer even when ranges come at once


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log_request_line(self):
        extra = ""
        if self.path.lstrip("/").startswith(("dropfirst", "stallonce")):
            extra = " Range: %s If-Range: %s" % (self.headers.get("Range"), self.headers.get("If-Range"))
        sys.stderr.write("%s %s%s\n" % (self.command, self.path, extra))
        sys.stderr.flush()

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        self.log_request_line()
        query = self.path.partition("?")[2]
        parts = self.path.split("?")[0].lstrip("/").split("/", 1)
        site = parts[0]
        mode = site.rstrip("0123456789")  # "flaky2" behaves as "flaky"
        rest = parts[1] if len(parts) > 1 else ""
        path = os.path.join(ROOT, site, rest)
        if ".." in rest.split("/") or not os.path.isfile(path):
            if mode == "private":
                return self.reply(403, b"<Error><Code>AccessDenied</Code></Error>", {"Content-Type": "application/xml"}, head)
            return self.reply(404, b"not found", {"Content-Type": "text/plain"}, head)
        is_manifest = rest.endswith(".json") and "/" not in rest
        if mode == "flaky":
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
            if COUNTS[self.path] <= 2:
                return self.reply(503, b"try again", {"Content-Type": "text/plain"}, head)
        if mode == "rangeflaky" and self.headers.get("Range"):
            key = (self.path, self.headers.get("Range"))
            COUNTS[key] = COUNTS.get(key, 0) + 1
            if COUNTS[key] == 1:
                return self.reply(503, b"try again", {"Content-Type": "text/plain"}, head)
        if mode == "sigerror" and rest.endswith(".minisig"):
            return self.reply(500, b"broken", {"Content-Type": "text/plain"}, head)
        if mode == "redirect" and not is_manifest and "moved=1" not in query:
            return self.reply(302, b"", {"Location": "/%s/%s?moved=1" % (site, rest)}, head)
        if mode == "redirectout" and not is_manifest:
            return self.reply(302, b"", {"Location": "/ok/" + rest}, head)
        if mode == "redirectdisguised" and not is_manifest:
            return self.reply(302, b"", {"Location": "http://2130706433:%d/ok/%s" % (PORT, rest)}, head)
        if mode == "redirectmeta" and not is_manifest:
            return self.reply(302, b"", {"Location": "http://169.254.169.254/latest/meta-data/"}, head)
        if mode == "redirectloop" and not is_manifest:
            hop = int(query.partition("hop=")[2] or 0) if "hop=" in query else 0
            return self.reply(302, b"", {"Location": "/%s/%s?hop=%d" % (site, rest, hop + 1)}, head)
        if mode == "redirectmanifest" and is_manifest:
            return self.reply(302, b"", {"Location": "/ok/" + rest}, head)
        with open(path, "rb") as f:
            body = f.read()
        headers = {
            "Cache-Control": "no-cache, no-store" if is_manifest else "public, max-age=31536000, immutable",
            "Content-Type": "application/json" if rest.endswith(".json") else
                            "application/zip" if rest.endswith(".zip") else "application/octet-stream",
        }
        if not is_manifest:
            if mode == "shortcache":
                headers["Cache-Control"] = "public, max-age=60"
            if mode == "shortcdn":
                headers["Cache-Control"] = "public, max-age=31536000, s-maxage=60, immutable"
            if mode == "quoted":
                headers["Cache-Control"] = 'public, max-age="31536000", immutable'
            if mode == "wrongtype":
                headers["Content-Type"] = "text/html"
            if mode == "corrupt" and body:
                middle = len(body) // 2
                body = body[:middle] + bytes([body[middle] ^ 0xFF]) + body[middle + 1:]
            if mode == "extra":
                body = body + b"!"
        elif mode == "longmanifest":
            headers["Cache-Control"] = "public, max-age=3600"
        status = 200
        range_header = self.headers.get("Range")
        if mode == "dropfirst" and rest.startswith("models/"):
            import hashlib
            etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
            headers["ETag"] = etag
            if range_header and self.headers.get("If-Range") != etag:
                range_header = None  # the validator does not match: the whole object
            key = "dropfirst " + rest
            COUNTS[key] = COUNTS.get(key, 0) + 1
            if COUNTS[key] == 1 and not head and not range_header:
                self.send_response(200)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                import socket
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
        if mode == "multirangewhole" and range_header and "," in range_header:
            range_header = None  # several ranges: the whole body, 200
        if range_header and range_header.startswith("bytes=") and mode not in ("norange", "wholewrong") and not is_manifest:
            start, _, end = range_header[6:].partition("-")
            start = int(start)
            end = min(int(end) if end else len(body) - 1, len(body) - 1)
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, end, len(body) + (1 if mode == "wrongtotal" else 0))
            body = body[start:end + 1]
            status = 206
            if mode == "corruptranges" and body:
                body = body[:len(body) // 2] + bytes([body[len(body) // 2] ^ 0xFF]) + body[len(body) // 2 + 1:]
            if mode == "corruptsegment" and body and not head:
                with FIRST_RANGE_LOCK:
                    COUNTS[("corruptsegment", rest)] = COUNTS.get(("corruptsegment", rest), 0) + 1
                    first = COUNTS[("corruptsegment", rest)] == 1
                if first:
                    body = body[:len(body) // 2] + bytes([body[len(body) // 2] ^ 0xFF]) + body[len(body) // 2 + 1:]
        if mode == "wholewrong" and body and not is_manifest and not head:
            body = body[:len(body) // 2] + bytes([body[len(body) // 2] ^ 0xFF]) + body[len(body) // 2 + 1:]
        if mode == "corruptonce" and body and not is_manifest and not head:
            with FIRST_RANGE_LOCK:  # parallel ranges: one first answer
                COUNTS[("corruptonce", rest)] = COUNTS.get(("corruptonce", rest), 0) + 1
                first = COUNTS[("corruptonce", rest)] == 1
            if first:
                body = body[:len(body) // 2] + bytes([body[len(body) // 2] ^ 0xFF]) + body[len(body) // 2 + 1:]
        if mode == "gzip":
            body = gzip.compress(body, mtime=0)
            headers["Content-Encoding"] = "gzip"
        if mode == "deflate":
            body = zlib.compress(body)
            headers["Content-Encoding"] = "deflate"
        offers_br = "br" in [e.split(";")[0].strip() for e in self.headers.get("Accept-Encoding", "").split(",")]
        if is_manifest and (mode == "br" or (mode == "negotiate" and offers_br)):
            headers["Content-Encoding"] = "br"
        stall_once = False
        if mode == "stallonce" and status == 206 and not head:
            with FIRST_RANGE_LOCK:
                COUNTS[("stallonce", rest)] = COUNTS.get(("stallonce", rest), 0) + 1
                stall_once = COUNTS[("stallonce", rest)] == 2
        if (mode == "stall" and not is_manifest and not head) or stall_once:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            time.sleep(600)
            return
        if mode == "drip" and not is_manifest:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(1)
            return
        if mode == "nolength" and not is_manifest:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(body)
            self.close_connection = True
            return
        self.reply(status, body, headers, head)

    def reply(self, status, body, headers, head):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if ANSWER_LOG is None:
            if not head:
                self.wfile.write(body)
            return
        sent = 0
        try:
            if not head:
                view = memoryview(body)
                for start in range(0, len(body), 1 << 20):
                    self.wfile.write(view[start:start + (1 << 20)])
                    sent += len(view[start:start + (1 << 20)])
        finally:
            with open(ANSWER_LOG, "a") as log:
                log.write("%d %d %s %s\n" % (status, sent, (self.headers.get("Range") or "-").replace(" ", ""), self.path))


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
if len(sys.argv) > 4:
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
