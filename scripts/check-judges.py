#!/usr/bin/env python3
"""The reference check of `repoprobe judges` and `score --panel` (docs/metrics.md).

Agreement: for every pair of judges, overall, per item kind and per model, Cohen's kappa must
equal scikit-learn's `cohen_kappa_score`, Krippendorff's alpha (interval) PyPI `krippendorff`'s,
the full-credit F1 scikit-learn's `f1_score(average="macro")` with judge B as the truth, to
1e-9; the units, the exact share, the bias of the Overalls and the disagreements (their count,
order and rationales) are recomputed here from their definitions, independently of the Rust code.

Intervals: the bootstrap's draws are not replicated here; what any draws must give is checked,
under each `--cluster`: the clusters a pair's answers fall in (repositories, questions, answers)
counted here; below two, every interval null; else each interval ordered, κ's and α's at most
1, F1's within [0, 1], and the bias's within the least and greatest bias of one cluster (every
resample's bias is a mean of the clusters' weighted by their answers); `too_small` is fewer than
30 units; the figures themselves are those without a bootstrap; one seed gives one result.

Panel: `score --panel A,B,C --panel-rule R` must give the panel the Overall of judgments
computed here by the rule (median and majority snapped to the rubric, ties down; mean snapped
the same way), per model.

It runs on the fixture given (testdata/judges) and on data no test has seen: datasets drawn here
from seeds (questions with random checklists and rubrics, three judges, gaps, second runs).

    PYTHONPATH=tools/agreement python3 scripts/check-judges.py BIN testdata/judges [--seeds N]
"""

import itertools
import json
import math
import random
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score, f1_score

TOLERANCE = 1e-9
CATEGORIES = ["Project Architecture", "Business Logic", "Implementation Details"]


def read_records(files):
    out = []
    for f in files:
        for line in Path(f).read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def split(records):
    questions = {r["id"]: r for r in records if "checklist" in r}
    judgments = [r for r in records if "items" in r and "judge" in r]
    return questions, judgments


def run_zero(judgments):
    """judge -> (question, model, attempt) -> judgment, first one of a key kept."""
    out = {}
    for j in judgments:
        if j.get("judge_run", 0) != 0:
            continue
        out.setdefault(j["judge"], {}).setdefault(
            (j["question_id"], j["model"], j.get("attempt", 0)), j
        )
    return out


def both_judged(questions, ja, jb):
    """The answers both judged, in (question, model, attempt) order."""
    return sorted(k for k in ja if k in jb and k[0] in questions)


def units(questions, ja, jb):
    """Units of A and B in (question, model, attempt, checklist) order, and per-answer s."""
    out, answers = [], []
    for key in both_judged(questions, ja, jb):
        x, y = ja[key], jb[key]
        sa = {i["id"]: i for i in x["items"]}
        sb = {i["id"]: i for i in y["items"]}
        answers.append(sum(i["score"] for i in x["items"]) - sum(i["score"] for i in y["items"]))
        for item in questions[key[0]]["checklist"]:
            if item["id"] in sa and item["id"] in sb and item["weight"] > 0:
                w = item["weight"]
                out.append(
                    {
                        "key": key,
                        "item": item,
                        "a": sa[item["id"]]["score"] / w,
                        "b": sb[item["id"]]["score"] / w,
                        "ra": sa[item["id"]].get("rationale", ""),
                        "rb": sb[item["id"]].get("rationale", ""),
                        "sa": sa[item["id"]]["score"],
                        "sb": sb[item["id"]]["score"],
                    }
                )
    return out, answers


def reference(us):
    """The four figures by the reference implementations; None where they have no value."""
    a = [u["a"] for u in us]
    b = [u["b"] for u in us]
    if not us:
        return {"items": 0, "exact": None, "kappa": None, "alpha_interval": None, "f1_full_credit": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # As labels: the attainments' shortest round-trip text (equal floats, equal labels).
        kappa = cohen_kappa_score([repr(x) for x in a], [repr(x) for x in b])
        kappa = None if math.isnan(kappa) else float(kappa)
        try:
            alpha = float(
                krippendorff.alpha(reliability_data=np.array([a, b]), level_of_measurement="interval")
            )
            alpha = None if math.isnan(alpha) else alpha
        except ValueError:  # one value throughout: the reference refuses it
            alpha = None
        f1 = float(f1_score([x == 1.0 for x in b], [x == 1.0 for x in a], average="macro"))
    return {
        "items": len(us),
        "exact": sum(x == y for x, y in zip(a, b)) / len(us),
        "kappa": kappa,
        "alpha_interval": alpha,
        "f1_full_credit": f1,
    }


def close(name, got, want, failures):
    if want is None:
        ok = got is None
    elif isinstance(want, (int, str)):
        ok = got == want
    else:
        ok = got is not None and abs(got - want) <= TOLERANCE
    if not ok:
        print(f"  {name:<52} ours {got!r:<22} reference {want!r}   <-- DIFFERS")
        failures.append(name)
    return ok


def ours(binary, args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def check_judges(binary, files, label, failures):
    questions, judgments = split(read_records(files))
    by = run_zero(judgments)
    got = ours(binary, ["judge-agreement", *map(str, files), "--format", "json", "--bootstrap", "0"])
    names = sorted(by)
    want_pairs = []
    for x, y in itertools.combinations(names, 2):
        hx, hy = x.startswith("human:"), y.startswith("human:")
        want_pairs.append((y, x) if hx and not hy else (x, y))
    have = [(p["a"], p["b"]) for p in got["pairs"]]
    if have != want_pairs:
        print(f"  {label}: pairs {have} vs {want_pairs}   <-- DIFFERS")
        failures.append(f"{label} pairs")
        return
    compared = 0
    for p in got["pairs"]:
        us, answers = units(questions, by[p["a"]], by[p["b"]])
        tag = f"{label} {p['a']}~{p['b']}"
        scopes = [("all", p, us)]
        for kind in sorted({u["item"]["kind"] for u in us}):
            scopes.append((f"kind {kind}", p["by_kind"].get(kind), [u for u in us if u["item"]["kind"] == kind]))
        for model in sorted({u["key"][1] for u in us}):
            scopes.append((f"model {model}", p["by_model"].get(model), [u for u in us if u["key"][1] == model]))
        if len(p["by_kind"]) + len(p["by_model"]) != len(scopes) - 1:
            failures.append(f"{tag} scopes")
            print(f"  {tag}: scopes {sorted(p['by_kind'])} {sorted(p['by_model'])}   <-- DIFFERS")
        for scope, figs, sub in scopes:
            want = reference(sub)
            for k, v in want.items():
                close(f"{tag} {scope} {k}", None if figs is None else figs.get(k), v, failures)
                compared += 1
        bias = 100.0 * sum(answers) / (10.0 * len(answers)) if answers else None
        close(f"{tag} answers", p["answers"], len(answers), failures)
        close(f"{tag} bias_pp", p["bias_pp"], bias, failures)
        for f in ["kappa", "alpha_interval", "f1_full_credit", "bias"]:
            close(f"{tag} {f}_ci95 (no bootstrap)", p[f"{f}_ci95"], None, failures)
        close(f"{tag} too_small", p["too_small"], len(us) < MIN_UNITS, failures)
        # Disagreements: largest gap first, the units' order among equal gaps (a stable sort).
        diff = sorted((u for u in us if u["a"] != u["b"]), key=lambda u: -abs(u["a"] - u["b"]))
        want_d = [
            (u["key"][0], u["key"][1], u["key"][2], u["item"]["id"], u["sa"], u["sb"], u["ra"], u["rb"])
            for u in diff
        ]
        got_d = [
            (d["question_id"], d["model"], d["attempt"], d["item_id"], d["score_a"], d["score_b"], d["rationale_a"], d["rationale_b"])
            for d in p["disagreements"]
        ]
        if got_d != want_d:
            failures.append(f"{tag} disagreements")
            print(f"  {tag}: {len(got_d)} disagreements vs {len(want_d)}, or another order   <-- DIFFERS")
        compared += 4
    print(f"{label}: {len(names)} judges, {len(got['pairs'])} pairs, {compared} figures compared")
    check_intervals(binary, files, label, got, questions, by, failures)


MIN_UNITS = 30
POINTS = ["items", "exact", "kappa", "alpha_interval", "f1_full_credit", "answers", "bias_pp"]


def check_intervals(binary, files, label, points, questions, by, failures):
    """What the bootstrap's intervals must be, whatever its draws, under every --cluster."""
    checked = 0
    for cluster in ["repo", "question", "none"]:
        args = ["judge-agreement", *map(str, files), "--format", "json", "--bootstrap", "200", "--bootstrap-seed", "3",
                "--cluster", cluster]
        got = ours(binary, args)
        if ours(binary, args) != got:
            failures.append(f"{label} {cluster}: two runs differ")
            print(f"  {label} --cluster {cluster}: one seed, two results   <-- DIFFERS")
        close(f"{label} {cluster} cluster", got["cluster"], cluster, failures)
        for p, q in zip(got["pairs"], points["pairs"]):
            tag = f"{label} {cluster} {p['a']}~{p['b']}"
            for k in POINTS:
                close(f"{tag} {k} (as without a bootstrap)", p[k], q[k], failures)
            # The clusters holding an answer both judged, and each one's answers and Σ(s_A − s_B).
            per = {}
            for n, key in enumerate(both_judged(questions, by[p["a"]], by[p["b"]])):
                c = {"repo": questions[key[0]]["repo"]["name"], "question": key[0], "none": n}[cluster]
                s = lambda j: sum(i["score"] for i in j["items"])  # noqa: E731
                d = s(by[p["a"]][key]) - s(by[p["b"]][key])
                m, e = per.get(c, (0, 0))
                per[c] = (m + 1, e + d)
            close(f"{tag} clusters", p["clusters"], len(per), failures)
            cis = {f: p[f"{f}_ci95"] for f in ["kappa", "alpha_interval", "f1_full_credit", "bias"]}
            if len(per) < 2:
                for f, ci in cis.items():
                    close(f"{tag} {f}_ci95 (one cluster)", ci, None, failures)
                continue
            biases = [100.0 * e / (10.0 * m) for m, e in per.values()]
            bounds = {
                "kappa": (-math.inf, 1.0),
                "alpha_interval": (-math.inf, 1.0),
                "f1_full_credit": (0.0, 1.0),
                "bias": (min(biases), max(biases)),
            }
            for f, ci in cis.items():
                if ci is None:
                    # Only a figure undefined in every resample has none; the bias never is (each
                    # cluster holds an answer both judged).
                    if f == "bias":
                        failures.append(f"{tag} {f}_ci95")
                        print(f"  {tag} {f}_ci95: none over {len(per)} clusters   <-- DIFFERS")
                    continue
                lo, hi = bounds[f]
                ok = ci[0] <= ci[1] and lo - TOLERANCE <= ci[0] and ci[1] <= hi + TOLERANCE
                if not ok:
                    failures.append(f"{tag} {f}_ci95")
                    print(f"  {tag} {f}_ci95 {ci} outside [{lo}, {hi}] or unordered   <-- DIFFERS")
                checked += 1
    print(f"{label}: {checked} intervals within what any bootstrap over clusters gives")


def snap(value, allowed):
    """The allowed score nearest to value, the lower one on a tie."""
    return min(sorted(allowed), key=lambda s: (abs(s - value), s))


def rule_score(rule, scores, allowed):
    if rule == "mean":
        return snap(sum(scores) / len(scores), allowed)
    if rule == "median":
        s = sorted(scores)
        n = len(s)
        mid = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
        return snap(mid, allowed)
    counts = {}
    for s in scores:
        counts[s] = counts.get(s, 0) + 1
    top = max(counts.values())
    return min(s for s, c in counts.items() if c == top)


def check_panel(binary, files, label, failures):
    questions, judgments = split(read_records(files))
    names = sorted({j["judge"] for j in judgments})
    members = [n for n in names if not n.startswith("human:")][:3]
    if len(members) < 2:
        return
    by_key = {}
    for j in judgments:
        if j["judge"] in members and j["question_id"] in questions:
            k = (j["question_id"], j["model"], j.get("attempt", 0), j.get("judge_run", 0))
            by_key.setdefault(k, {}).setdefault(j["judge"], j)
    for rule in ["median", "mean", "majority"]:
        # Under --missing exclude a model's Overall is the mean over the panel's filled cells.
        got = ours(
            binary,
            ["score", *map(str, files), "--format", "json", "--bootstrap", "0", "--missing", "exclude",
             *[f for m in members for f in ("--panel", m)], "--panel-rule", rule],
        )
        panel = got["panel"]["judge"]
        # The panel's judgments here: a key that more than half the members judged.
        s_sum, cells = {}, {}
        for (q, model, attempt, run), js in by_key.items():
            if 2 * len(js) <= len(members):
                continue
            total = 0
            for item in questions[q]["checklist"]:
                scores = [next(i["score"] for i in js[m]["items"] if i["id"] == item["id"]) for m in sorted(js)]
                total += rule_score(rule, scores, [t["score"] for t in item["rubric"]])
            s_sum[model] = s_sum.get(model, 0) + total
            cells[model] = cells.get(model, 0) + 1
        rows = {m["model"]: m for m in got["models"] if m["judge"] == panel}
        for model in sorted(set(cells) | set(rows)):
            want = 100.0 * s_sum[model] / (10.0 * cells[model]) if model in cells else None
            close(f"{label} panel {rule} {model} overall", rows.get(model, {}).get("overall"), want, failures)
            close(f"{label} panel {rule} {model} judgments", rows.get(model, {}).get("judgments"), cells.get(model, 0), failures)
    print(f"{label}: panel of {', '.join(members)} checked under median, mean and majority")


def random_question(rng, n):
    k = rng.randint(1, 4)
    cuts = sorted(rng.sample(range(1, 9), k - 1))
    weights = [b - a for a, b in zip([0] + cuts, cuts + [9])]
    checklist = []
    for i, w in enumerate(weights):
        middle = [s for s in range(1, w) if rng.random() < 0.5]
        checklist.append(
            {"id": f"k{i + 1}", "kind": "knowledge", "key_point": f"point {i + 1}", "weight": w,
             "rubric": [{"score": s, "criterion": ""} for s in sorted({0, w, *middle}, reverse=True)]}
        )
    checklist.append(
        {"id": "clarity", "kind": "clarity", "key_point": "Clarity", "weight": 1,
         "rubric": [{"score": 1, "criterion": ""}, {"score": 0, "criterion": ""}]}
    )
    return {
        "id": f"r-{n:03d}",
        # Three repositories, so that the bootstrap over whole ones has clusters to draw.
        "repo": {"name": f"o/r{n % 3}", "url": "", "commit": "", "language": "Rust", "theme": "T"},
        "category": rng.choice(CATEGORIES),
        "question": "q?", "reference_answer": "a.", "external_context": False,
        "checklist": checklist,
    }


def random_dataset(seed, out):
    rng = random.Random(seed)
    questions = [random_question(rng, n) for n in range(rng.randint(4, 30))]
    judges = ["judge-a", "judge-b", "judge-c", "human:ann"]
    models = ["m1", "m2", "m3"]
    lines = []
    for q in questions:
        for model in models:
            for attempt in range(rng.randint(1, 2)):
                truth = {i["id"]: rng.choice([t["score"] for t in i["rubric"]]) for i in q["checklist"]}
                for judge in judges:
                    for run in range(rng.choice([1, 1, 2])):
                        if rng.random() < 0.15:
                            continue
                        items = []
                        for i in q["checklist"]:
                            allowed = [t["score"] for t in i["rubric"]]
                            s = truth[i["id"]] if rng.random() < 0.6 else rng.choice(allowed)
                            items.append({"id": i["id"], "rationale": f"{judge} {rng.random():.6f}", "score": s})
                        lines.append({"question_id": q["id"], "model": model, "attempt": attempt,
                                      "judge": judge, "judge_run": run, "items": items})
    (out / "benchmark.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (out / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in lines))
    return [out / "benchmark.jsonl", out / "judgments.jsonl"]


def main():
    binary, fixture = sys.argv[1], Path(sys.argv[2])
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 5
    failures = []
    files = sorted(p for p in fixture.iterdir() if p.suffix in (".jsonl", ".json"))
    check_judges(binary, files, fixture.name, failures)
    check_panel(binary, files, fixture.name, failures)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            d = Path(tmp) / f"seed{seed}"
            d.mkdir()
            data = random_dataset(seed, d)
            check_judges(binary, data, f"seed {seed}", failures)
            check_panel(binary, data, f"seed {seed}", failures)
    if failures:
        print(f"{len(failures)} figure(s) differ from the reference")
        sys.exit(1)
    print("every figure equals the reference")


if __name__ == "__main__":
    main()
