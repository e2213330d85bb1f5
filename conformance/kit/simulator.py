"""The simulator: an HTTP/1.1 server on 127.0.0.1 that serves one published target and
misbehaves as a scenario's rules say, recording every request.

Standard library only. Two listeners: the origin (the target's base URL) and `other`, a
second origin on another port that redirects point to. Each connection is handled on a
thread of its own; rules are matched in order, the first matching one applies.
"""

import hashlib
import os
import signal
import socket
import threading
import time
import urllib.parse

CHUNK = 16 << 10


class PortInUse(Exception):
    pass


class Rule:
    """One misbehaviour: which requests it matches and what it does to them."""

    ACTIONS = {
        "swap", "truncate", "extend", "trickle", "delay", "hang", "status", "redirect",
        "ignore_range", "etag", "drop_after", "corrupt", "kill_client", "not_modified",
    }

    def __init__(self, spec, paths):
        self.spec = spec
        self.action = spec["action"]
        self.paths = paths          # the URL paths the rule's target resolves to
        self.times = spec.get("times")
        self.skip = spec.get("after", 0)
        self.listener = spec.get("listener", "origin")
        self.seen = 0
        self.lock = threading.Lock()

    def claim(self, path, listener):
        """Whether this rule applies to this request (counting it if so)."""
        if path not in self.paths or listener != self.listener:
            return False
        with self.lock:
            self.seen += 1
            if self.seen <= self.skip:
                return False
            if self.times is not None and self.seen - self.skip > self.times:
                return False
            return True


class Log:
    """Every request, in the order they arrived."""

    def __init__(self):
        self.entries = []
        self.lock = threading.Lock()

    def open(self, **fields):
        with self.lock:
            entry = dict(fields, seq=len(self.entries), bytes_sent=0, status=None, ended=None, closed_by_client=False)
            self.entries.append(entry)
            return entry

    def snapshot(self):
        with self.lock:
            return [dict(e) for e in self.entries]

    def mark(self):
        with self.lock:
            return len(self.entries)


class Simulator:
    def __init__(self, root):
        self.root = root              # the directory served (the published target)
        self.rules = []
        self.bodies = {}              # URL path -> bytes served instead of the file (swap)
        self.log = Log()
        self.client_pid = None        # the client process a kill_client rule kills
        self.killed = threading.Event()
        self.etag_generation = 0
        # What a file that is not there is answered with: 404, or the 403 of a private S3
        # bucket whose readers may not list it (serve's `missing_status`).
        self.missing_status = 404
        self.servers = {}
        self.threads = []
        self.stopping = threading.Event()
        self.t0 = time.monotonic()

    # -- listeners -------------------------------------------------------------------
    def start(self, port=0):
        """Listens on 127.0.0.1: the origin on `port` (0: any free one), `other` on port + 1
        (or any). Raises PortInUse naming the port when it is taken."""
        for number, name in enumerate(("origin", "other")):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            wanted = port + number if port else 0
            try:
                sock.bind(("127.0.0.1", wanted))
            except OSError as error:
                sock.close()
                self.stop()
                raise PortInUse("port %d on 127.0.0.1 cannot be used (%s)" % (wanted, error.strerror))
            sock.listen(64)
            sock.settimeout(0.2)
            self.servers[name] = sock
            thread = threading.Thread(target=self._accept, args=(name, sock), daemon=True)
            thread.start()
            self.threads.append(thread)

    def port(self, name="origin"):
        return self.servers[name].getsockname()[1]

    def base_url(self, name="origin"):
        return "http://127.0.0.1:%d/" % self.port(name)

    def stop(self):
        self.stopping.set()
        for sock in self.servers.values():
            sock.close()

    def _accept(self, name, sock):
        while not self.stopping.is_set():
            try:
                conn, _ = sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve_connection, args=(name, conn), daemon=True).start()

    # -- requests --------------------------------------------------------------------
    def _serve_connection(self, listener, conn):
        conn.settimeout(30)
        reader = conn.makefile("rb")
        try:
            while not self.stopping.is_set():
                line = reader.readline(8192)
                if not line:
                    return
                parts = line.decode("latin-1").split()
                if len(parts) != 3:
                    return
                method, target, _ = parts
                headers = {}
                while True:
                    header = reader.readline(8192)
                    if header in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = header.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                keep = self._respond(listener, conn, method, target, headers)
                if not keep:
                    return
        except (OSError, ValueError):
            return
        finally:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _file_bytes(self, path):
        if path in self.bodies:
            return self.bodies[path]
        relative = urllib.parse.unquote(path.lstrip("/"))
        full = os.path.realpath(os.path.join(self.root, relative))
        if not full.startswith(os.path.realpath(self.root) + os.sep) or not os.path.isfile(full):
            return None
        with open(full, "rb") as handle:
            return handle.read()

    def _etag(self, body):
        digest = hashlib.sha256(body).hexdigest()[:16]
        return '"%s-%d"' % (digest, self.etag_generation) if self.etag_generation else '"%s"' % digest

    def _respond(self, listener, conn, method, target, headers):
        path = urllib.parse.urlsplit(target).path
        entry = self.log.open(
            listener=listener, method=method, path=path, range=headers.get("range"), if_range=headers.get("if-range"),
            if_none_match=headers.get("if-none-match"), started=round(time.monotonic() - self.t0, 3))
        rules = [r for r in self.rules if r.claim(path, listener)]
        actions = {r.action: r for r in rules}
        try:
            return self._respond_with(conn, method, path, headers, entry, actions)
        finally:
            entry["ended"] = round(time.monotonic() - self.t0, 3)
            entry["rules"] = sorted(actions)

    def _head(self, conn, entry, status, reason, fields):
        entry["status"] = status
        lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % kv for kv in fields]
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _respond_with(self, conn, method, path, headers, entry, actions):
        if "hang" in actions:
            # Never answer: wait for the client to give up (or the scenario to end).
            while not self.stopping.is_set():
                try:
                    conn.settimeout(0.5)
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        entry["closed_by_client"] = True
                        return False
                except socket.timeout:
                    continue
                except OSError:
                    return False
            return False
        if "delay" in actions:
            time.sleep(float(actions["delay"].spec.get("seconds", 1)))
        if "status" in actions:
            code = int(actions["status"].spec["code"])
            self._head(conn, entry, code, "Simulated", [("Content-Length", "0")])
            return True
        if "redirect" in actions:
            spec = actions["redirect"].spec
            location = self.base_url(spec.get("to", "other")).rstrip("/") + spec.get("path", path)
            self._head(conn, entry, int(spec.get("code", 302)), "Found", [("Location", location), ("Content-Length", "0")])
            return True
        if method not in ("GET", "HEAD"):
            self._head(conn, entry, 405, "Method Not Allowed", [("Content-Length", "0")])
            return True
        body = self._file_bytes(path)
        if body is None:
            if self.missing_status == 403:
                denied = b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
                self._head(conn, entry, 403, "Forbidden", [("Content-Type", "application/xml"), ("Content-Length", str(len(denied)))])
                if method != "HEAD":
                    conn.sendall(denied)
                    entry["bytes_sent"] += len(denied)
                return True
            self._head(conn, entry, 404, "Not Found", [("Content-Length", "0")])
            return True
        if "swap" in actions:
            body = actions["swap"].spec["_bytes"]
        if "corrupt" in actions:
            offsets = actions["corrupt"].spec.get("offsets", [actions["corrupt"].spec.get("offset", 0)])
            mutable = bytearray(body)
            for offset in offsets:
                offset = int(offset) % max(len(mutable), 1)
                mutable[offset] ^= 0xFF
            body = bytes(mutable)
        if "truncate" in actions:
            keep = int(actions["truncate"].spec.get("keep", len(body) // 2))
            body = body[:keep] if keep >= 0 else body[:keep]
        etag = self._etag(body)
        if "etag" in actions:
            # A new validator on every request: what a resume sends in If-Range no longer matches.
            entry_etag = self._etag(body + str(entry["seq"]).encode())
            etag = entry_etag
        if "not_modified" in actions or (headers.get("if-none-match") and headers.get("if-none-match") == etag):
            self._head(conn, entry, 304, "Not Modified", [("ETag", etag)])
            return True
        start, end = 0, len(body)
        status, reason = 200, "OK"
        fields = [("ETag", etag), ("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes")]
        wanted = headers.get("range")
        if wanted and "ignore_range" not in actions:
            if_range = headers.get("if-range")
            if if_range is None or if_range == etag:
                parsed = _parse_range(wanted, len(body))
                if parsed == "unsatisfiable":
                    self._head(conn, entry, 416, "Range Not Satisfiable", [("Content-Range", "bytes */%d" % len(body)), ("Content-Length", "0")])
                    return True
                if parsed is not None:
                    start, end = parsed
                    status, reason = 206, "Partial Content"
                    fields.append(("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(body))))
        payload = body[start:end]
        extend = actions.get("extend")
        framing = extend.spec.get("framing", "content-length") if extend else "content-length"
        if framing == "chunked":
            fields.append(("Transfer-Encoding", "chunked"))
        elif framing == "close":
            fields.append(("Connection", "close"))
        elif framing == "huge-length":
            # A Content-Length far past the object's size (1 TiB), and a body to match.
            fields.append(("Content-Length", str(1 << 40)))
        else:
            declared = len(payload)
            if "truncate" in actions and actions["truncate"].spec.get("content_length") == "declared":
                declared = len(body) if not wanted else declared
            fields.append(("Content-Length", str(declared)))
        self._head(conn, entry, status, reason, fields)
        if method == "HEAD":
            return True
        return self._send_body(conn, entry, payload, actions, framing, start)

    def _send_body(self, conn, entry, payload, actions, framing, start=0):
        extend = actions.get("extend")
        trickle = actions.get("trickle")
        drop = actions.get("drop_after")
        kill = actions.get("kill_client")
        if extend:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 10)
        rate = float(trickle.spec.get("rate", 1)) if trickle else None
        # drop_after counts from the object's first byte, so a resumed request gets no further.
        limit = max(0, int(drop.spec["bytes"]) - start) if drop else None
        kill_at = None
        if kill:
            at = kill.spec.get("after_bytes", "all")
            kill_at = len(payload) if at == "all" else int(at)

        def send(data):
            if framing == "chunked":
                conn.sendall(b"%x\r\n" % len(data) + data + b"\r\n")
            else:
                conn.sendall(data)
            entry["bytes_sent"] += len(data)

        try:
            conn.settimeout(10)
            offset = 0
            while offset < len(payload):
                if self.stopping.is_set():
                    return False
                size = 1 if rate else CHUNK
                if limit is not None:
                    size = min(size, limit - offset)
                if kill_at is not None and offset < kill_at:
                    size = min(size, kill_at - offset)
                if size <= 0:
                    break
                piece = payload[offset:offset + size]
                send(piece)
                offset += len(piece)
                if kill_at is not None and offset >= kill_at and not self.killed.is_set():
                    self._kill(kill)
                    if not float(kill.spec.get("delay", 0)):
                        return False  # the client is gone: nothing more is sent
                if rate:
                    time.sleep(1.0 / rate)
            if limit is not None and offset < len(payload):
                return False  # the connection drops mid-body
            if kill_at is not None and kill_at >= len(payload) and not self.killed.is_set():
                self._kill(kill)
            if extend:
                extra = extend.spec.get("extra", "endless")
                remaining = float("inf") if extra == "endless" else int(extra)
                filler = b"\0" * CHUNK
                deadline = time.monotonic() + float(extend.spec.get("seconds", 60))
                while remaining > 0 and time.monotonic() < deadline and not self.stopping.is_set():
                    piece = filler[:int(min(CHUNK, remaining))]
                    send(piece)
                    remaining -= len(piece)
                entry["extra_sent"] = entry["bytes_sent"] - len(payload)
                if framing == "chunked":
                    conn.sendall(b"0\r\n\r\n")
                return framing == "content-length"
            if framing == "chunked":
                conn.sendall(b"0\r\n\r\n")
            return framing != "close"
        except (OSError, socket.timeout) as error:
            entry["closed_by_client"] = not isinstance(error, socket.timeout)
            entry["send_error"] = type(error).__name__
            if extend:
                entry["extra_sent"] = max(0, entry["bytes_sent"] - len(payload))
            return False

    def _kill(self, rule):
        delay = float(rule.spec.get("delay", 0))
        pid = self.client_pid

        def later():
            if delay:
                time.sleep(delay)
            if pid:
                try:
                    # The client's whole process group: a client command may be a wrapper.
                    os.killpg(pid, signal.SIGKILL)
                    self.killed.set()
                except ProcessLookupError:
                    pass
        if delay:
            threading.Thread(target=later, daemon=True).start()
        else:
            later()


def _parse_range(value, length):
    """(start, end) for one `bytes=a-b` range; None for a form served whole (several
    ranges); "unsatisfiable" for a start past the end."""
    if not value.startswith("bytes=") or "," in value:
        return None
    first, _, last = value[6:].partition("-")
    try:
        if first == "":
            count = int(last)
            return (max(0, length - count), length) if count > 0 else "unsatisfiable"
        start = int(first)
        end = int(last) + 1 if last else length
    except ValueError:
        return None
    if start >= length:
        return "unsatisfiable"
    return start, min(end, length)
