#!/usr/bin/env python3
"""Hours of uptime (issue 38, item 7): CustomerService under a steady load, sampled for leaks.

usage: soak.py --service PATH --strongroom PATH --duration SECONDS --engine sqlcipher3|sqlcipher4 --results DIR
               [--seed N] [--interval SECONDS] [--peak-seconds SECONDS] [--connections N] [--threads N]
               [--fraction F] [--readers N] [--cache-size MIB] [--load-dir DIR] [--migrations DIR] [--wrk PATH] [--keep]

`make soak` builds the release service and the strongroom command for the engine, then runs this (it builds
nothing itself). In a temporary directory it makes a database key and a field keyring (strongroom keygen),
starts the service on a free port, seeds N customers (Load/seed.lua, default 10,000; then checks that ids 1 and N
and customer1@ and customerN@example.com exist, adding customer1@example.com when seed.lua left it out), measures the peak:
Load/mix.lua (80% get by id, 10% lookup by e-mail, 10% create) for --peak-seconds at --connections, then runs
the same mix at --fraction (default half) of that peak for --duration, in ONE wrk process (Load/paced.lua: a
schedule per wrk thread through wrk's delay() hook; the connections stay open the whole run).

While it runs, every --interval (10 s) it samples the service from /proc/PID: VmRSS, the open file descriptors
(/proc/PID/fd), Threads, its CPU time, the database file's size, and the size of DATABASE-wal, which it also polls every 0.2 s for its
largest size between two samples (a -wal truncated within 10 s would otherwise go unseen). Sample 0 is taken
as the paced load starts; the load average is recorded with each sample, as the machine may be shared.

At the end: SIGTERM, and the service must exit 0 within 5 s; the -wal it leaves must be empty (truncated);
`strongroom sql` runs PRAGMA integrity_check (must print ok) and counts the customers (at least the seeded and
every acknowledged create); `strongroom verify --field-keys --migrations` must exit 0 (integrity, schema drift
against the service's migrations, every sealed value opens).

Verdicts, the reference being the first sample at or after 60 s ("the first minute" is warm-up):
  rss      max VmRSS over the samples after the reference < reference × 1.05
  fds      max open descriptors after the reference - the reference's <= 4
  threads  max threads after the reference - the reference's <= 4 (dispatch's and NIO's pools may add one or two)
  wal      the largest -wal seen (0.2 s polling, the whole run) < the documented bound: twice
           CheckpointPolicy.default's walSizeLimit (16 MiB), 32 MiB (Strongroom.docc/ServingRequests.md)
  errors   no non-2xx answer and no socket error, seed, peak and soak
  rate     the soak's achieved rate within 10% of its target (else it did not run at half the peak)
  shutdown exit 0 within 5 s after SIGTERM, the -wal left empty
  database integrity_check ok, strongroom verify exit 0, no acknowledged create missing
Writes DIR/service/soak.json (every sample, the peak, the rates, the verdicts, the run's id and commit from
STRONGROOM_RELIABILITY_RUN and STRONGROOM_RELIABILITY_COMMIT) and DIR/service/soak.svg (four panels: RSS, fds,
threads, -wal over minutes), also when a verdict fails; exits 1 when one does, 2 when it could not run.
"""
import argparse
import http.client
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SERVICE_DIR = os.path.join(ROOT, "Examples", "CustomerService")

WARMUP_SECONDS = 60
RSS_GROWTH_LIMIT = 0.05
FD_TOLERANCE = 4
THREAD_TOLERANCE = 4
RATE_TOLERANCE = 0.10
SHUTDOWN_SECONDS = 5
WAL_POLL_SECONDS = 0.2
# CheckpointPolicy.default (Sources/Strongroom/Maintenance/CheckpointPolicy.swift): the service sets no other.
WAL_SIZE_LIMIT = 16 << 20
# "the documented bound is twice the limit" (Sources/Strongroom/Strongroom.docc/ServingRequests.md).
WAL_BOUND = 2 * WAL_SIZE_LIMIT
MIB = 1 << 20


class Failure(Exception):
    """Something that stops the run before it can judge (exit 2)."""


def log(message):
    print(f"soak: {message}", file=sys.stderr, flush=True)


def duration_seconds(text):
    """Seconds, or with a unit: 1800, 1800s, 30m, 2h."""
    match = re.fullmatch(r"\s*(\d+)\s*([smh]?)\s*", str(text))
    if not match or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"a duration is seconds (1800) or 1800s, 30m, 2h, not {text!r}")
    return int(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


# --- /proc ---------------------------------------------------------------------------------------------------

def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        # The command may hold spaces or parentheses: the fields start after the last ")".
        after = f.read().rsplit(")", 1)[1].split()
    return (int(after[11]) + int(after[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def file_size(path):
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# --- processes -----------------------------------------------------------------------------------------------

def run(command, check=True, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise Failure(f"{' '.join(command)} exited {result.returncode}: {(result.stderr or result.stdout).strip()[-2000:]}")
    return result


def json_lines(text):
    """The JSON objects among wrk's lines of output (the scripts print one each at the end)."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return found


def script_result(text, name):
    results = [j for j in json_lines(text) if j.get("script") == name]
    if not results:
        raise Failure(f"{name}.lua printed no result: {text.strip()[-2000:]}")
    return results[-1]


def socket_errors(result):
    return sum((result.get("socket_errors") or {}).values())


class Service:
    def __init__(self, binary, directory, database, key, keyring, readers, cache_size):
        self.out_path = os.path.join(directory, "service.out")
        self.err_path = os.path.join(directory, "service.err")
        self.out = open(self.out_path, "wb")
        self.err = open(self.err_path, "wb")
        command = [binary, "--host", "127.0.0.1", "--port", "0", "--database", database,
                   "--key-file", key, "--field-keys", keyring, "--readers", str(readers), "--cache-size", str(cache_size)]
        environment = {k: v for k, v in os.environ.items() if k != "CREDENTIALS_DIRECTORY"}
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err, env=environment)
        self.pid = self.process.pid
        self.port = None

    def errors(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def wait_until_listening(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.errors().splitlines():
                if "[CustomerService] listening" in line:
                    match = re.search(r"port=(\d+)", line)
                    if match:
                        self.port = int(match.group(1))
                        return self.port
            if self.process.poll() is not None:
                raise Failure(f"CustomerService exited {self.process.returncode} before listening: {self.errors()[-2000:]}")
            time.sleep(0.05)
        raise Failure(f"CustomerService did not listen within {timeout} s: {self.errors()[-2000:]}")

    def terminate(self, timeout):
        """SIGTERM; the exit status and the seconds it took, or None (then SIGKILL) past timeout."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            status = None
        return status, time.monotonic() - started

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# --- the run -------------------------------------------------------------------------------------------------

def wrk(options, arguments, script, url, extra, environment=None, timeout=None):
    command = [options.wrk, *arguments, "-s", os.path.join(options.load_dir, script), url, "--", *extra]
    log(" ".join(command))
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=timeout)
    if result.returncode != 0:
        raise Failure(f"wrk exited {result.returncode}: {(result.stderr + result.stdout).strip()[-2000:]}")
    return result.stdout


def sample(pid, started, previous_cpu, wal_path, wal_max, responses):
    try:
        record, cpu = read_sample(pid, started, previous_cpu, wal_path, wal_max, responses)
        record["db_bytes"] = file_size(wal_path[:-len("-wal")])
        return record, cpu
    except (FileNotFoundError, ProcessLookupError) as error:
        raise Failure(f"the service (pid {pid}) is gone: {error}")


def read_sample(pid, started, previous_cpu, wal_path, wal_max, responses):
    status = proc_status(pid)
    now = time.monotonic()
    cpu = cpu_seconds(pid)
    record = {
        "t": round(now - started, 2),
        "rss_kib": int(status["VmRSS"].split()[0]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"]),
        "wal_bytes": file_size(wal_path),
        "wal_max_bytes": wal_max,
        "cpu_seconds": round(cpu, 2),
        "load_average": load_average(),
        "responses": responses,
    }
    if previous_cpu is not None:
        record["cpu_percent"] = round(100 * (cpu - previous_cpu[1]) / max(now - previous_cpu[0], 1e-6), 1)
    return record, (now, cpu)


def progress(path):
    """The responses wrk's threads have had so far (paced.lua's lines on standard error)."""
    latest = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                match = re.match(r"paced thread=(\d+) responses=(\d+)", line)
                if match:
                    latest[match.group(1)] = int(match.group(2))
    except FileNotFoundError:
        pass
    return sum(latest.values())


def soak(options, service, database, directory, url, seeded, target):
    wal_path = database + "-wal"
    out_path = os.path.join(directory, "paced.out")
    err_path = os.path.join(directory, "paced.err")
    environment = dict(os.environ, PACED_RATE=f"{target:.1f}", PACED_THREADS=str(options.threads))
    command = [options.wrk, "-t", str(options.threads), "-c", str(options.connections), "-d", f"{options.duration}s",
               "--timeout", "5s", "-s", os.path.join(options.load_dir, "paced.lua"), url, "--", str(seeded), f"soak{os.getpid()}"]
    log(f"PACED_RATE={target:.1f} PACED_THREADS={options.threads} " + " ".join(command))
    samples = []
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.monotonic()
        load = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=environment)
        try:
            previous_cpu = None
            wal_max = file_size(wal_path)
            wal_max_run = wal_max
            k = 0
            while k * options.interval <= options.duration:
                due = started + k * options.interval
                while time.monotonic() < due:
                    size = file_size(wal_path)
                    wal_max, wal_max_run = max(wal_max, size), max(wal_max_run, size)
                    if service.process.poll() is not None:
                        raise Failure(f"CustomerService exited {service.process.returncode} during the soak: {service.errors()[-2000:]}")
                    time.sleep(min(WAL_POLL_SECONDS, max(due - time.monotonic(), 0)))
                size = file_size(wal_path)
                wal_max, wal_max_run = max(wal_max, size), max(wal_max_run, size)
                record, previous_cpu = sample(service.pid, started, previous_cpu, wal_path, wal_max, progress(err_path))
                samples.append(record)
                if k % 6 == 0:
                    log(f"{record['t']:6.0f} s  RSS {record['rss_kib'] / 1024:.1f} MiB  fds {record['fds']}  threads {record['threads']}"
                        f"  -wal {record['wal_bytes'] / MIB:.1f} MiB (max {wal_max / MIB:.1f})  responses {record['responses']}"
                        f"  load {record['load_average']:.1f}")
                wal_max = file_size(wal_path)
                k += 1
            # wrk ends a moment after -d; the -wal is still watched until it does.
            deadline = time.monotonic() + 60
            while load.poll() is None and time.monotonic() < deadline:
                wal_max_run = max(wal_max_run, file_size(wal_path))
                time.sleep(WAL_POLL_SECONDS)
            if load.poll() is None:
                raise Failure("wrk did not end within 60 s of its duration")
        finally:
            if load.poll() is None:
                load.kill()
                load.wait()
    with open(out_path, errors="replace") as f:
        output = f.read()
    if load.returncode != 0:
        with open(err_path, errors="replace") as f:
            raise Failure(f"wrk exited {load.returncode}: {(f.read() + output).strip()[-2000:]}")
    result = script_result(output, "paced")
    pacing = next((j["pacing"] for j in json_lines(output) if "pacing" in j), {})
    return samples, result, pacing, wal_max_run


def http_request(port, method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def check_seed(port, seeded):
    """What the mix asks for must exist: ids 1..N and customer1..N@example.com. seed.lua as of this writing sends
    customer2..customer(N+1) (wrk calls request() once to check it before the first real one, and seed.lua's counter
    counts that call), so customer1@example.com is missing and 1 lookup in N would be a 404: it is added here (id N+1),
    and the JSON says so. Returns the e-mails added."""
    added = []
    for k in (1, seeded):
        email = f"customer{k}@example.com"
        status, _ = http_request(port, "GET", f"/customers?email={email}")
        if status == 404:
            status, body = http_request(port, "POST", "/customers", {"name": f"Customer {k}", "email": email, "country": "Portugal",
                                                             "note": "Added by soak.py: seed.lua did not create it."})
            if status != 201:
                raise Failure(f"adding {email} after the seed answered {status}: {body[:300]!r}")
            added.append(email)
        elif status != 200:
            raise Failure(f"GET /customers?email={email} after the seed answered {status}")
    for path in ("/customers/1", f"/customers/{seeded}"):
        status, _ = http_request(port, "GET", path)
        if status != 200:
            raise Failure(f"GET {path} after seeding {seeded} answered {status}")
    return added


def strongroom_sql(options, database, key, sql):
    result = run([options.strongroom, "sql", "--database", database, "--key-file", key, "--csv", sql])
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[1:] if len(lines) > 1 else lines  # without the CSV header


def verdict(ok, value, limit, text):
    return {"ok": bool(ok), "value": value, "limit": limit, "text": text}


def judge(report, samples):
    verdicts = {}
    reference = next((s for s in samples if s["t"] >= WARMUP_SECONDS - 0.5), None)
    after = [s for s in samples if reference is not None and s["t"] > reference["t"]]
    if reference is None or not after:
        text = f"no sample after {WARMUP_SECONDS} s to judge by: run for 120 s or more"
        for name in ("rss", "fds", "threads"):
            verdicts[name] = verdict(False, None, None, text)
    else:
        rss_max = max(s["rss_kib"] for s in after)
        growth = (rss_max - reference["rss_kib"]) / reference["rss_kib"]
        verdicts["rss"] = verdict(growth < RSS_GROWTH_LIMIT, round(100 * growth, 2), 100 * RSS_GROWTH_LIMIT,
                                  f"VmRSS {reference['rss_kib'] / 1024:.1f} MiB at {reference['t']:.0f} s, at most "
                                  f"{rss_max / 1024:.1f} MiB after: {100 * growth:+.1f}% (limit +{100 * RSS_GROWTH_LIMIT:.0f}%); "
                                  f"the database file meanwhile {reference['db_bytes'] / MIB:.1f} → {samples[-1]['db_bytes'] / MIB:.1f} MiB "
                                  f"(each connection caches up to the service's --cache-size of it)")
        for name, tolerance in (("fds", FD_TOLERANCE), ("threads", THREAD_TOLERANCE)):
            top = max(s[name] for s in after)
            verdicts[name] = verdict(top - reference[name] <= tolerance, top - reference[name], tolerance,
                                     f"{reference[name]} at {reference['t']:.0f} s, at most {top} after "
                                     f"({top - reference[name]:+d}, tolerance +{tolerance})")
    wal_max = report["wal"]["max_bytes"]
    verdicts["wal"] = verdict(wal_max < WAL_BOUND, wal_max, WAL_BOUND,
                              f"largest -wal {wal_max / MIB:.1f} MiB (polled every {WAL_POLL_SECONDS} s), bound "
                              f"{WAL_BOUND / MIB:.0f} MiB (twice the {WAL_SIZE_LIMIT / MIB:.0f} MiB limit)")
    problems = {name: report[name]["non2xx"] + socket_errors(report[name]) for name in ("seed", "peak", "soak")}
    verdicts["errors"] = verdict(sum(problems.values()) == 0, problems, 0,
                                 "non-2xx answers and socket errors: " + ", ".join(f"{k} {v}" for k, v in problems.items()))
    achieved, target = report["soak"]["requests_per_s"], report["target_rate"]
    off = abs(achieved - target) / target
    verdicts["rate"] = verdict(off <= RATE_TOLERANCE, achieved, target,
                               f"{achieved:.0f} requests/s for a target of {target:.0f} ({100 * off:.1f}% off, "
                               f"tolerance {100 * RATE_TOLERANCE:.0f}%)")
    stop = report["shutdown"]
    verdicts["shutdown"] = verdict(stop["exit"] == 0 and stop["seconds"] < SHUTDOWN_SECONDS and stop["wal_bytes_after"] == 0,
                                   stop["exit"], 0,
                                   f"SIGTERM: exit {stop['exit']} in {stop['seconds']:.2f} s (limit {SHUTDOWN_SECONDS} s), "
                                   f"-wal left {stop['wal_bytes_after']} bytes")
    db = report["database"]
    verdicts["database"] = verdict(db["integrity_check"] == "ok" and db["verify_exit"] == 0 and db["customers"] >= db["acknowledged"],
                                   db["integrity_check"], "ok",
                                   f"integrity_check {db['integrity_check']}, strongroom verify exit {db['verify_exit']}, "
                                   f"{db['customers']} customers for {db['acknowledged']} acknowledged creates")
    return verdicts


# --- the plot ------------------------------------------------------------------------------------------------

def svg_escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def nice_step(span, count=4):
    """A round step (1, 2, 2.5 or 5 × 10^k) giving about count ticks over span."""
    raw = span / count if span > 0 else 1
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def number(value):
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


def panel(x0, y0, width, height, title, points, duration_min, lines=(), color="#1f6feb", minimum_top=0.0, second=()):
    """One chart: points [(minutes, value)], lines [(value, label, color)] drawn across it, and a second series in
    grey on the same scale."""
    left, right, top, bottom = 52, 12, 26, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, v in points] + [v for _, v in second] + [v for v, _, _ in lines] + [minimum_top]
    y_top = max(values) * 1.15 if max(values) > 0 else 1
    step = nice_step(y_top)
    y_top = step * (int(y_top / step) + (0 if y_top % step == 0 else 1))
    x_step = nice_step(duration_min, 6)

    def px(minutes):
        return x0 + left + plot_w * (minutes / duration_min if duration_min else 0)

    def py(value):
        return y0 + top + plot_h * (1 - value / y_top)

    out = [f'<g font-family="sans-serif" font-size="11">',
           f'<text x="{x0 + left}" y="{y0 + 16}" font-size="13" font-weight="bold">{svg_escape(title)}</text>',
           f'<rect x="{x0 + left}" y="{y0 + top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>']
    tick = 0.0
    while tick <= y_top + 1e-9:
        out.append(f'<line x1="{x0 + left}" y1="{py(tick):.1f}" x2="{x0 + left + plot_w}" y2="{py(tick):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 + left - 5}" y="{py(tick) + 4:.1f}" text-anchor="end" fill="#555">{number(tick)}</text>')
        tick += step
    tick = 0.0
    while tick <= duration_min + 1e-9:
        out.append(f'<text x="{px(tick):.1f}" y="{y0 + top + plot_h + 14}" text-anchor="middle" fill="#555">{number(tick)}</text>')
        tick += x_step
    out.append(f'<text x="{x0 + left + plot_w}" y="{y0 + height - 3}" text-anchor="end" fill="#555">minutes</text>')
    warm = WARMUP_SECONDS / 60
    if warm < duration_min:
        out.append(f'<line x1="{px(warm):.1f}" y1="{y0 + top}" x2="{px(warm):.1f}" y2="{y0 + top + plot_h}" '
                   f'stroke="#999" stroke-dasharray="2,3"/>')
    for value, label, line_color in lines:
        out.append(f'<line x1="{x0 + left}" y1="{py(value):.1f}" x2="{x0 + left + plot_w}" y2="{py(value):.1f}" '
                   f'stroke="{line_color}" stroke-dasharray="6,4"/>')
        out.append(f'<text x="{x0 + left + 4}" y="{py(value) - 4:.1f}" fill="{line_color}">{svg_escape(label)}</text>')
    if second:
        path = " ".join(f"{px(m):.1f},{py(v):.1f}" for m, v in second)
        out.append(f'<polyline points="{path}" fill="none" stroke="#8c959f" stroke-width="1.2"/>')
    if points:
        path = " ".join(f"{px(m):.1f},{py(v):.1f}" for m, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.8"/>')
        for m, v in points:
            out.append(f'<circle cx="{px(m):.1f}" cy="{py(v):.1f}" r="1.8" fill="{color}"/>')
    out.append("</g>")
    return out


def plot(report):
    samples = report["samples"]
    duration_min = report["duration_seconds"] / 60
    reference = next((s for s in samples if s["t"] >= WARMUP_SECONDS - 0.5), None)
    width, height = 920, 560
    w, h = width // 2, (height - 50) // 2
    title = f"CustomerService soak on {report['engine_version'] or report['engine']}"
    half = "half" if report["fraction"] == 0.5 else f"{report['fraction']:g} ×"
    subtitle = (f"{report['duration_seconds']} s at {report['soak']['requests_per_s']:.0f} requests/s, {half} the peak of "
                f"{report['peak']['requests_per_s']:.0f} ({report['connections']} connections, wrk's mix); sampled every "
                f"{report['interval_seconds']} s from /proc; the dotted line ends the first minute (warm-up).")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 16}" viewBox="0 0 {width} {height + 16}">',
           f'<rect width="{width}" height="{height + 16}" fill="white"/>',
           f'<text x="12" y="22" font-family="sans-serif" font-size="14" font-weight="bold">{svg_escape(title)}</text>',
           f'<text x="12" y="40" font-family="sans-serif" font-size="11" fill="#555">{svg_escape(subtitle)}</text>',
           f'<text x="12" y="56" font-family="sans-serif" font-size="11" fill="#555">{svg_escape(report["verdict"])}</text>']
    minutes = lambda s: s["t"] / 60
    rss_lines = []
    if reference is not None:
        rss_lines.append((reference["rss_kib"] / 1024 * (1 + RSS_GROWTH_LIMIT), f"+{100 * RSS_GROWTH_LIMIT:.0f}% of the 1-minute value", "#d1242f"))
    out += panel(0, 66, w, h, "Resident memory (VmRSS), MiB; grey: the database file", [(minutes(s), s["rss_kib"] / 1024) for s in samples],
                 duration_min, rss_lines, second=[(minutes(s), s.get("db_bytes", 0) / MIB) for s in samples])
    out += panel(w, 66, w, h, "Open file descriptors", [(minutes(s), s["fds"]) for s in samples], duration_min, color="#8250df")
    out += panel(0, 66 + h, w, h, "Threads", [(minutes(s), s["threads"]) for s in samples], duration_min, color="#1a7f37")
    out += panel(w, 66 + h, w, h, "-wal, MiB (largest in each 10 s)", [(minutes(s), s["wal_max_bytes"] / MIB) for s in samples],
                 duration_min, [(WAL_BOUND / MIB, f"documented bound, {WAL_BOUND / MIB:.0f} MiB", "#d1242f"),
                                (WAL_SIZE_LIMIT / MIB, f"walSizeLimit, {WAL_SIZE_LIMIT / MIB:.0f} MiB", "#9a6700")],
                 color="#bc4c00")
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --- main ----------------------------------------------------------------------------------------------------

def engine_version(options):
    version = os.environ.get("STRONGROOM_ENGINE_VERSION", "")
    if version:
        return version
    try:
        shell = shutil.which("sqlcipher")
        if shell:
            cipher = run([shell, ":memory:", "PRAGMA cipher_version;"]).stdout.strip()
            sqlite = run([shell, ":memory:", "SELECT sqlite_version();"]).stdout.strip()
            return f"SQLCipher {cipher} on SQLite {sqlite}"
    except Failure:
        pass
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", required=True, help="the built CustomerService")
    parser.add_argument("--strongroom", required=True, help="the built strongroom command (same engine)")
    parser.add_argument("--duration", required=True, type=duration_seconds, help="the soak's length: seconds, or 30m, 2h")
    parser.add_argument("--engine", required=True, choices=["sqlcipher3", "sqlcipher4"])
    parser.add_argument("--results", required=True, help="the engine's folder of results: writes RESULTS/service/soak.json and soak.svg")
    parser.add_argument("--seed", type=int, default=10_000, help="customers seeded first (default 10000)")
    parser.add_argument("--interval", type=int, default=10, help="seconds between samples (default 10)")
    parser.add_argument("--peak-seconds", type=int, default=15, help="how long the peak is measured (default 15)")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections, peak and soak (default 64)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument("--fraction", type=float, default=0.5, help="the soak's rate, a fraction of the peak (default 0.5)")
    parser.add_argument("--readers", type=int, default=4, help="the service's --readers (default 4, the service's own default)")
    parser.add_argument("--cache-size", type=int, default=2,
                        help="the service's --cache-size, MiB per connection (default 2: the caches, readers + 1 of them, are full within the"
                             " first minute, so that what grows after it is not the caches filling as the creates grow the file)")
    parser.add_argument("--load-dir", default=os.path.join(SERVICE_DIR, "Load"), help="the wrk scripts (default Examples/CustomerService/Load)")
    parser.add_argument("--migrations", default=os.path.join(SERVICE_DIR, "Sources", "CustomerService", "Migrations"))
    parser.add_argument("--wrk", default=shutil.which("wrk") or "/usr/bin/wrk")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database, keys, logs)")
    options = parser.parse_args()
    for script in ("seed.lua", "mix.lua", "paced.lua", "common.lua"):
        if not os.path.exists(os.path.join(options.load_dir, script)):
            sys.exit(f"soak: {script} is not in {options.load_dir}")
    for path in (options.service, options.strongroom, options.wrk):
        if not os.access(path, os.X_OK):
            sys.exit(f"soak: {path} is not an executable (make soak builds the service and the command)")

    out_dir = os.path.join(options.results, "service")
    os.makedirs(out_dir, exist_ok=True)
    for name in ("soak.json", "soak.svg"):
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
    directory = tempfile.mkdtemp(prefix="strongroom-soak-")
    database, key, keyring = (os.path.join(directory, n) for n in ("customers.db", "db.key", "fields.keyring"))
    service = None
    report = {
        "engine": options.engine, "engine_version": engine_version(options),
        "run": os.environ.get("STRONGROOM_RELIABILITY_RUN", ""), "commit": os.environ.get("STRONGROOM_RELIABILITY_COMMIT", ""),
        "duration_seconds": options.duration, "interval_seconds": options.interval, "fraction": options.fraction,
        "seeded": options.seed, "connections": options.connections, "wrk_threads": options.threads, "readers": options.readers, "cache_size_mib": options.cache_size,
        "wrk_processes": "one for the whole soak (its connections open throughout)",
        "warmup_seconds": WARMUP_SECONDS, "machine_cores": os.cpu_count(), "load_average_start": load_average(),
    }
    try:
        run([options.strongroom, "keygen", "--out", key])
        run([options.strongroom, "keygen", "--field", "--out", keyring])
        service = Service(options.service, directory, database, key, keyring, options.readers, options.cache_size)
        port = service.wait_until_listening()
        url = f"http://127.0.0.1:{port}"
        log(f"CustomerService (pid {service.pid}) listens on {url}; database in {directory}")

        started = time.monotonic()
        report["seed"] = script_result(wrk(options, ["-t", "1", "-c", "1", "-d", "900s"], "seed.lua", url, [str(options.seed)]), "seed")
        report["seed"].setdefault("socket_errors", {})
        report["seed"]["seconds"] = round(time.monotonic() - started, 1)
        if report["seed"]["status"].get("201") != options.seed:
            raise Failure(f"seeding answered {report['seed']['status']}, not {options.seed} × 201")
        report["seed"]["added_after"] = check_seed(port, options.seed)
        log(f"seeded {options.seed} customers in {report['seed']['seconds']} s"
            + (f"; added {', '.join(report['seed']['added_after'])}, which seed.lua did not create" if report["seed"]["added_after"] else ""))

        report["peak"] = script_result(wrk(options, ["-t", str(options.threads), "-c", str(options.connections), "-d",
                                                     f"{options.peak_seconds}s", "--timeout", "5s"],
                                           "mix.lua", url, [str(options.seed), f"peak{os.getpid()}"]), "mix")
        target = report["peak"]["requests_per_s"] * options.fraction
        report["target_rate"] = round(target, 1)
        log(f"peak {report['peak']['requests_per_s']:.0f} requests/s (p99 {report['peak']['latency_us']['p99'] / 1000:.1f} ms); "
            f"the soak runs at {target:.0f}")

        samples, report["soak"], report["pacing"], wal_max = soak(options, service, database, directory, url, options.seed, target)
        report["samples"] = samples
        report["wal"] = {"max_bytes": wal_max, "size_limit_bytes": WAL_SIZE_LIMIT, "bound_bytes": WAL_BOUND,
                         "poll_seconds": WAL_POLL_SECONDS}
        log(f"soak: {report['soak']['requests']} requests, {report['soak']['requests_per_s']:.0f}/s, "
            f"p99 {report['soak']['latency_us']['p99'] / 1000:.1f} ms")

        status, took = service.terminate(SHUTDOWN_SECONDS)
        report["shutdown"] = {"exit": status, "seconds": round(took, 3), "wal_bytes_after": file_size(database + "-wal")}
        log(f"SIGTERM: exit {status} in {took:.2f} s")

        integrity = strongroom_sql(options, database, key, "PRAGMA integrity_check")
        customers = int(strongroom_sql(options, database, key, "SELECT count(*) FROM customer")[0])
        verify = run([options.strongroom, "verify", "--database", database, "--key-file", key, "--field-keys", keyring,
                      "--migrations", options.migrations], check=False)
        acknowledged = sum(int(report[name]["status"].get("201", 0)) for name in ("seed", "peak", "soak")) + len(report["seed"]["added_after"])
        report["database"] = {"integrity_check": " ".join(integrity), "customers": customers, "acknowledged": acknowledged,
                              "verify_exit": verify.returncode, "verify_output": (verify.stdout + verify.stderr).strip()[-1000:],
                              "bytes": file_size(database)}
        report["load_average_end"] = load_average()
        report["verdicts"] = judge(report, samples)
        failed = [name for name, v in report["verdicts"].items() if not v["ok"]]
        report["passed"] = not failed
        report["verdict"] = "Every verdict held." if not failed else f"Failed: {', '.join(failed)}."
    except Failure as failure:
        log(f"cannot run: {failure}")
        if service is not None:
            service.kill()
        if options.keep:
            log(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)
        sys.exit(2)
    except BaseException:
        if service is not None:
            service.kill()
        shutil.rmtree(directory, ignore_errors=True)
        raise

    with open(os.path.join(out_dir, "soak.json"), "w") as f:
        json.dump(report, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out_dir, "soak.svg"), "w") as f:
        f.write(plot(report))
    for name, v in report["verdicts"].items():
        log(f"{'ok  ' if v['ok'] else 'FAIL'} {name}: {v['text']}")
    log(f"wrote {os.path.join(out_dir, 'soak.json')} and soak.svg")
    if options.keep:
        log(f"kept {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    sys.exit(0 if report["passed"] else 1)


if __name__ == "__main__":
    main()
