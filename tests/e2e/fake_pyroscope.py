#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# fake_pyroscope.py: a stand-in for Grafana Pyroscope's POST /ingest, an OpenTelemetry
# receiver's POST /v1development/profiles and Parca's POST /profiles/writeraw (none is packaged
# in Debian): logs one JSON line per request to LOG (its path, query, body size, whether the
# body is a gzip'ed profile, the status given) and answers 200, or 503 while the file DOWN
# exists. With BODIES, the OTLP and Parca bodies it took are kept there as NNNN.pb and
# NNNN.json, in the order they came (tests decode them with protoc against
# third_party/opentelemetry-proto, and with json and base64).
"""usage: fake_pyroscope.py PORT LOG DOWN [BODIES]"""
import gzip
import http.server
import json
import os
import sys
import urllib.parse

PORT, LOG, DOWN = int(sys.argv[1]), sys.argv[2], sys.argv[3]
BODIES = sys.argv[4] if len(sys.argv) > 4 else None


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        encoding = self.headers.get("Content-Encoding")
        if encoding == "gzip":  # OTLP/HTTP's compressed bodies: kept as they decode
            body = gzip.decompress(body)
        try:
            raw = gzip.decompress(body)
            # a profile.proto message starts with field 1 (sample_type), wire type 2
            pprof = len(raw) > 2 and raw[0] == 0x0a
        except OSError:
            pprof = False
        status = 503 if os.path.exists(DOWN) else 200
        kept = None
        ext = {"/v1development/profiles": "pb", "/profiles/writeraw": "json"}.get(u.path)
        if BODIES and ext and status == 200:
            kept = os.path.join(BODIES, "%04d.%s" % (len(os.listdir(BODIES)), ext))
            with open(kept, "wb") as f:
                f.write(body)
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": u.path, "q": q, "bytes": len(body), "pprof": pprof,
                                "type": self.headers.get("Content-Type"),
                                "encoding": encoding, "status": status,
                                "kept": kept}) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
