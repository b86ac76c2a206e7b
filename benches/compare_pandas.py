#!/usr/bin/env python3
"""End-to-end comparison: `repoprobe score` against the pandas baseline on the same file.

Runs each command N times (wall clock, whole process, as a researcher would run it), checks
that both give the same Table 3 to 1e-9, and prints the medians and the ratio.

    python3 benches/compare_pandas.py FILE [--runs 5] [--bin target/release/repoprobe]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def timed(cmd):
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default="target/release/repoprobe")
    a = ap.parse_args()
    variants = {
        "repoprobe score (bootstrap 1000)": [a.bin, "score", a.file, "--format", "json"],
        "repoprobe score (no bootstrap)": [a.bin, "score", a.file, "--format", "json", "--bootstrap", "0"],
        "pandas": [sys.executable, "benches/pandas_table3.py", a.file, "--json"],
    }
    times, outs = {}, {}
    for name, cmd in variants.items():
        runs = [timed(cmd) for _ in range(a.runs)]
        times[name] = statistics.median(t for t, _ in runs)
        outs[name] = runs[0][1]
    ours = sorted(json.loads(outs["repoprobe score (no bootstrap)"])["models"], key=lambda m: (m["model"], m["judge"]))
    theirs = json.loads(outs["pandas"])
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    worst = 0.0
    for o, p in zip(ours, theirs):
        assert (o["model"], o["judge"]) == (p["model"], p["judge"])
        assert (o["questions"], o["judgments"]) == (p["questions"], p["judgments"]), (o, p)
        for k in ("overall", "knowledge", "clarity", "perfect", "coverage"):
            worst = max(worst, abs(o[k] - p[k]))
    assert worst < 1e-9, worst
    print(f"same Table 3 from both ({len(ours)} rows, max |difference| {worst:.1e})")
    for name, t in times.items():
        print(f"{name:36s} median {t:7.3f} s over {a.runs} runs")
    base = times["pandas"]
    for name in list(times)[:2]:
        print(f"pandas / {name}: {base / times[name]:.1f}x")


if __name__ == "__main__":
    main()
