#!/usr/bin/env python3
"""The reference check of `repoprobe score`'s clustered uncertainty (docs/metrics.md#clustered-uncertainty).

On datasets drawn here from seeds (questions in repositories of uneven sizes with a repository
effect, models with 1-3 attempts, 1-2 judge runs, two judges, cells missing at random), for
`--cluster repo|question|none` and `--missing zero|exclude`:

- every model's `se`, `knowledge_se`, `clarity_se` and `perfect_se` must equal Inspect's
  `stderr(cluster=...)` (plain `stderr()` for `none`) over the cells in force, enumerated here
  from the records, and `ci95` the mean +- 1.959964 se, to 1e-9;
- `--compare A B`'s mean difference, `se` (Inspect's clustered stderr over the per-question
  differences), p-value, correlation (numpy), `mde80` and interval;
- every model's `rank` from the clustered paired intervals of every pair of its judge;
- `variance.questions/attempts/judge_runs` from their definitions (numpy).

Nothing here reads the Rust code's intermediate values: only the records and the definitions.

    PYTHONPATH=tools/inspect python3 scripts/check-clustered.py BIN [--seeds N]
"""

import json
import math
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from inspect_ai.scorer._metric import SampleScore, Score
from inspect_ai.scorer._metrics.std import stderr

TOLERANCE = 1e-9
Z95, Z80 = 1.959964, 0.841621


def dataset(seed, out):
    rng = random.Random(seed)
    nrepo = rng.randint(1, 9)
    questions = []
    for r in range(nrepo):
        for _ in range(rng.randint(1, 7)):
            n = len(questions)
            questions.append({
                "id": f"q{n:03d}",
                "repo": {"name": f"owner/repo{r}", "url": "", "commit": "", "language": "Go", "theme": "T"},
                "category": "Business Logic", "question": "q?", "reference_answer": "a.",
                "external_context": False,
                "checklist": [
                    {"id": "k1", "kind": "knowledge", "key_point": "a", "weight": 5,
                     "rubric": [{"score": s, "criterion": ""} for s in (5, 3, 0)]},
                    {"id": "k2", "kind": "knowledge", "key_point": "b", "weight": 4,
                     "rubric": [{"score": s, "criterion": ""} for s in (4, 2, 0)]},
                    {"id": "c", "kind": "clarity", "key_point": "Clarity", "weight": 1,
                     "rubric": [{"score": 1, "criterion": ""}, {"score": 0, "criterion": ""}]},
                ],
                "_effect": (r % 3) * 0.25,
            })
    lines = []
    models = ["m1", "m2", "m3", "m4"][: rng.randint(2, 4)]
    for mi, model in enumerate(models):
        attempts = rng.randint(1, 3)
        for judge in ("j1", "j2"):
            runs = rng.randint(1, 2)
            for q in questions:
                for a in range(attempts):
                    for run in range(runs):
                        if rng.random() < 0.12:
                            continue
                        p = min(0.95, 0.2 + 0.15 * mi + q["_effect"] + 0.2 * rng.random())
                        items = [
                            {"id": "k1", "score": 5 if rng.random() < p else rng.choice([3, 0]), "rationale": ""},
                            {"id": "k2", "score": 4 if rng.random() < p else rng.choice([2, 0]), "rationale": ""},
                            {"id": "c", "score": 1 if rng.random() < 0.7 else 0, "rationale": ""},
                        ]
                        lines.append({"question_id": q["id"], "model": model, "attempt": a,
                                      "judge": judge, "judge_run": run, "items": items})
    for q in questions:
        del q["_effect"]
    (out / "benchmark.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (out / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in lines))
    return questions, lines, [str(out / "benchmark.jsonl"), str(out / "judgments.jsonl")]


def cells_in_force(questions, lines, model, judge, missing):
    """(question, attempt, run, [overall, knowledge, clarity, perfect]) in points."""
    mine = {(j["question_id"], j["attempt"], j["judge_run"]): j for j in lines
            if j["model"] == model and j["judge"] == judge}
    attempts = sorted({k[1] for k in mine})
    runs = sorted({k[2] for k in mine})
    out = []
    for q in sorted(questions, key=lambda q: q["id"]):
        for a in attempts:
            for r in runs:
                j = mine.get((q["id"], a, r))
                if j is None:
                    if missing == "zero":
                        out.append((q, a, r, [0.0, 0.0, 0.0, 0.0]))
                    continue
                s = {i["id"]: i["score"] for i in j["items"]}
                total = s["k1"] + s["k2"] + s["c"]
                out.append((q, a, r, [100.0 * total / 10, 100.0 * (s["k1"] + s["k2"]) / 9,
                                      100.0 * s["c"], 100.0 if total == 10 else 0.0]))
    return out, len(attempts), len(runs)


def key(q, cluster):
    return q["repo"]["name"] if cluster == "repo" else q["id"]


def inspect_se(values, ids):
    """Inspect's clustered stderr; `ids` None for the plain one. None below two clusters."""
    if len(set(ids if ids is not None else range(len(values)))) < 2:
        return None
    scores = [SampleScore(score=Score(value=float(v)), sample_id=i,
                          sample_metadata={"cl": ids[i] if ids is not None else i})
              for i, v in enumerate(values)]
    return float(stderr(cluster="cl")(scores) if ids is not None else stderr()(scores))


def per_question_means(cells):
    by = {}
    for q, _, _, v in cells:
        by.setdefault(q["id"], (q, []))[1].append(v[0])
    return {k: (q, float(np.mean(v))) for k, (q, v) in by.items()}


def paired(cells_a, cells_b, cluster):
    ma, mb = per_question_means(cells_a), per_question_means(cells_b)
    both = sorted(set(ma) & set(mb))
    d = [ma[k][1] - mb[k][1] for k in both]
    if not d:
        return None
    ids = [key(ma[k][0], cluster if cluster == "repo" else "question") for k in both]
    se = inspect_se(d, ids)
    mean = float(np.mean(d))
    xa, xb = np.array([ma[k][1] for k in both]), np.array([mb[k][1] for k in both])
    corr = None
    if len(both) >= 2 and xa.std() > 0 and xb.std() > 0:
        corr = float(np.corrcoef(xa, xb)[0, 1])
    p = None
    if se is not None:
        p = (1.0 if mean == 0 else 0.0) if se == 0 else min(1.0, math.erfc(abs(mean / se) / math.sqrt(2)))
    return {"questions": len(both), "mean_diff": mean, "se": se, "p_value": p, "correlation": corr,
            "mde80": None if se is None else (Z95 + Z80) * se,
            "ci95": None if se is None else [mean - Z95 * se, mean + Z95 * se]}


def variance(cells, missing):
    by_q, by_qa = {}, {}
    for q, a, _, v in cells:
        by_q.setdefault(q["id"], []).append(v[0])
        by_qa.setdefault((q["id"], a), []).append(v[0])
    var = lambda xs: float(np.var(xs, ddof=1)) if len(xs) >= 2 else None  # noqa: E731
    qs = var([np.mean(v) for v in by_q.values()])
    att = [var([np.mean(v) for (qq, _), v in by_qa.items() if qq == q]) for q in by_q]
    att = [x for x in att if x is not None]
    runs = [x for x in (var(v) for v in by_qa.values()) if x is not None]
    return {"questions": qs, "attempts": float(np.mean(att)) if att else None,
            "judge_runs": float(np.mean(runs)) if runs else None}


def close(name, got, want, failures):
    if want is None or got is None:
        ok = got is None and want is None
    elif isinstance(want, (list, tuple)):
        ok = len(got) == len(want) and all(abs(g - w) <= TOLERANCE for g, w in zip(got, want))
    else:
        ok = abs(got - want) <= TOLERANCE
    if not ok:
        print(f"  {name:<60} ours {got!r:<24} reference {want!r}   <-- DIFFERS")
        failures.append(name)


def check(binary, seed, tmp, failures):
    d = Path(tmp) / f"seed{seed}"
    d.mkdir()
    questions, lines, files = dataset(seed, d)
    n = 0
    for cluster in ("repo", "question", "none"):
        for missing in ("zero", "exclude"):
            r = json.loads(subprocess.run(
                [binary, "score", *files, "--format", "json", "--cluster", cluster,
                 "--missing", missing, "--judge", "j1", "--compare", "m1", "m2"],
                check=True, capture_output=True, text=True).stdout)
            assert r["policy"]["cluster"] == cluster and r["policy"]["ci"] == "clt", r["policy"]
            tag = f"seed {seed} {cluster}/{missing}"
            cells = {}
            for m in r["models"]:
                c, _, _ = cells_in_force(questions, lines, m["model"], m["judge"], missing)
                cells[(m["model"], m["judge"])] = c
                ids = None if cluster == "none" else [key(q, cluster) for q, _, _, _ in c]
                for k, field in enumerate(("se", "knowledge_se", "clarity_se", "perfect_se")):
                    want = inspect_se([v[k] for _, _, _, v in c], ids)
                    close(f"{tag} {m['model']}/{m['judge']} {field}", m[field], want, failures)
                    n += 1
                mean = float(np.mean([v[0] for _, _, _, v in c]))
                close(f"{tag} {m['model']}/{m['judge']} overall", m["overall"], mean, failures)
                se = m["se"]
                close(f"{tag} {m['model']}/{m['judge']} ci95", m["ci95"],
                      None if se is None else [m["overall"] - Z95 * se, m["overall"] + Z95 * se], failures)
                v = variance(c, missing)
                for part in ("questions", "attempts", "judge_runs"):
                    close(f"{tag} {m['model']}/{m['judge']} variance.{part}", m["variance"][part], v[part], failures)
                n += 5
            want = paired(cells[("m1", "j1")], cells[("m2", "j1")], cluster)
            for field in ("questions", "mean_diff", "se", "p_value", "correlation", "mde80", "ci95"):
                close(f"{tag} paired.{field}", r["paired"][field], want[field], failures)
                n += 1
            for judge in ("j1", "j2"):
                ms = [m for m in r["models"] if m["judge"] == judge]
                for m in ms:
                    ahead = behind = 0
                    for x in ms:
                        if x is m:
                            continue
                        pr = paired(cells[(x["model"], judge)], cells[(m["model"], judge)], cluster)
                        if pr and pr["ci95"] and pr["ci95"][0] > 0:
                            ahead += 1
                        if pr and pr["ci95"] and pr["ci95"][1] < 0:
                            behind += 1
                    want_rank = [1 + ahead, len(ms) - behind]
                    if m["rank"] != want_rank:
                        print(f"  {tag} {m['model']}/{judge} rank ours {m['rank']} reference {want_rank}   <-- DIFFERS")
                        failures.append(f"{tag} rank")
                    n += 1
    return n


def main():
    binary = sys.argv[1]
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 6
    failures, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            n += check(binary, seed, tmp, failures)
    if failures:
        print(f"{len(failures)} of {n} figure(s) differ from the reference")
        sys.exit(1)
    print(f"all {n} figures equal Inspect's stderr(cluster=...) and numpy's (1e-9)")


if __name__ == "__main__":
    main()
