"""Validates every trajectory the tests left in a directory against the ATIF models as
published (PyPI `atif`, Harbor's RFC 0001): `python check-atif.py DIR [--expect NAME ...]`.

Run by scripts/test.sh after `cargo test`, which leaves one trajectory per agent it ran
(crates/repoprobe-cli/tests/cli/common/trajectory.rs). Fails when one does not validate, when
the directory holds none, or when an expected one is missing.
"""

import json
import pathlib
import sys

from atif import Trajectory


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    directory = pathlib.Path(args[0])
    expected = args[args.index("--expect") + 1 :] if "--expect" in args else []
    files = sorted(directory.glob("*.json"))
    if not files:
        print(f"no trajectory in {directory}", file=sys.stderr)
        return 1
    valid, bad = 0, 0
    for f in files:
        try:
            t = Trajectory.model_validate(json.loads(f.read_text()))
        except Exception as e:  # pydantic's ValidationError, or JSON that does not parse
            print(f"{f.name}: not ATIF: {e}", file=sys.stderr)
            bad += 1
            continue
        valid += 1
        calls = sum(len(s.tool_calls or []) for s in t.steps)
        print(f"{f.name}: ATIF {t.schema_version}, {len(t.steps)} steps, {calls} tool calls")
    names = {f.stem for f in files}
    for name in expected:
        if name not in names:
            print(f"{name}: no trajectory was left by the tests", file=sys.stderr)
            bad += 1
    print(f"ATIF check: {valid} valid, {bad} not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
