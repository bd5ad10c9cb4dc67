#!/usr/bin/env python3
"""Writes RELIABILITY.md from the results `make stress` collected.

usage: reliability.py RESULTS_DIR TRIALS OPERATIONS > RELIABILITY.md

TRIALS is the number of kills each operation must show, OPERATIONS how many
operations must have reported: a missing or short set fails, rather than
leaving its row out.

RESULTS_DIR holds one OPERATION.json per crash trial set (written by the
tests through StrongroomTestSupport's CrashTrials). Nothing here is typed
by hand: rerun `make stress` to change it.
"""
import datetime
import glob
import json
import os
import platform
import sys


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Linux {platform.release()}"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    trials, operations = int(sys.argv[2]), int(sys.argv[3])
    results = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))]
    if len(results) != operations:
        sys.exit(f"reliability.py: {len(results)} operations reported in {sys.argv[1]}, expected {operations}: run make stress")
    short = [r["operation"] for r in results if r["trials"] != trials]
    if short:
        sys.exit(f"reliability.py: not {trials} trials: {', '.join(short)}")
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("# Reliability")
    print()
    print("<!-- Written by `make stress` (Scripts/reliability.py) from its results: rerun it, do not edit. -->")
    print()
    print(f"Run of {today} on {machine()}.")
    print()
    print("## Crashes: child processes killed with SIGKILL at random moments")
    print()
    print("After every kill the database must open with the right key (for rekey: the old or the new, never neither),")
    print("pass `integrity_check` (and `foreign_key_check` where there are foreign keys), be at the version before or")
    print("after, keep every row, and the next run must complete the work. A failure fails `make stress`.")
    print()
    print("| operation | trials | killed before exit | killed inside the operation | outcomes | failures | duration |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(r["outcomes"].items()))
        held = "0 ✓" if r["failures"] == 0 else f"{r['failures']} ✗"
        print(f"| {r['operation']} | {r['trials']} | {r['killed_before_exit']} | {r['killed_inside']} | {outcomes} | {held} | {r['seconds']:.0f} s |")
    print()
    print("\"Killed before exit\": SIGKILL ended the child (any other end of a child is a failure). \"Killed inside\": migrate,")
    print("killed after taking its lock and before its commit; rekey, killed after the rewrite had begun (WAL frames or")
    print("changed pages) and before its commit (the old key still opens the file); import, killed after making its")
    print("temporary copy. Every check opens a copy of what the kill left, so the next run starts from the crash state.")
    print("`make test` runs the same trials with 12 or 24 kills each.")


if __name__ == "__main__":
    main()
