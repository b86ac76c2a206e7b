#!/usr/bin/env python3
"""The reference check of `repoprobe curate agreement` (docs/review.md#agreement).

On the review files of testdata/reviews/ (three reviewers, each leaving some questions out),
Krippendorff's alpha (nominal) of every criterion and of the decision must equal PyPI
`krippendorff`'s, and on the two-reviewer subset (ann, bob) Cohen's kappa must equal
scikit-learn's `cohen_kappa_score` over the questions both rated, to 1e-9; percent agreement is
recomputed here from its definition. Run by scripts/test.sh after the cargo tests, with the
pinned packages on PYTHONPATH (tools/agreement):

    PYTHONPATH=tools/agreement python3 scripts/check-agreement.py BIN testdata/reviews
"""

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

CRITERIA = ["qa_consistency", "checklist_quality", "task_validity", "code_relevance"]
TOLERANCE = 1e-9


def reviews(path):
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            if r.get("role") == "reviewer":
                out.append(r)
    return out


def value(r, rating):
    if rating == "decision":
        return 1.0 if r["decision"] == "accept" else 0.0
    return 1.0 if r["criteria"][rating] else 0.0


def ours(binary, files):
    out = subprocess.run(
        [binary, "curate", "agreement", *map(str, files), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def close(name, got, want, failures):
    if want is None or (isinstance(want, float) and math.isnan(want)):
        ok = got is None
    else:
        ok = got is not None and abs(got - want) <= TOLERANCE
    print(f"  {name:<36} ours {got!r:<22} reference {want!r}{'' if ok else '   <-- DIFFERS'}")
    if not ok:
        failures.append(name)


def check(binary, files, with_kappa, failures):
    records = [r for f in files for r in reviews(f)]
    names = sorted({r["reviewer"] for r in records})
    items = sorted({r["question_id"] for r in records})
    got = ours(binary, files)
    by = {(r["question_id"], r["reviewer"]): r for r in records}
    rated = [q for q in items if sum((q, n) in by for n in names) >= 2]
    if got["reviewers"] != names or got["items"] != len(rated):
        failures.append("reviewers/items")
        print(f"  reviewers/items differ: {got['reviewers']} {got['items']} vs {names} {len(rated)}")
    print(f"{', '.join(names)}: {len(rated)} question(s) rated by at least two")
    for rating in CRITERIA + ["decision"]:
        # Rows are reviewers, columns questions; NaN where a reviewer did not rate one.
        data = np.array(
            [[value(by[(q, n)], rating) if (q, n) in by else np.nan for q in items] for n in names]
        )
        pairable = data[:, np.sum(~np.isnan(data), axis=0) >= 2]
        values = set(pairable[~np.isnan(pairable)].tolist())
        # krippendorff refuses a domain of one value; ours says null (0/0) there.
        alpha = (
            float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
            if len(values) > 1
            else None
        )
        figures = got["criteria"][rating]
        close(f"{rating} alpha", figures["alpha"], alpha, failures)
        shares = []
        for q in rated:
            vs = [value(by[(q, n)], rating) for n in names if (q, n) in by]
            pairs = list(itertools.combinations(vs, 2))
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
        close(f"{rating} percent", figures["percent"], 100 * sum(shares) / len(shares), failures)
        if with_kappa:
            a, b = names
            both = [q for q in items if (q, a) in by and (q, b) in by]
            ya = [value(by[(q, a)], rating) for q in both]
            yb = [value(by[(q, b)], rating) for q in both]
            kappa = None if len(set(ya) | set(yb)) < 2 else float(cohen_kappa_score(ya, yb))
            close(f"{rating} kappa", figures["kappa"], kappa, failures)
        elif figures["kappa"] is not None:
            failures.append(f"{rating} kappa")
            print(f"  {rating} kappa: {figures['kappa']} with {len(names)} reviewers (want null)")


def main():
    binary, folder = sys.argv[1], Path(sys.argv[2])
    failures = []
    three = [folder / "ann.jsonl", folder / "bob.jsonl", folder / "cy.jsonl"]
    print("== three reviewers, with gaps: Krippendorff's alpha (PyPI krippendorff)")
    check(binary, three, False, failures)
    print("== two reviewers: Cohen's kappa (scikit-learn cohen_kappa_score) and alpha")
    check(binary, three[:2], True, failures)
    if failures:
        print(f"FAILED: {len(failures)} figure(s) differ: {', '.join(failures)}")
        sys.exit(1)
    print("every figure equals the reference to 1e-9")


if __name__ == "__main__":
    main()
