#!/usr/bin/env python3
"""Writes RELIABILITY.md from the results in Reliability/results/.

usage: reliability.py [--results DIR] [--engine sqlcipher3|sqlcipher4] [--stress TRIALS OPERATIONS]
                      [--fuzz EXECUTIONS TARGETS] [--sanitizers] [--soak DURATION] > RELIABILITY.md

Each run writes its own folder of Reliability/results/ (committed), then
calls this script to write the whole page again from every folder:

  make stress      ENGINE/crashes/ faults/ tampering/ leaks/ load/   (the tests,
                   through StrongroomTestSupport's ReliabilityResults)   --stress 200 N
  make sanitize    ENGINE/sanitizers/  (Scripts/sanitize.sh)            --sanitizers
  make soak        ENGINE/service/soak.json and soak.svg (Scripts/soak.py)  --soak 1800
  make fuzz        fuzz/        (Scripts/fuzz.sh)                       --fuzz 1000000 N

ENGINE is the engine the run was built and run on (make's ENGINE, passed as
--engine): sqlcipher3, the system's SQLCipher 3.4.1, or sqlcipher4, SQLCipher
4.6.1 (Scripts/sqlcipher4.sh). Its stamp records the engine make found
(STRONGROOM_ENGINE_VERSION), and every row of the page names it.

The flag of the run that just finished checks its own results: a missing
operation, a short trial count, too few executions, or a result that another
run left (make stress and make sanitize give each run an id,
STRONGROOM_RELIABILITY_RUN, that every result file carries) fails, rather than
leaving a row out; it also stamps that run's id, date, machine and commit
(Reliability/results/RUN.run.json). make stress, make sanitize and make soak
remove their stamp before they start, so a run that fails leaves none, and the page shows
no result of a run that did not finish, nor one another run left beside it.
Nothing in RELIABILITY.md is typed by hand: rerun the make target to change it.

ENGINE/service/kills.json, written by CustomerService's SIGKILL test (KillTests) when
STRONGROOM_STRESS_RESULTS names the engine's folder, is shown in the service section
when it carries the run id of that engine's stamped make stress.
"""
import datetime
import glob
import json
import os
import platform
import subprocess
import sys

# Reliability/results/, or the folder given with --results (the script's own tests).
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Reliability", "results")

# The engines, each with its own folder of make stress and make sanitize results, and the make command of each.
ENGINES = {"sqlcipher3": ("SQLCipher 3", ""), "sqlcipher4": ("SQLCipher 4", " ENGINE=sqlcipher4")}


def fail(message):
    sys.exit(f"reliability.py: {message}")


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


def git(*args):
    return subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def commit():
    """The commit measured: as make read it when the run started (STRONGROOM_RELIABILITY_COMMIT, with -dirty
    when files other than the results had changed); the run fails if HEAD moved since."""
    started = os.environ.get("STRONGROOM_RELIABILITY_COMMIT")
    try:
        head = git("rev-parse", "--short=7", "HEAD")
        if started is None:
            changed = git("status", "--porcelain", "--", ".", ":!Reliability/results", ":!RELIABILITY.md")
            return head + ("-dirty" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return started or "unknown"
    if started.split("-")[0] != head:
        fail(f"HEAD is {head}, not {started.split('-')[0]} as when the run started: run it again on one commit")
    return started


def folder(engine):
    """An engine's folder of results, or the top one (make fuzz)."""
    return os.path.join(ROOT, engine) if engine else ROOT


def load(kind, engine=None):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(folder(engine), kind, "*.json")))]


def stamped(run, engine=None):
    path = os.path.join(folder(engine), f"{run}.run.json")
    return json.load(open(path)) if os.path.exists(path) else None


def current_run():
    run = os.environ.get("STRONGROOM_RELIABILITY_RUN")
    if not run:
        fail("STRONGROOM_RELIABILITY_RUN is not set: run this through make")
    return run


def check_from_this_run(kinds, engine=None):
    run = current_run()
    for kind in kinds:
        for path in sorted(glob.glob(os.path.join(folder(engine), kind, "*.json"))):
            if json.load(open(path)).get("run") != run:
                fail(f"{os.path.relpath(path, ROOT)} is not from this run ({run}): remove it and run again")


def engine_version(engine):
    """The engine make found for this run (STRONGROOM_ENGINE_VERSION, e.g. "SQLCipher 4.6.1 community on SQLite
    3.46.1"), which must be the folder's."""
    version = os.environ.get("STRONGROOM_ENGINE_VERSION", "")
    if not version:
        fail("STRONGROOM_ENGINE_VERSION is not set: run this through make, which asks the engine")
    label = ENGINES[engine][0]
    if not version.startswith(label + "."):
        fail(f"the run's engine is {version}, not {label} as results/{engine}/ holds: run it with make ENGINE={engine}")
    return version


def stamp(run, engine=None):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    record = {"date": now, "machine": machine(), "commit": commit(), "run": current_run()}
    if engine:
        record["engine"] = engine_version(engine)
    with open(os.path.join(folder(engine), f"{run}.run.json"), "w") as f:
        json.dump(record, f, indent=2, sort_keys=True)
        f.write("\n")


def engine_name(engine, s):
    """The engine a stamped run recorded, or its folder's name when the stamp predates engines."""
    return (s or {}).get("engine") or f"{ENGINES[engine][0]} (version not recorded)"


def engine_column(engine, s):
    """The engine in a table row: the SQLCipher version the run recorded (e.g. 4.6.1)."""
    version = (s or {}).get("engine", "")
    return version.split()[1] if version.startswith("SQLCipher ") else ENGINES[engine][0].split()[1] + " (not recorded)"


def run_line(run, command, engine=None):
    if engine:
        command += ENGINES[engine][1]
    s = stamped(run, engine)
    if s is None:
        on = f" on {ENGINES[engine][0]}" if engine else ""
        return (f"No finished run of `{command}`{on}: none of what an unfinished run left in Reliability/results/ is shown "
                f"(run `{command}`).")
    at = f", commit {s['commit']}" if "commit" in s else ""
    prefix = f"{engine_name(engine, s)}: " if engine else ""
    return f"{prefix}`{command}`, run of {s['date']} on {s['machine']}{at}."


def run_lines(run, command):
    """The run line of each engine, as a list."""
    for engine in ENGINES:
        print(f"- {run_line(run, command, engine)}")


def rows_of(run, kind, engine=None):
    """The results of the stamped run, and the names of those another run left (a stamp of an older
    version of this script has no run id: only results with none are its own)."""
    s = stamped(run, engine)
    if s is None:
        return [], []
    rows = load(kind, engine)
    mine = [dict(r, engine=engine_column(engine, s), engine_order=list(ENGINES).index(engine)) if engine else r
            for r in rows if r.get("run") == s.get("run")]
    return mine, [str(r.get("operation") or r.get("target") or r.get("place") or r.get("sanitizer") or r.get("name") or r.get("fault"))
                  for r in rows if r.get("run") != s.get("run")]


def left_out(names, command):
    if names:
        print()
        print(f"Not shown, left by another run than this one (rerun `{command}`): {', '.join(names)}.")


def held(failures):
    return "0 ✓" if failures == 0 else f"{failures} ✗"


def crash_held(r):
    """A crash row holds when no check failed and its kills landed where the test requires."""
    short = []
    if r.get("minimum_inside", 0) < 1:
        short.append("no minimum of kills inside recorded")
    else:
        if r["killed_inside"] < r["minimum_inside"]:
            short.append(f"{r['killed_inside']} kills inside, {r['minimum_inside']} required")
        if r.get("killed_inside_with_writes", 0) < r.get("minimum_inside_with_writes", 0):
            short.append(f"{r['killed_inside_with_writes']} kills inside the writes, {r['minimum_inside_with_writes']} required")
    if r["failures"] == 0 and not short:
        return "0 ✓"
    return f"{r['failures']} ✗" + (f" ({'; '.join(short)})" if short else "")


def inside(r):
    text = f"{r['killed_inside']} (at least {r.get('minimum_inside', '?')})"
    if r.get("minimum_inside_with_writes", 0) > 0:
        text += f", {r['killed_inside_with_writes']} of them with pages written (at least {r['minimum_inside_with_writes']})"
    return text


def rows_of_engines(run, kind, key):
    """The stamped runs' results of every engine, each row carrying its engine, one engine's row beside the
    other's; and the names of those another run left."""
    rows, others = [], []
    for engine in ENGINES:
        mine, theirs = rows_of(run, kind, engine)
        rows += mine
        others += theirs
    return sorted(rows, key=lambda r: (str(key(r)), r["engine_order"])), others


def check_stress(trials, operations, engine):
    check_from_this_run(["crashes", "faults", "tampering", "leaks", "load", "wal"], engine)
    crashes = load("crashes", engine)
    if len(crashes) != operations:
        fail(f"{len(crashes)} crash operations reported, expected {operations}: run make stress")
    short = [r["operation"] for r in crashes if r["trials"] != trials]
    if short:
        fail(f"not {trials} trials: {', '.join(short)}")
    for kind in ("faults", "tampering", "leaks", "load", "wal"):
        if not load(kind, engine):
            fail(f"no {kind} results: run make stress")
    if not os.path.exists(os.path.join(folder(engine), "leaks", "core-dump.json")):
        fail("no core dump searched (leaks/core-dump.json): is STRONGROOM_SANITIZER set?")
    stamp("stress", engine)


def check_fuzz(executions, targets):
    check_from_this_run(["fuzz"])
    fuzz = load("fuzz")
    if len(fuzz) != targets:
        fail(f"{len(fuzz)} fuzz targets reported, expected {targets}: run make fuzz")
    short = [r["target"] for r in fuzz if r["executions"] < executions]
    if short:
        fail(f"fewer than {executions} executions: {', '.join(short)}")
    stamp("fuzz")


def check_sanitizers(engine):
    check_from_this_run(["sanitizers"], engine)
    found = {r["sanitizer"] for r in load("sanitizers", engine)}
    if found != {"thread", "address"}:
        fail(f"sanitizer results for {sorted(found)}, expected address and thread: run make sanitize")
    stamp("sanitizers", engine)


def seconds_of(text):
    """A duration as make soak takes it: seconds (1800), or 1800s, 30m, 2h."""
    text = str(text).strip()
    units = {"s": 1, "m": 60, "h": 3600}
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def service_result(engine, name):
    """results/ENGINE/service/NAME.json, or None."""
    path = os.path.join(folder(engine), "service", f"{name}.json")
    return json.load(open(path)) if os.path.exists(path) else None


def soak_result(engine):
    return service_result(engine, "soak")


def stamped_service_results(run, name, label):
    """(engine, stamp, result) for each engine whose service/NAME.json came from its stamped `run`, and the
    names of the results left out (another run's, or no stamp)."""
    rows, others = [], []
    for engine in ENGINES:
        r = service_result(engine, name)
        if r is None:
            continue
        s = stamped(run, engine)
        if s is not None and r.get("run") and r.get("run") == s.get("run"):
            rows.append((engine, s, r))
        else:
            others.append(f"{ENGINES[engine][0]} {label}")
    return rows, others


def check_soak(duration, engine):
    """make soak's own result: this run's, as long as it was asked to run, every verdict held."""
    r = soak_result(engine)
    if r is None:
        fail(f"no service/soak.json in results/{engine}: run make soak")
    if r.get("run") != current_run():
        fail(f"results/{engine}/service/soak.json is not from this run ({current_run()}): remove it and run again")
    if r.get("engine") != engine:
        fail(f"results/{engine}/service/soak.json ran on {r.get('engine')}, not {engine}")
    if r.get("duration_seconds") != duration:
        fail(f"the soak ran {r.get('duration_seconds')} s, not {duration} s")
    if not r.get("samples") or r["samples"][-1]["t"] < duration - 2 * r.get("interval_seconds", 10):
        fail("the soak's samples do not cover its duration")
    failed = [name for name, v in r.get("verdicts", {}).items() if not v.get("ok")]
    if not r.get("verdicts") or failed or not r.get("passed"):
        fail(f"the soak failed: {', '.join(failed) or 'no verdict'}")
    stamp("soak", engine)


def crashes_section():
    rows, others = rows_of_engines("stress", "crashes", lambda r: r["operation"])
    print("## Crashes: child processes killed with SIGKILL at random moments")
    print()
    run_lines("stress", "make stress")
    print()
    print("After every kill the database must open with the right key (for rekey: the old or the new, never neither),")
    print("pass `integrity_check` and `foreign_key_check`, be at the version before or after, keep every row, open every")
    print("sealed value, and the next run must complete the work. A failure fails `make stress`.")
    print()
    print("| engine | operation | trials | killed before exit | killed inside the operation | outcomes | failures | duration |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(r["outcomes"].items()))
        print(f"| {r['engine']} | {r['operation']} | {r['trials']} | {r['killed_before_exit']} | {inside(r)} | {outcomes} "
              f"| {crash_held(r)} | {r['seconds']:.0f} s |")
    left_out(others, "make stress")
    print()
    print("\"Killed before exit\": SIGKILL ended the child (any other end of a child is a failure). \"Killed inside\": killed")
    print("after the operation had begun (a migration: its lock held, with or without pages written, as the outcomes tell; rekey: WAL frames")
    print("or changed pages; import: its temporary copy made; rotation: a batch committed) and before it finished. A child")
    print("that exits without having done the work is a failure. Every check opens a copy of what the kill left, so the next run")
    print("starts from the crash state. `make test` runs the same trials with 10 to 24 kills each.")
    print()
    schedules = {r.get("kill_schedule", "even") for r in rows}
    if not rows:
        pass
    elif schedules == {"split, first writes"}:
        print("Kill moments: every other trial, a random moment of an uninterrupted run (its duration × 1.1, start-up and")
        print("exit included); the others, a random moment in the span where the earlier kills place the operation's writes:")
        print("after the kills that found nothing written yet (before the operation, or a migration still computing in its")
        print("cache) and before those that found it finished, split where the fewest kills fall on the wrong side (a stalled")
        print("start does not widen it). So a short operation inside a long run, and a migration that writes only at its")
        print("commit, still get kills where they write. In migrations, one trial in four also waits for the first journal or")
        print("WAL frame and kills 0 to 2 ms after it. \"Killed inside\" is therefore higher than an even spread gives, and")
        print("the outcome counts do not measure how long each phase takes. A row fails when fewer kills landed inside (and,")
        print("for migrations, inside the writes) than the test requires.")
    elif schedules == {"even"}:
        print("Kill moments: a random moment of an uninterrupted run (its duration × 1.1), spread evenly.")
    elif schedules == {"targeted"}:
        print("Kill moments: every other trial, a random moment between the latest kill that landed before the operation")
        print("and the earliest that landed after it; the others, a random moment of an uninterrupted run.")
    else:
        print("Kill moments: these rows come from runs with different kill schedules (rerun `make stress`).")
    print()


def table_section(kind, title, intro, columns):
    rows, others = rows_of_engines("stress", kind, columns[0][1])
    columns = [("engine", lambda r: r["engine"])] + columns
    print(f"## {title}")
    print()
    run_lines("stress", "make stress")
    print()
    print(intro)
    print()
    print("| " + " | ".join(name for name, _ in columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(str(render(r)) for _, render in columns) + " |")
    left_out(others, "make stress")
    print()


def minutes(seconds):
    return f"{seconds} s" if seconds < 120 else f"{seconds / 60:g} min"


def service_section():
    print("## Service: CustomerService for hours, and SIGKILLed under load")
    print()
    print("`Examples/CustomerService`, the JSON API on Hummingbird and a `DatabasePool` (1 writer, 4 readers), e-mail and")
    print("note sealed, as a release build of its own run as a process.")
    print()
    print("### Uptime: half the peak, sampled every 10 s")
    print()
    run_lines("soak", "make soak")
    print()
    print("`make soak` seeds the service with 10,000 customers, measures its peak under wrk's mix (80% get by id, 10% lookup")
    print("by e-mail, 10% create; 64 connections, 15 s), then runs the same mix at half that rate for `DURATION` (30 minutes")
    print("unless `DURATION=` says otherwise) in one wrk process whose connections stay open (`Load/paced.lua`: each wrk")
    print("thread on a schedule, through wrk's `delay()`), and samples the service from `/proc` every 10 s. The first minute")
    print("is warm-up: after it, resident memory must grow less than 5% (the largest sample after it against the sample at")
    print("1 minute), open descriptors and threads by at most 4, and the `-wal` (polled every 0.2 s) stay under its documented")
    print("bound, twice `CheckpointPolicy`'s 16 MiB limit. Every answer must be a 2xx, the achieved rate within 10% of its")
    print("target, SIGTERM must end the service with exit 0 within 5 s leaving the `-wal` empty, and the file must pass")
    print("`integrity_check` and `strongroom verify` (every sealed value opens) with every acknowledged create in it.")
    print("`Scripts/soak.py` judges; a failed verdict fails `make soak`.")
    print()
    rows, others = stamped_service_results("soak", "soak", "soak")
    if rows:
        print("| engine | ran for | peak | soak rate (target) | soak p99 | RSS at 1 min → largest after | descriptors | threads "
              "| largest `-wal` (bound) | non-2xx, socket errors | SIGTERM | database | verdicts failed |")
        print("|" + "---|" * 13)
    for engine, s, r in rows:
        v = r["verdicts"]
        samples = r["samples"]
        reference = next(x for x in samples if x["t"] >= r.get("warmup_seconds", 60) - 0.5)
        after = [x for x in samples if x["t"] > reference["t"]]
        failed = [name for name, verdict in v.items() if not verdict["ok"]]
        errors = sum(v["errors"]["value"].values())
        db = r["database"]
        print(f"| {engine_column(engine, s)} | {minutes(r['duration_seconds'])} "
              f"| {r['peak']['requests_per_s']:,.0f}/s | {r['soak']['requests_per_s']:,.0f}/s ({r['target_rate']:,.0f}) "
              f"| {r['soak']['latency_us']['p99'] / 1000:.1f} ms "
              f"| {reference['rss_kib'] / 1024:.1f} → {max(x['rss_kib'] for x in after) / 1024:.1f} MiB ({v['rss']['value']:+.1f}%) "
              f"| {reference['fds']} → {max(x['fds'] for x in after)} | {reference['threads']} → {max(x['threads'] for x in after)} "
              f"| {r['wal']['max_bytes'] / 2**20:.1f} MiB ({r['wal']['bound_bytes'] / 2**20:.0f} MiB) | {held(errors)} "
              f"| exit {r['shutdown']['exit']} in {r['shutdown']['seconds']:.2f} s "
              f"| {db['integrity_check']}, verify exit {db['verify_exit']}, {db['customers']:,} rows for {db['acknowledged']:,} creates "
              f"| {held(len(failed))} |")
    left_out(others, "make soak")
    print()
    for engine, s, r in rows:
        print(f"{engine_name(engine, s)}:")
        print()
        if r["duration_seconds"] < 1800:
            print(f"- This run lasted {minutes(r['duration_seconds'])} (`make soak DURATION={r['duration_seconds']}`), "
                  "not the default 30 minutes.")
        added = r["seed"].get("added_after") or []
        print(f"- {r['seeded']:,} customers seeded" + (f" ({', '.join(added)} added afterwards: seed.lua left it out)" if added else "")
              + f", {r['soak']['requests']:,} requests in the soak, the database {r['database']['bytes'] / 2**20:.1f} MiB at the end.")
        if r.get("cache_size_mib"):
            print(f"- The service ran with `--readers {r.get('readers', 4)} --cache-size {r['cache_size_mib']}`: {r.get('readers', 4) + 1} page caches of "
                  f"{r['cache_size_mib']} MiB at most, full within the first minute. With larger caches the process grows with the database"
                  " until they are full (the default, 64 MiB each), then stays flat: what the RSS verdict catches after that is not the caches.")
        print(f"- The machine's load average ({r.get('machine_cores', '?')} cores, shared) was {r['load_average_start']:.1f} at the "
              f"start and {r['load_average_end']:.1f} at the end: the peak and the latencies are this machine's at that time.")
        print()
        plot = os.path.join(folder(engine), "service", "soak.svg")
        if os.path.exists(plot):
            page = os.path.relpath(plot, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
            print(f"![CustomerService under half its peak for {minutes(r['duration_seconds'])} on {engine_name(engine, s)}: "
                  f"RSS, descriptors, threads and -wal over minutes]({page})")
            print()

    print("### SIGKILL under load: every acknowledged write survives")
    print()
    print("CustomerService's `KillTests`: 6 clients create and read customers while the service is SIGKILLed at random moments")
    print("and started again; afterwards every acknowledged create must read back equal (sealed fields opened), with")
    print("`integrity_check` ok, `strongroom verify` clean and no row without its blind index. Shown from a stamped")
    print("`make stress` whose run wrote `service/kills.json` (`STRONGROOM_STRESS_RESULTS`).")
    print()
    rows, others = stamped_service_results("stress", "kills", "kills")
    if rows:
        run_lines("stress", "make stress")
        print()
        print("| engine | kills | clients | acknowledged creates | committed without an answer | reads | lost | different "
              "| integrity_check | rows without blind index | strongroom verify | duration |")
        print("|" + "---|" * 12)
        for engine, s, r in rows:
            print(f"| {engine_column(engine, s)} | {r['kills']} | {r['clients']} | {r['acknowledged']:,} | {r['unacknowledged_rows']} "
                  f"| {r['reads']:,} | {held(r['lost'])} | {held(r['different'])} | {r['integrity_check']} "
                  f"| {held(r['rows_without_blind_index'])} | exit {r['verify_exit']} | {r['seconds']:.0f} s |")
    else:
        print("No result of a stamped run.")
    left_out(others, "make stress")
    print()


def main():
    global ROOT
    args = sys.argv[1:]
    # --results first, wherever it stands, so that every check reads and stamps that folder.
    if "--results" in args:
        at = args.index("--results")
        if at + 1 >= len(args):
            sys.exit(__doc__)
        ROOT = args[at + 1]
        del args[at:at + 2]
    engine = "sqlcipher3"
    if "--engine" in args:
        at = args.index("--engine")
        if at + 1 >= len(args) or args[at + 1] not in ENGINES:
            sys.exit(__doc__)
        engine = args[at + 1]
        del args[at:at + 2]
    try:
        while args:
            flag = args.pop(0)
            if flag == "--stress":
                check_stress(int(args.pop(0)), int(args.pop(0)), engine)
            elif flag == "--fuzz":
                check_fuzz(int(args.pop(0)), int(args.pop(0)))
            elif flag == "--sanitizers":
                check_sanitizers(engine)
            elif flag == "--soak":
                check_soak(seconds_of(args.pop(0)), engine)
            else:
                sys.exit(__doc__)
    except (IndexError, ValueError):
        sys.exit(__doc__)

    print("# Reliability")
    print()
    print("<!-- Written by `make stress`, `make fuzz`, `make sanitize` and `make soak` (Scripts/reliability.py) from")
    print("     Reliability/results/: rerun them, do not edit. -->")
    print()
    print("What was tried against Strongroom and what held, on each engine: the system's SQLCipher 3 and SQLCipher 4")
    print("(`make stress ENGINE=sqlcipher4`, `make sanitize ENGINE=sqlcipher4`, `make soak ENGINE=sqlcipher4`). Each section names the runs that measured")
    print("it, and each row the engine it ran on.")
    print()
    crashes_section()
    table_section(
        "faults", "Faults: full disk, I/O errors, read-only files, vanished directories, permissions, a deleted -wal",
        "Each fault must end in a typed error (the code the caller can match), with every row intact and the same key\n"
        "still opening the file afterwards.",
        [("fault", lambda r: r["fault"]), ("during", lambda r: r["operation"]),
         ("faults injected", lambda r: r["injected"]), ("error the caller got", lambda r: f"`{r['error']}`"),
         ("data and key afterwards", lambda r: "intact ✓" if r["intact"] else "✗")])
    table_section(
        "tampering", "Tampering: bytes flipped in the file, envelopes flipped, truncated and swapped",
        "Each change must be refused with a typed error that calls it what it is (corruption, not a wrong key,\n"
        "wherever SQLCipher lets the two be told apart); nothing tampered may read back as data.",
        [("what was changed", lambda r: r["target"]), ("trials", lambda r: r["trials"]),
         ("reported as", lambda r: ", ".join(f"`{k}`: {v}" for k, v in sorted(r["reported"].items()))),
         ("read back as data", lambda r: held(r["undetected"]))])
    table_section(
        "leaks", "Leaks: markers and keys searched for where they must not be",
        "Marker values written sealed or encrypted, and the keys, searched for in every file the work touched\n"
        "(watched while it ran), in logs and error text, in a core dump and in command lines and environments.",
        [("searched", lambda r: r["place"]), ("while", lambda r: r["operation"]),
         ("files or snapshots searched", lambda r: r["searched"]), ("found", lambda r: held(r["found"]))])
    table_section(
        "load", "Load: a pool with 1 writer and 4 readers",
        "No lost write, no partial transaction seen by a reader, no busy error reaching the caller, resident memory\n"
        "flat after warm-up.",
        [("run", lambda r: r["name"]), ("seconds", lambda r: r["seconds"]), ("writes", lambda r: r["writes"]),
         ("reads", lambda r: r["reads"]), ("lost writes", lambda r: held(r["lost"])),
         ("partial reads", lambda r: held(r["partial"])), ("busy errors", lambda r: held(r["busy"])),
         ("resident MiB after warm-up → end", lambda r: f"{r['rss_warm_mib']:.1f} → {r['rss_end_mib']:.1f}")])

    table_section(
        "wal", "The WAL under constant reads: 1 writer and readers that always overlap",
        "The writer commits without a pause. In \"wal growth\", 8 readers read for 100 ms at a time, staggered so that one is\n"
        "always active; in the async runs (issue 51), 16 async readers, more than the pool's 4 and than the machine's cores,\n"
        "each read again as soon as their read ends (holding it 0 or 100 ms) while the writer commits batches of 50 inserts.\n"
        "SQLite's automatic checkpoints never reset the log. The pool's checkpoint policy\n"
        "(`CheckpointPolicy.default`), after a commit that leaves the `-wal` past its limit, 16 MiB, holds new reads, gives\n"
        "the running ones up to 1 s to end and truncates the log;\n"
        "the bound the documentation states is twice the limit. Without the policy the `-wal` grew to 103 MiB in 20 s.",
        [("run", lambda r: r.get("name", "wal growth")), ("seconds", lambda r: r["seconds"]), ("writes", lambda r: r["writes"]),
         ("reads", lambda r: r["reads"]),
         ("limit", lambda r: f"{r['wal_size_limit'] / 2**20:.0f} MiB"),
         ("peak -wal (sampled every 100 ms, async runs every 10 ms)", lambda r: f"{r['peak_wal_bytes'] / 2**20:.1f} MiB"),
         ("under twice the limit", lambda r: held(0 if r["peak_wal_bytes"] <= 2 * r["wal_size_limit"] else 1))])

    service_section()

    print("## Sanitizers")
    print()
    run_lines("sanitizers", "make sanitize")
    print()
    print("| engine | sanitizer | tests | suites | findings | suppressions | duration |")
    print("|---|---|---|---|---|---|---|")
    rows, others = rows_of_engines("sanitizers", "sanitizers", lambda r: r["sanitizer"])
    for r in rows:
        print(f"| {r['engine']} | {r['sanitizer']} | {r['tests']} | {r['suites']} | {held(r['findings'])} | {r['suppressions']} | {r['seconds']:.0f} s |")
    left_out(others, "make sanitize")
    print()
    print("## Fuzzing (libFuzzer)")
    print()
    print(run_line("fuzz", "make fuzz"))
    print()
    print("The targets are built against the system's SQLCipher 3 (pkg-config's `sqlcipher`; `make fuzz` takes no ENGINE).")
    print()
    print("| target | what it feeds | executions | crashes | corpus files | regression tests | duration |")
    print("|---|---|---|---|---|---|---|")
    rows, others = rows_of("fuzz", "fuzz")
    for r in rows:
        print(f"| {r['target']} | {r['what']} | {r['executions']:,} | {held(r['crashes'])} | {r['corpus_files']} "
              f"| {r['regression_tests']} | {r['seconds']:.0f} s |")
    left_out(others, "make fuzz")


if __name__ == "__main__":
    main()
