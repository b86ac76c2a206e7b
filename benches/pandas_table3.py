#!/usr/bin/env python3
"""Pandas baseline: the paper's Table 3 (per model x judge checklist scores).

What a researcher would write with pandas to recompute Table 3 from RepoProbe
files (docs/format.md#question, docs/format.md#checklist-judgment, docs/format.md#results-bundle, docs/metrics.md, docs/metrics.md#the-score-report). Kept deliberately plain and idiomatic
(json.load, json_normalize, explode, merge, groupby) -- it is a baseline for
timing and cross-checking `repoprobe score`, not an optimised implementation.

Usage:
    python3 benches/pandas_table3.py results.json [--missing zero|exclude] [--json]
    python3 benches/pandas_table3.py judgments.jsonl benchmark.jsonl [...]

Inputs are detected by content: a results bundle object {"benchmark": [...],
"judgments": [...]}, a JSON array of records, or JSONL (one record per line).
Records with a "checklist" are benchmark questions, records with "items" are
checklist judgments; anything else is ignored.

Per (model, judge):
    grid       = benchmark questions x distinct attempts seen x distinct judge_runs seen
    questions  = distinct questions with >= 1 judgment
    judgments  = judgments counted (= filled cells)
    coverage   = filled cells / grid  (fraction 0-1)
    overall    = 100 * mean(s / 10)        s    = sum of item scores
    knowledge  = 100 * mean(s_kn / 9)      s_kn = sum of scores of "knowledge" items
    clarity    = 100 * mean(s_cl)          s_cl = score of the "clarity" item
    perfect    = 100 * share of judgments with s == 10
Under --missing zero (default) the means run over the whole grid (missing cells
count as s = 0); under --missing exclude only over filled cells.

Simplifications versus the CLI: judgments whose question id is not in the
benchmark are skipped, a duplicate judgment key keeps its first occurrence, and
no other validation (rubric membership, missing/extra items) is done.
Elapsed wall times of load (read + parse JSON) and compute (everything pandas)
go to stderr.
"""

import argparse
import json
import sys
import time

import pandas as pd

KEY = ["question_id", "model", "attempt", "judge", "judge_run"]
COLUMNS = ["model", "judge", "questions", "judgments", "coverage",
           "overall", "knowledge", "clarity", "perfect"]


# --------------------------------------------------------------------------- load

def read_records(path):
    """Return the list of top-level JSON values in a JSON or JSONL file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def load(paths):
    benchmark, judgments = [], []
    for path in paths:
        for value in read_records(path):
            if isinstance(value, dict) and ("benchmark" in value or "judgments" in value
                                            or value.get("format") == "repoprobe-results"):
                benchmark.extend(value.get("benchmark") or [])
                judgments.extend(value.get("judgments") or [])
                continue
            for rec in value if isinstance(value, list) else [value]:
                if not isinstance(rec, dict):
                    continue
                if "checklist" in rec:
                    benchmark.append(rec)
                elif "items" in rec:
                    judgments.append(rec)
    return benchmark, judgments


# ------------------------------------------------------------------------ compute

def table3(benchmark, judgments, missing="zero"):
    # Benchmark: one row per checklist item with its kind.
    questions = pd.DataFrame(benchmark).drop_duplicates("id")
    n_questions = len(questions)
    kinds = pd.json_normalize(questions.to_dict("records"), record_path="checklist",
                              meta="id", meta_prefix="question_")
    kinds = kinds.rename(columns={"id": "item_id"})[["question_id", "item_id", "kind"]]

    # Judgments: defaults, unknown questions out, first occurrence of a key wins.
    j = pd.DataFrame(judgments, columns=None if judgments else KEY + ["items"])
    for col, default in (("attempt", 0), ("judge_run", 0)):
        if col not in j:
            j[col] = default
        j[col] = j[col].fillna(default)
    j = j[j["question_id"].isin(questions["id"])]
    j = j.drop_duplicates(KEY, keep="first").reset_index(drop=True)
    j["jid"] = j.index

    # One row per (judgment, item), tagged with the item's kind.
    items = j[["jid", "items"]].explode("items").dropna(subset=["items"])
    items = items.reset_index(drop=True)
    scores = pd.json_normalize(items["items"].tolist()).reindex(columns=["id", "score"])
    items = pd.concat([items[["jid"]], scores.rename(columns={"id": "item_id"})], axis=1)
    items = items.merge(j[["jid", "question_id"]], on="jid")
    items = items.merge(kinds, on=["question_id", "item_id"], how="left")
    items["score"] = pd.to_numeric(items["score"], errors="coerce").fillna(0.0)
    items["s_kn"] = items["score"].where(items["kind"] == "knowledge", 0.0)
    items["s_cl"] = items["score"].where(items["kind"] == "clarity", 0.0)

    # Per judgment: s, s_kn, s_cl (a judgment with no items scores 0).
    per_j = items.groupby("jid")[["score", "s_kn", "s_cl"]].sum()
    j = j.join(per_j, on="jid").fillna({"score": 0.0, "s_kn": 0.0, "s_cl": 0.0})
    j["perfect"] = (j["score"] == 10).astype(float)

    # Per (model, judge).
    t = j.groupby(["model", "judge"]).agg(
        questions=("question_id", "nunique"),
        judgments=("jid", "size"),
        attempts=("attempt", "nunique"),
        runs=("judge_run", "nunique"),
        s=("score", "sum"),
        s_kn=("s_kn", "sum"),
        s_cl=("s_cl", "sum"),
        perfect_n=("perfect", "sum"),
    ).reset_index()
    t["grid"] = n_questions * t["attempts"] * t["runs"]
    t["coverage"] = t["judgments"] / t["grid"]
    denom = t["grid"] if missing == "zero" else t["judgments"]
    t["overall"] = 100 * t["s"] / 10 / denom
    t["knowledge"] = 100 * t["s_kn"] / 9 / denom
    t["clarity"] = 100 * t["s_cl"] / denom
    t["perfect"] = 100 * t["perfect_n"] / denom
    return t.sort_values(["model", "judge"])[COLUMNS].reset_index(drop=True)


# ------------------------------------------------------------------------- output

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="results bundle, or judgments + benchmark files")
    ap.add_argument("--missing", choices=["zero", "exclude"], default="zero")
    ap.add_argument("--json", action="store_true", help="print a JSON list, unrounded")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    benchmark, judgments = load(args.paths)
    t1 = time.perf_counter()
    table = table3(benchmark, judgments, args.missing)
    t2 = time.perf_counter()
    print(f"load: {t1 - t0:.3f} s ({len(benchmark)} questions, {len(judgments)} judgments)",
          file=sys.stderr)
    print(f"compute: {t2 - t1:.3f} s", file=sys.stderr)

    if args.json:
        rows = [{c: (int(r[c]) if c in ("questions", "judgments")
                     else float(r[c]) if c not in ("model", "judge") else r[c])
                 for c in COLUMNS} for r in table.to_dict("records")]
        print(json.dumps(rows, indent=1))
    else:
        shown = table.copy()
        shown["coverage"] = 100 * shown["coverage"]
        shown = shown.rename(columns={"coverage": "coverage%"})
        print(f"policy: missing={args.missing}  (percentages; coverage% = filled cells / grid)")
        print(shown.to_string(index=False, float_format=lambda x: f"{x:.1f}"))


if __name__ == "__main__":
    main()
