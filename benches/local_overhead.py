#!/usr/bin/env python3
"""repoprobe's overhead against a local model server alone (docs/speed.md).

Starts tools/' llama-server (scripts/setup-local-model.sh) on a free port of 127.0.0.1, then:
  1. `repoprobe judge` through a recording proxy: the exact request bodies it sends;
  2. a fresh server, those bodies replayed one after another by this script (urllib), timed;
  3. a fresh server, `repoprobe judge --concurrency 1` on the same keys, timed.
Each server is fresh so that neither side finds the other's prompts in its cache. Prints wall
seconds, output tokens and tokens/s of each, ROUNDS times, and the medians.

    python3 benches/local_overhead.py target/release/repoprobe [ROUNDS]
"""
import http.server
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "tools/llama-server/bin/llama-server")
MODEL = os.path.join(ROOT, "tools/models/SmolLM2-135M-Instruct.Q4_1.gguf")
BENCHMARK = os.path.join(ROOT, "testdata/golden/benchmark.jsonl")
ANSWERS = os.path.join(ROOT, "testdata/golden/answers.jsonl")
FLAGS = ["--structured", "schema", "--max-tokens", "120", "--temperature", "0",
         "--seed", "1", "--timeout-s", "300", "--runs", "2", "--max-retries", "0"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server():
    port = free_port()
    p = subprocess.Popen([SERVER, "-m", MODEL, "--host", "127.0.0.1", "--port", str(port),
                          "-c", "8192", "--jinja", "-np", "1", "--no-webui", "--no-repack"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return p, port
        except OSError:
            time.sleep(0.1)
    p.kill()
    sys.exit("llama-server did not become healthy")


def judge(repoprobe, port, out_dir, concurrency="1"):
    out = os.path.join(out_dir, f"j-{time.monotonic_ns()}.jsonl")
    t = time.monotonic()
    r = subprocess.run([repoprobe, "judge", BENCHMARK, ANSWERS,
                        "--out", out, "--provider", "openai", "--no-key", "--model", "smol",
                        "--base-url", f"http://127.0.0.1:{port}/v1", "--concurrency",
                        concurrency, *FLAGS], capture_output=True, text=True, env={})
    wall = time.monotonic() - t
    if r.returncode not in (0, 1):
        sys.exit(r.stderr)
    tokens = 0
    for path in (out, out.replace(".jsonl", ".failures.ndjson")):
        if os.path.exists(path):
            for line in open(path):
                usage = json.loads(line).get("usage") or {}
                tokens += usage.get("output_tokens", 0)
    return wall, tokens


def record(repoprobe, out_dir):
    """The bodies repoprobe sends, through a proxy in front of a fresh server."""
    server, port = start_server()
    bodies = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            bodies.append(body)
            req = urllib.request.Request(f"http://127.0.0.1:{port}{self.path}", data=body,
                                         headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=300) as r:
                data = r.read()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    judge(repoprobe, proxy.server_address[1], out_dir)
    proxy.shutdown()
    server.kill()
    server.wait()
    return bodies


def replay(bodies):
    server, port = start_server()
    tokens = 0
    t = time.monotonic()
    for body in bodies:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as r:
            tokens += json.loads(r.read())["usage"]["completion_tokens"]
    wall = time.monotonic() - t
    server.kill()
    server.wait()
    return wall, tokens


def main():
    repoprobe = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    out_dir = tempfile.mkdtemp()
    bodies = record(repoprobe, out_dir)
    print(f"{len(bodies)} requests recorded from repoprobe judge")
    rows = {"script": [], "repoprobe": []}
    for i in range(rounds):
        rows["script"].append(replay(bodies))
        server, port = start_server()
        rows["repoprobe"].append(judge(repoprobe, port, out_dir))
        server.kill()
        server.wait()
        for name in rows:
            wall, tokens = rows[name][-1]
            print(f"round {i + 1} {name:9}: {wall:7.2f} s, {tokens} output tokens, "
                  f"{tokens / wall:6.1f} tokens/s")
    for name, r in rows.items():
        walls = [w for w, _ in r]
        print(f"median {name:9}: {statistics.median(walls):7.2f} s "
              f"(min {min(walls):.2f}, max {max(walls):.2f})")


if __name__ == "__main__":
    main()
