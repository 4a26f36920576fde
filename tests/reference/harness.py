"""What every Python test suite here shares: pass/fail counting that keeps going after a
failure, relative differences, and the exit status."""
import sys

results = {"passed": 0, "failed": 0}


def check(ok, what):
    results["passed" if ok else "failed"] += 1
    if not ok:
        print(f"FAIL: {what}", flush=True)


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def finish(label=""):
    print(f"{label}{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)
