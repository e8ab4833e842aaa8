#!/usr/bin/env python3
"""Removes each guard of the DynamoDB store in turn and runs the tests that
should need it: every removal must fail one of them.

The guards, what each protects and its tests are in docs/guards.toml. A
guard's clause is replaced by `clause OR NOT clause`, always true with its
placeholders still used (DynamoDB and the strict double refuse an
unused one, which would fail the tests for the wrong reason), or its `find`
text by `replace`. The source is restored after each, whatever happens.

Run through scripts/guards.sh, which starts the strict doubles:

    bash scripts/guards.sh                 # every guard
    bash scripts/guards.sh wave.version    # the guards named

Prints one line per guard (killed, SURVIVED, unviable when the mutant does
not compile) and the totals; exits non-zero when a guard not marked as a
survivor in the list survived, or the tests fail with every guard in place.
"""

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "docs" / "guards.toml"
CARGO = ["cargo", "test", "--quiet", "-p", "restock-store-dynamo", "--test", "store"]
ENDPOINTS = {
    "strict": "RESTOCK_DYNAMODB_ENDPOINT",
    "contended": "RESTOCK_DYNAMODB_CONTENDED_ENDPOINT",
}


def mutant(text, guard):
    """`text` with `guard` removed."""
    find = guard["find"]
    count = text.count(find)
    if count != 1:
        sys.exit(f"{guard['id']}: its `find` is in {guard['file']} {count} times, not once")
    if "replace" in guard:
        new = guard["replace"]
    else:
        clause = guard["clause"]
        if clause not in find:
            sys.exit(f"{guard['id']}: its clause is not in its `find`")
        new = find.replace(clause, always_true(clause, alone=f'"{clause}"' in find), 1)
    return text.replace(find, new, 1)


def always_true(clause, alone):
    """`clause OR NOT clause`, parenthesised only where the grammar needs it:
    DynamoDB (and the strict double) refuse redundant parentheses, which
    would fail the tests for the wrong reason."""
    compound = " OR " in clause or " AND " in clause
    wrapped = clause.startswith("(") and clause.endswith(")")
    inner = f"({clause})" if compound and not wrapped else clause
    either = f"{inner} OR NOT {inner}"
    # Alone in its condition, the store's own parentheses group it.
    return either if alone else f"({either})"


def env_for(guard):
    var = ENDPOINTS[guard.get("endpoint", "strict")]
    endpoint = os.environ.get(var)
    if not endpoint:
        sys.exit(f"{var} is not set: run this through scripts/guards.sh")
    return {**os.environ, "RESTOCK_DYNAMODB_ENDPOINT": endpoint}


def build():
    done = subprocess.run(CARGO + ["--no-run"], cwd=ROOT, capture_output=True, text=True)
    return done.returncode == 0, done.stderr


def run_tests(guard):
    """True when every test passed."""
    done = subprocess.run(
        CARGO + ["--", "--exact", *guard["tests"]],
        cwd=ROOT,
        env=env_for(guard),
        capture_output=True,
        text=True,
    )
    return done.returncode == 0, done.stdout + done.stderr


def stop(_signum, _frame):
    # Stopped from outside (SIGTERM, or SIGINT even where a background job
    # ignores it): unwind, so the guard being tried is put back.
    raise KeyboardInterrupt


def main(names):
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    guards = tomllib.loads(LIST.read_text())["guard"]
    if names:
        unknown = set(names) - {g["id"] for g in guards}
        if unknown:
            sys.exit(f"no such guard in {LIST.name}: {', '.join(sorted(unknown))}")
        guards = [g for g in guards if g["id"] in names]
    for g in guards:  # every `find` is checked before anything is changed
        mutant((ROOT / g["file"]).read_text(), g)

    ok, log = build()
    if not ok:
        sys.exit(f"the store's tests do not build as they are:\n{log}")
    for endpoint in sorted({g.get("endpoint", "strict") for g in guards}):
        tests = sorted({t for g in guards if g.get("endpoint", "strict") == endpoint for t in g["tests"]})
        passed, log = run_tests({"id": endpoint, "endpoint": endpoint, "tests": tests})
        if not passed:
            sys.exit(f"the tests fail with every guard in place:\n{log[-3000:]}")
    print(f"baseline: the tests of {len(guards)} guards pass with every guard in place", flush=True)

    tally = {"killed": 0, "SURVIVED": 0, "survived (listed)": 0, "unviable": 0}
    unexpected = []
    for g in guards:
        path = ROOT / g["file"]
        original = path.read_text()
        started = time.monotonic()
        try:
            path.write_text(mutant(original, g))
            compiled, log = build()
            if not compiled:
                result, failed = "unviable", ""
            else:
                passed, log = run_tests(g)
                failed = ", ".join(
                    line.split()[0] for line in log.splitlines()
                    if line.startswith("    ") and "::" in line
                )
                if "ValidationException" in log:
                    # The mutant is not a request DynamoDB would take: a
                    # failure says nothing about the guard.
                    result, failed = "unviable", "(DynamoDB refused the expression)"
                elif not passed:
                    result = "killed"
                elif "survivor" in g:
                    result = "survived (listed)"
                else:
                    result = "SURVIVED"
                    unexpected.append(g["id"])
        finally:
            path.write_text(original)
        tally[result] += 1
        took = time.monotonic() - started
        by = f" by {failed}" if failed else ""
        print(f"{g['id']:34} {result}{by} ({took:.0f} s)", flush=True)

    print("guards: " + ", ".join(f"{n} {k}" for k, n in tally.items()))
    build()  # leave the build as the source is
    if unexpected:
        print("survived, with no reason listed: " + ", ".join(unexpected))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
