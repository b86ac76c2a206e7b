#!/usr/bin/env python3
"""End-to-end comparison: `repoprobe score` against the pandas baseline on the same file.

Runs each command N times (wall clock, whole process, as a researcher would run it), checks
that both give the same Table 3 to 1e-9, and prints the medians, the speed ratio and each
command's peak memory (the process's maximum resident set size, from `wait4`) beside the
file's size: the figures of issue 14's table, each a ratio measured in this one run.

    python3 benches/compare_pandas.py FILE [--runs 5] [--bin target/release/repoprobe] [--before OLD_BIN]
    python3 benches/compare_pandas.py BIG_FILE --runs 1 --no-pandas   # the 1 GB row

`REPOPROBE_THREADS=1` in the environment makes the CLI parse on one thread.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SPEED_TARGET = 12.0  # pandas time / repoprobe time, at least
MEMORY_TARGET = 1.0  # repoprobe peak RSS / file size, at most


def timed(cmd):
    """Wall time, stdout and peak RSS (bytes) of one whole process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} exited {p.returncode}")
    return elapsed, out, usage.ru_maxrss * 1024


def mib(n):
    return f"{n / 2**20:7.1f} MiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default="target/release/repoprobe")
    ap.add_argument("--no-pandas", action="store_true", help="time and measure the CLI only")
    ap.add_argument("--before", help="an earlier build of repoprobe, timed in the same interleaved runs")
    a = ap.parse_args()
    size = os.path.getsize(a.file)
    variants = {
        "repoprobe score (bootstrap 1000)": [a.bin, "score", a.file, "--format", "json"],
        "repoprobe score (no bootstrap)": [a.bin, "score", a.file, "--format", "json", "--bootstrap", "0"],
    }
    if a.before:
        variants["before: score (bootstrap 1000)"] = [a.before, "score", a.file, "--format", "json"]
    if not a.no_pandas:
        variants["pandas"] = [sys.executable, "benches/pandas_table3.py", a.file, "--json"]
    times, outs, peaks = {}, {}, {}
    # Interleaved, so that a busy spell of the machine weighs on every command alike.
    runs = {name: [] for name in variants}
    for _ in range(a.runs):
        for name, cmd in variants.items():
            runs[name].append(timed(cmd))
    for name, rs in runs.items():
        times[name] = statistics.median(t for t, _, _ in rs)
        outs[name] = rs[0][1]
        peaks[name] = max(m for _, _, m in rs)
    print(f"file: {a.file}, {size:,} bytes ({mib(size).strip()})")
    if a.before:
        same = outs["before: score (bootstrap 1000)"] == outs["repoprobe score (bootstrap 1000)"]
        assert same, "the earlier build prints another `score --format json`"
        print("the earlier build prints the same `score --format json`, to the byte")
    if not a.no_pandas:
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
        print(f"{name:36s} median {t:7.3f} s over {a.runs} runs, peak RSS {mib(peaks[name])} = {peaks[name] / size:.2f} x the file")
    if not a.no_pandas:
        base = times["pandas"]
        for name in [n for n in times if n != "pandas"]:
            ratio = base / times[name]
            verdict = "meets" if ratio >= SPEED_TARGET else "short of"
            print(f"pandas / {name}: {ratio:.1f}x ({verdict} the target of {SPEED_TARGET:.0f}x)")
    peak = peaks["repoprobe score (bootstrap 1000)"]
    verdict = "meets" if peak <= MEMORY_TARGET * size else "over"
    print(f"repoprobe score peak memory / file size: {peak / size:.2f} ({verdict} the target of {MEMORY_TARGET:.0f}x)")


if __name__ == "__main__":
    main()
