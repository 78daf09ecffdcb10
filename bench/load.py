#!/usr/bin/env python3
"""Load run: forcegate serve against a bare baseline, same stack, same load.

    python3 bench/load.py            # full run, ~25 minutes plus builds
    python3 bench/load.py --quick    # 5 s phases, for trying the script
    python3 bench/load.py --check    # builds and loads nothing: tools, binaries, last report
    python3 bench/load.py --pgo      # both servers as bench/pgo.py built them

What it does, in order (see docs/performance.md):
  1. installs what it needs if missing: oha (cargo install), wrk (apt-get),
     matplotlib (pip);
  2. builds release: forcegate, and forcegate-bench's baseline,
     bench_fixtures and decision_scaling (bench/src/bin);
  3. writes deterministic synthetic snapshots (1k, 10k, 100k pods) and, for
     each, AdmissionReview bodies aimed at objects in it (the load mix:
     force delete of a leader, of a pod with an attached volume, a finalizer
     strip, a kubelet final delete);
  4. starts `forcegate serve` (10k snapshot, shipped policies, journal in a
     temp dir) and the baseline twice (the second copy is an A/A control:
     its ratio to the first is what the host alone does to a ratio) on
     127.0.0.1, waits for /readyz, checks one request of each kind gets the
     expected answer;
  5. records forcegate's answer to each body and starts the answer floor
     (the baseline replaying those answers and logging the same decision
     line) and the facts floor (the same, after classify and facts from the
     10k snapshot);
  6. drives them over HTTP/1.1 keep-alive TLS: closed loop at peak, with oha
     and with wrk (bench/wrk.lua draws the same bodies), `--rounds` times,
     every other round in reverse order; each kind of the mix alone at peak
     with both; then, with oha, open loop at 10/25/50/75% of forcegate's peak
     (50% is the p99 budget's point, run `--rounds` times alternating and
     judged on the median p99), recording each server's CPU time per request;
  7. calibrates: the baseline again with `--work-us W` (W µs of CPU burnt
     per request, W = 5 … 80), its peak against a bare baseline round just
     before it and its p99 at forcegate's half-peak rate;
  8. reads RSS (VmRSS/VmHWM from /proc) of serve at ready and idle after a
     short load, for each snapshot size;
  9. runs decision_scaling (decision time vs cluster size, sizes timed in
     interleaved rounds so machine noise hits all alike);
  10. appends the run to bench/results.json, draws docs/img/*.png and
      rewrites the "today's numbers" block of docs/performance.md (bench/report.py).

Traffic goes to 127.0.0.1 only; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import plots  # bench/plots.py: docs/img/*.png
import report  # bench/report.py: verdicts, the doc block, results.json

ROOT = Path(__file__).resolve().parent.parent
# Honour CARGO_TARGET_DIR like cargo does (a separate target dir avoids
# waiting on the build lock of a shared working tree).
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
if not TARGET.is_absolute():
    TARGET = ROOT / TARGET
RELEASE = TARGET / "release"
# Where `bench/pgo.py` puts its profile-guided builds and their profile.
PGO_TARGET = TARGET / "pgo"
PGO_PROFILE = PGO_TARGET / "forcegate.profdata"
OHA_VERSION = "1.16.0"
SIZES = [1_000, 10_000, 100_000]
MAIN_SIZE = 10_000
CONNECTIONS = 32
READY_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run(cmd, check=True, **kwargs)


# ---------------------------------------------------------------- tools


def ensure_oha() -> str:
    found = shutil.which("oha")
    if found:
        return found
    cargo_bin = Path.home() / ".cargo" / "bin" / "oha"
    if cargo_bin.exists():
        return str(cargo_bin)
    log(f"oha not found: cargo install oha --locked --version {OHA_VERSION}")
    run(["cargo", "install", "oha", "--locked", "--version", OHA_VERSION])
    return str(cargo_bin)


def ensure_wrk() -> str:
    """wrk, the second load generator (Debian's package)."""
    found = shutil.which("wrk")
    if found:
        return found
    if shutil.which("apt-get") and os.geteuid() == 0:
        log("wrk not found: apt-get install wrk")
        run(["apt-get", "install", "-y", "--no-install-recommends", "wrk"])
        found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is needed (Debian/Ubuntu: apt-get install wrk)")
    return found


def tool_version(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else ""


def ensure_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        log("matplotlib not found: pip install matplotlib")
        run([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"])


def use_profile(profile: str) -> None:
    """Build and run the binaries of cargo profile `profile` (default: release)."""
    global RELEASE
    RELEASE = TARGET / profile


# forcegate-bench's binaries (bench/src/bin) the runs start.
BENCH_BINS = ("baseline", "bench_fixtures", "decision_scaling")


def build_command(profile: str, bench_bins=BENCH_BINS) -> list[str]:
    """`serve` from the product's crate, the rest from forcegate-bench; one
    workspace, so both land in the same profile directory."""
    command = ["cargo", "build", "--profile", profile, "-p", "forcegate", "-p", "forcegate-bench"]
    for name in ("forcegate", *bench_bins):
        command += ["--bin", name]
    return command


def build() -> None:
    run(build_command(RELEASE.name), cwd=ROOT)


def rustflags_with(flag: str) -> str:
    """RUSTFLAGS as set, plus `flag` (cargo rebuilds all when they change)."""
    return " ".join(filter(None, [os.environ.get("RUSTFLAGS", ""), flag]))


def use_pgo_build() -> None:
    """Build and run the profile-guided binaries of `bench/pgo.py`: same
    flags and target dir, so the build finds them up to date."""
    global RELEASE
    if not PGO_PROFILE.exists():
        raise SystemExit(f"{PGO_PROFILE} not found: run python3 bench/pgo.py first")
    os.environ["RUSTFLAGS"] = rustflags_with(f"-Cprofile-use={PGO_PROFILE}")
    os.environ["CARGO_TARGET_DIR"] = str(PGO_TARGET)
    RELEASE = PGO_TARGET / "release"


def fixtures_for(pods: int, work: Path) -> dict:
    """Snapshot and bodies for `pods` under `work` (bench_fixtures' summary)."""
    out = work / f"{pods}"
    done = run([str(RELEASE / "bench_fixtures"), str(pods), str(out)], capture_output=True, text=True)
    return json.loads(done.stdout) | {"dir": out}


# ---------------------------------------------------------------- machine


def machine() -> dict:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem_kib = int(line.split()[1])
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": os.uname().release,
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory(pid: int) -> dict:
    """VmRSS and VmHWM of a process, in MiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


# ---------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process on 127.0.0.1 with its log file."""

    def __init__(self, name: str, cmd: list[str], port: int, log_path: Path):
        self.name = name
        self.port = port
        self.url = f"https://127.0.0.1:{port}"
        self.log_path = log_path
        self.log_file = open(log_path, "wb")
        log(f"starting {name}: {' '.join(cmd)}")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.ready_after_s: float | None = None

    def wait_ready(self, ca: Path) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited with {self.proc.returncode}; see {self.log_path}")
            if ca.exists():
                try:
                    ctx = ssl.create_default_context(cafile=str(ca))
                    with urllib.request.urlopen(self.url + "/readyz", context=ctx, timeout=2) as r:
                        if r.status == 200:
                            self.ready_after_s = round(time.monotonic() - self.started, 2)
                            log(f"{self.name} ready after {self.ready_after_s}s")
                            return
                except (urllib.error.URLError, ConnectionError, OSError, ssl.SSLError):
                    pass
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"{self.name} not ready within {READY_TIMEOUT_S}s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


def start_forcegate(
    work: Path, snapshot: Path, certs: Path, tag: str, wrap: tuple = (), bin_dir: Path | None = None
) -> Server:
    """`forcegate serve` from `bin_dir` (a cargo profile's output
    directory; default: the one `use_profile`/`use_pgo_build` chose), run
    under `wrap` (e.g. valgrind) when given."""
    bin_dir = bin_dir or RELEASE
    port = free_port()
    journal = work / f"journal-{tag}" / "forcegate.journal"
    journal.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        *wrap, str(bin_dir / "forcegate"), "serve",
        "--listen", f"127.0.0.1:{port}", "--metrics-listen", "",
        "--tls-dir", str(certs), "--policies", str(ROOT / "policies"),
        "--cluster", str(snapshot), "--journal", str(journal),
        "--log-format", "json",
    ]
    return Server(f"forcegate-{tag}", cmd, port, work / f"forcegate-{tag}.log")


def start_baseline(
    work: Path,
    certs: Path,
    work_us: int = 0,
    answers: Path | None = None,
    facts_from: Path | None = None,
    wrap: tuple = (),
    bin_dir: Path | None = None,
    name: str | None = None,
) -> Server:
    """The bare baseline; with `work_us`, one that also burns that much CPU
    per request (the calibration servers); with `answers`, the answer floor:
    it replays forcegate's recorded answers and logs its decision line; with
    `facts_from` as well, the facts floor: it also classifies each request
    and gathers its facts from that snapshot first. `name` names a second
    instance apart (the A/A control)."""
    bin_dir = bin_dir or RELEASE
    port = free_port()
    if name is None:
        if answers:
            name = "facts-floor" if facts_from else "answer-floor"
        else:
            name = f"baseline+{work_us}us" if work_us else "baseline"
    cmd = [
        *wrap, str(bin_dir / "baseline"),
        "--listen", f"127.0.0.1:{port}", "--metrics-listen", "",
        "--tls-dir", str(certs), "--log-format", "json", "--work-us", str(work_us),
    ]
    if answers:
        cmd += ["--answers", str(answers)]
    if facts_from:
        cmd += ["--facts-from", str(facts_from)]
    return Server(name, cmd, port, work / f"{name}.log")


def post(server: Server, ca: Path, body: bytes) -> dict:
    ctx = ssl.create_default_context(cafile=str(ca))
    req = urllib.request.Request(
        server.url + "/validate", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return json.load(r)


def check_decisions(forcegate: Server, baseline: Server, ca: Path, samples: Path, summary: dict) -> list:
    """One request of each kind: forcegate decides as expected, baseline allows."""
    rows = []
    for scenario in summary["scenarios"]:
        body = (samples / f"{scenario['name']}.json").read_bytes()
        got = post(forcegate, ca, body)["response"]
        base = post(baseline, ca, body)["response"]
        if got["allowed"] != scenario["expectAllowed"]:
            raise SystemExit(f"{scenario['name']}: forcegate answered {got}")
        if not base["allowed"]:
            raise SystemExit(f"{scenario['name']}: baseline answered {base}")
        message = got.get("status", {}).get("message") or "; ".join(got.get("warnings", []))
        rows.append({"scenario": scenario["name"], "allowed": got["allowed"], "message": message[:160]})
        log(f"  {scenario['name']}: allowed={got['allowed']} {message[:100]!r}")
    return rows


def record_answers(forcegate: Server, ca: Path, bodies: Path, out: Path) -> Path:
    """forcegate's answer to each body of the mix, one review per line: what
    the answer floor replays."""
    with out.open("w") as answers:
        for body in bodies.read_text().splitlines():
            if body.strip():
                answers.write(json.dumps(post(forcegate, ca, body.encode())) + "\n")
    return out


def check_floor(floor: Server, ca: Path, bodies: Path, answers: Path) -> None:
    """A floor answers every body exactly as forcegate did."""
    recorded = [json.loads(line) for line in answers.read_text().splitlines()]
    sent = [body for body in bodies.read_text().splitlines() if body.strip()]
    for body, expected in zip(sent, recorded, strict=True):
        got = post(floor, ca, body.encode())
        if got != expected:
            raise SystemExit(f"{floor.name} answered {got}, forcegate {expected}")
    log(f"  {floor.name} gives forcegate's {len(sent)} answers")


# ---------------------------------------------------------------- load


def oha(oha_bin: str, server: Server, ca: Path, bodies: Path, seconds: float, rate: float | None = None) -> dict:
    cmd = [
        oha_bin, "--no-tui", "--output-format", "json",
        "-z", f"{seconds}s", "-w", "-c", str(CONNECTIONS),
        "--http-version", "1.1", "--cacert", str(ca),
        "-m", "POST", "-T", "application/json", "-Z", str(bodies),
    ]
    if rate is not None:
        cmd += ["-q", f"{rate:.0f}", "--latency-correction"]
    cmd.append(server.url + "/validate")
    load_before = load_average()
    cpu_before = cpu_seconds(server.proc.pid)
    done = subprocess.run(cmd, check=True, capture_output=True, timeout=seconds + 60)
    cpu_used = cpu_seconds(server.proc.pid) - cpu_before
    parsed = json.loads(done.stdout)
    summary = parsed["summary"]
    pct = parsed["latencyPercentiles"]
    codes = parsed.get("statusCodeDistribution", {})
    errors = parsed.get("errorDistribution", {})
    ok = codes.get("200", 0)
    total = sum(codes.values()) + sum(errors.values())
    result = {
        "server": server.name,
        "generator": "oha",
        "offered_rps": rate,
        "rps": round(summary["requestsPerSec"], 1),
        "p50_ms": ms(pct.get("p50")),
        "p99_ms": ms(pct.get("p99")),
        "p99_9_ms": ms(pct.get("p99.9")),
        "ok": ok,
        "non_ok": total - ok,
        "errors": errors,
        "load_avg_1m": load_before[0],
    }
    served = summary["requestsPerSec"] * seconds
    result["cpu_us_per_request"] = round(cpu_used / served * 1e6, 1) if served else None
    mode = f"open loop {rate:.0f}/s" if rate else "closed loop (peak)"
    log(
        f"  {server.name:<16} {mode:<22} {result['rps']:>8.0f} req/s  p50 {result['p50_ms']} ms"
        f"  p99 {result['p99_ms']} ms  p99.9 {result['p99_9_ms']} ms  cpu {result['cpu_us_per_request']} µs/req"
        f"  non-200 {result['non_ok']}"
        f"  (load avg {load_before[0]})"
    )
    if result["non_ok"]:
        log(f"  WARNING: {result['non_ok']} requests failed: {errors} {codes}")
    return result


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


WRK_SCRIPT = ROOT / "bench" / "wrk.lua"


def wrk(wrk_bin: str, server: Server, bodies: Path, seconds: float) -> dict:
    """A closed-loop phase driven by wrk (no fixed rates: wrk has none),
    bodies drawn from the same file as oha's, over as many keep-alive
    HTTP/1.1 TLS connections; the result shaped as `oha`'s."""
    cmd = [
        wrk_bin, "-t", "2", "-c", str(CONNECTIONS), "-d", f"{seconds:.0f}s", "--latency",
        "-s", str(WRK_SCRIPT), server.url, "--", str(bodies),
    ]
    load_before = load_average()
    cpu_before = cpu_seconds(server.proc.pid)
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=seconds + 60)
    cpu_used = cpu_seconds(server.proc.pid) - cpu_before
    parsed = json.loads(done.stdout.strip().splitlines()[-1])
    errors = {k: v for k, v in parsed["errors"].items() if v}
    requests = parsed["requests"]
    rps = requests / (parsed["duration_us"] / 1e6) if parsed["duration_us"] else 0.0
    result = {
        "server": server.name,
        "generator": "wrk",
        "offered_rps": None,
        "rps": round(rps, 1),
        "p50_ms": round(parsed["p50_us"] / 1000, 3),
        "p99_ms": round(parsed["p99_us"] / 1000, 3),
        "p99_9_ms": round(parsed["p99_9_us"] / 1000, 3),
        # wrk counts answers other than 2xx/3xx as status errors.
        "ok": requests - parsed["errors"]["status"],
        "non_ok": sum(errors.values()),
        "errors": errors,
        "load_avg_1m": load_before[0],
        "cpu_us_per_request": round(cpu_used / requests * 1e6, 1) if requests else None,
    }
    log(
        f"  {server.name:<16} {'wrk closed loop':<22} {result['rps']:>8.0f} req/s  p50 {result['p50_ms']} ms"
        f"  p99 {result['p99_ms']} ms  cpu {result['cpu_us_per_request']} µs/req  errors {errors}"
        f"  (load avg {load_before[0]})"
    )
    if result["non_ok"]:
        log(f"  WARNING: {result['non_ok']} requests failed: {errors}")
    return result


def drive(generator: str, tools: dict, server: Server, ca: Path, bodies: Path, seconds: float) -> dict:
    """One closed-loop phase with `generator` ("oha" or "wrk")."""
    if generator == "wrk":
        return wrk(tools["wrk"], server, bodies, seconds)
    return oha(tools["oha"], server, ca, bodies, seconds)


def in_turn(servers: tuple, round_index: int) -> tuple:
    """The order of one alternating round: reversed every other round, so a
    host that speeds up or slows down during the run (seen: the baseline's
    peak rising 24k → 35k over four minutes) does not always favour the
    server that goes last."""
    return servers if round_index % 2 == 0 else servers[::-1]


def half_peak_rounds(
    oha_bin: str, servers: tuple, control: Server, ca: Path, bodies: Path, seconds: float, results: dict, rounds: int
) -> dict:
    """The p99 target's point measured like the peak: alternating rounds at
    half of forcegate's peak (the sweep's own 50% phase is forcegate's and
    the baseline's first), the median p99 of each server judged; `control`,
    a second bare baseline, runs in every round and shows how far the host
    alone moves one binary's p99 (A/A)."""
    swept = [r for r in results["open_loop"] if r["fraction_of_forcegate_peak"] == 0.5]
    rate = swept[0]["offered_rps"]
    log(f"half of forcegate's peak ({rate:.0f}/s), {rounds} alternating rounds")
    by_server = {server.name: [r for r in swept if r["server"] == server.name] for server in servers}
    by_server[control.name] = []
    for round_index in range(rounds):
        for server in in_turn((*servers, control), round_index):
            if round_index or server is control:
                by_server[server.name].append(oha(oha_bin, server, ca, bodies, seconds, rate))
    forcegate, baseline, again = ([r["p99_ms"] for r in by_server[server.name]] for server in (*servers, control))
    return {
        "rate": rate,
        "forcegate_p99_ms": forcegate,
        "baseline_p99_ms": baseline,
        "control_p99_ms": again,
        "forcegate_median_p99_ms": statistics.median(forcegate),
        "baseline_median_p99_ms": statistics.median(baseline),
        "control_median_p99_ms": statistics.median(again),
    }


def kinds_alone(tools: dict, servers: tuple, ca: Path, alone: dict, seconds: float) -> list[dict]:
    """Each kind of the mix alone, closed loop, forcegate then baseline, with
    each generator: which request costs what. The kubelet's final delete is
    never gated (and logged at debug only), so its ratio is forcegate's
    floor (classify, metrics) with no decision at all."""
    rows = []
    for generator, kind in ((g, k) for g in report.GENERATORS for k in alone):
        bodies = Path(alone[kind])
        forcegate, baseline = (drive(generator, tools, server, ca, bodies, seconds) for server in servers)
        rows.append(
            {
                "kind": kind,
                "generator": generator,
                "forcegate_rps": forcegate["rps"],
                "baseline_rps": baseline["rps"],
                "ratio": round(forcegate["rps"] / baseline["rps"], 3) if baseline["rps"] else None,
                "forcegate_cpu_us_per_request": forcegate["cpu_us_per_request"],
                "baseline_cpu_us_per_request": baseline["cpu_us_per_request"],
            }
        )
    return rows


# ---------------------------------------------------------------- calibration

# CPU microseconds per request the calibration baselines add.
CALIBRATION_US = [5, 10, 20, 40, 80]


def calibrate(oha_bin: str, work: Path, baseline: Server, certs: Path, ca: Path, bodies: Path, seconds: float, results: dict) -> dict:
    """What a fixed amount of extra CPU per request costs on this machine.

    The baseline again, burning `w` µs per request after decoding: its peak
    as a share of a bare baseline round run just before it (so a shift in
    the host's load between them does not read as the work's cost), and
    its p99 at the rate that is half of forcegate's peak. Read against
    forcegate's own numbers this says how much per-request work the targets
    leave room for here, and how much forcegate's decision, log line and
    metrics weigh in those terms."""
    half_rate = results["half_peak"]["rate"]
    points = []
    for work_us in CALIBRATION_US:
        server = start_baseline(work, certs, work_us)
        try:
            server.wait_ready(ca)
            oha(oha_bin, server, ca, bodies, min(3.0, seconds))
            bare = oha(oha_bin, baseline, ca, bodies, seconds)
            peak = oha(oha_bin, server, ca, bodies, seconds)
            half = oha(oha_bin, server, ca, bodies, seconds, half_rate)
        finally:
            server.stop()
        points.append(
            {
                "work_us": work_us,
                "rps": peak["rps"],
                "bare_rps": bare["rps"],
                "ratio": round(peak["rps"] / bare["rps"], 3),
                "cpu_us_per_request": peak["cpu_us_per_request"],
                "p99_ms_at_half": half["p99_ms"],
            }
        )
    curve = [(0.0, 1.0)] + [(p["work_us"], p["ratio"]) for p in points]
    floor = results["peak"]["floor_ratio"]
    facts_floor = results["peak"].get("facts_floor_ratio")
    return {
        "half_rate": half_rate,
        "points": points,
        "budget_us_at_70": crossing(curve, report.RATIO_BUDGET),
        "forcegate_equivalent_us": crossing(curve, results["peak"]["ratio"]),
        # A floor at or above the bare baseline (noise) costs nothing.
        "floor_equivalent_us": 0.0 if floor >= 1 else crossing(curve, floor),
        "facts_floor_equivalent_us": None
        if facts_floor is None
        else 0.0 if facts_floor >= 1 else crossing(curve, facts_floor),
    }


def crossing(curve: list[tuple[float, float]], ratio: float) -> float | None:
    """Work (µs) at which the falling throughput curve reaches `ratio`,
    interpolated linearly; None when the curve never gets that low."""
    for (w0, r0), (w1, r1) in zip(curve, curve[1:]):
        if r0 >= ratio >= r1 and r0 != r1:
            return round(w0 + (r0 - ratio) * (w1 - w0) / (r0 - r1), 1)
    return None


# ---------------------------------------------------------------- scaling


def settle(limit_s: float = 90.0, quiet: float = 0.5) -> None:
    """Wait (bounded) for the machine to calm down after the servers of the
    memory phase (a 100k-pod process takes seconds to give its memory back),
    so microsecond timings do not inherit their noise."""
    deadline = time.monotonic() + limit_s
    time.sleep(10)
    while os.getloadavg()[0] > quiet and time.monotonic() < deadline:
        time.sleep(5)
    log(f"settled: load average {load_average()}")


def decision_scaling(runs: int = 5) -> dict:
    """Median ns per decision by scenario and pod count: interleaved rounds
    within a run, then the median of `runs` runs (a whole run can still land
    on a disturbed minute of a shared machine)."""
    cmd = [str(RELEASE / "decision_scaling"), "15", ",".join(str(p) for p in SIZES)]
    reports = []
    for _ in range(runs):
        done = run(cmd, capture_output=True, text=True, timeout=900)
        reports.append(json.loads(done.stdout)["decide_ns"])
    merged: dict[str, dict[str, float]] = {}
    for scenario, by_size in reports[0].items():
        for pods in by_size:
            values = [r[scenario][pods] for r in reports if pods in r.get(scenario, {})]
            merged.setdefault(scenario, {})[pods] = statistics.median(values)
    return merged


# ---------------------------------------------------------------- main


def saved_run(path: Path) -> dict:
    """A run's results: a file of one run, or the last full entry of a
    results.json history."""
    saved = json.loads(path.read_text())
    if isinstance(saved, dict):
        return saved
    full = [entry["results"] for entry in saved if entry.get("results")]
    if not full:
        raise SystemExit(f"{path}: no run with full results")
    return full[-1]


def report_only(path: Path, update: bool) -> None:
    """The report of a saved run, as the run itself would have written it."""
    ensure_matplotlib()
    results = saved_run(path)
    plots.plot(results)
    text = report.markdown(results)
    print(text)
    if update:
        report.update_doc(text)


def check() -> None:
    """What a run would use, without building, starting or loading
    anything; then the report of the last run in bench/results.json."""
    for tool in ("cargo", "oha", "wrk"):
        log(f"{tool}: {shutil.which(tool) or 'not found (the run installs it)'}")
    log("build: " + " ".join(build_command(RELEASE.name)))
    for name in ("forcegate", *BENCH_BINS):
        path = RELEASE / name
        log(f"{path}: {'present' if path.exists() else 'not built yet'}")
    log(f"wrk script: {WRK_SCRIPT} ({'present' if WRK_SCRIPT.exists() else 'MISSING'})")
    runs = report.load_runs()
    log(f"{report.RESULTS}: {len(runs)} runs recorded")
    print(report.markdown(saved_run(report.RESULTS)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20, help="length of each load phase")
    parser.add_argument("--rounds", type=int, default=3, help="alternating peak rounds per server")
    parser.add_argument("--quick", action="store_true", help="5 s phases, 1 round (trying the script)")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/performance.md")
    parser.add_argument("--workdir", type=Path, help="keep fixtures and logs here (default: temp dir)")
    parser.add_argument(
        "--pgo", action="store_true",
        help="measure bench/pgo.py's profile-guided builds; results in bench/results-pgo.json, docs untouched",
    )
    parser.add_argument(
        "--report-only", type=Path, metavar="RESULTS_JSON",
        help="measure nothing: redraw the plots and rewrite the results section from a saved run",
    )
    parser.add_argument(
        "--check", action="store_true",
        help="build and measure nothing, write nothing: the tools, binaries and report a run would use",
    )
    args = parser.parse_args()
    if args.check:
        check()
        return
    if args.report_only:
        report_only(args.report_only, update=not args.no_doc)
        return
    if args.quick:
        args.seconds, args.rounds = 5, 1
    seconds = max(1.0, min(args.seconds, 120.0))
    rounds = max(1, min(args.rounds, 5))

    tools = {"oha": ensure_oha(), "wrk": ensure_wrk()}
    ensure_matplotlib()
    if args.pgo:
        use_pgo_build()
    if not args.skip_build:
        build()

    work = args.workdir or Path(tempfile.mkdtemp(prefix="forcegate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    log(f"work dir {work}")
    results: dict = {
        "machine": machine(),
        "build": "pgo" if args.pgo else "release",
        "load_avg_start": load_average(),
        "phase_seconds": seconds,
        "rounds": rounds,
        "connections": CONNECTIONS,
        "oha": tool_version([tools["oha"], "--version"]),
        "wrk": tool_version([tools["wrk"], "--version"]),
    }
    fixtures = {pods: fixtures_for(pods, work) for pods in SIZES}
    certs = work / "certs"
    ca = certs / "ca.crt"
    main_fx = fixtures[MAIN_SIZE]
    bodies = Path(main_fx["bodies"])

    servers: list[Server] = []
    try:
        forcegate = start_forcegate(work, Path(main_fx["snapshot"]), certs, "10k")
        servers.append(forcegate)
        forcegate.wait_ready(ca)
        baseline = start_baseline(work, certs)
        control = start_baseline(work, certs, name="baseline-again")
        for server in (baseline, control):
            servers.append(server)
            server.wait_ready(ca)
        log("checking one request of each kind")
        results["decisions"] = check_decisions(forcegate, baseline, ca, Path(main_fx["samples"]), main_fx)
        answers = record_answers(forcegate, ca, bodies, work / "answers.jsonl")
        floor = start_baseline(work, certs, answers=answers)
        facts_floor = start_baseline(work, certs, answers=answers, facts_from=Path(main_fx["snapshot"]))
        for server in (floor, facts_floor):
            servers.append(server)
            server.wait_ready(ca)
            check_floor(server, ca, bodies, answers)
        peakers = (forcegate, baseline, floor, facts_floor, control)

        log("warm-up")
        for server in peakers:
            oha(tools["oha"], server, ca, bodies, min(3.0, seconds))

        log("peak, closed loop, alternating, with each load generator")
        results["peak_rounds"] = []
        for round_index in range(rounds):
            for generator in report.GENERATORS:
                for server in in_turn(peakers, round_index):
                    results["peak_rounds"].append(drive(generator, tools, server, ca, bodies, seconds))
        report.derive(results)
        floor.stop()
        facts_floor.stop()
        for peak in (results["peak"], results["peak_wrk"]):
            log(
                f"peak ({peak['generator']}): forcegate {peak['forcegate']:.0f} req/s, baseline "
                f"{peak['baseline']:.0f} req/s, ratio {peak['ratio']:.1%}; answer floor {peak['floor_ratio']:.1%}, "
                f"facts floor {peak['facts_floor_ratio']:.1%}; the baseline against itself {peak['control_ratio']:.1%}"
            )
        peak_f = results["peak"]["forcegate"]

        log("each kind of request alone, closed loop")
        results["kinds_alone"] = kinds_alone(
            tools, (forcegate, baseline), ca, main_fx["bodiesAlone"], min(seconds, 10.0)
        )

        log("fixed rates, open loop (fractions of forcegate's peak, same rates for both)")
        results["open_loop"] = []
        for fraction in (0.1, 0.25, 0.5, 0.75):
            rate = peak_f * fraction
            for server in (forcegate, baseline):
                result = oha(tools["oha"], server, ca, bodies, seconds, rate)
                result["fraction_of_forcegate_peak"] = fraction
                results["open_loop"].append(result)
        results["half_peak"] = half_peak_rounds(
            tools["oha"], (forcegate, baseline), control, ca, bodies, seconds, results, rounds
        )
        control.stop()

        log("calibration: baselines that burn a fixed CPU time per request")
        results["calibration"] = calibrate(tools["oha"], work, baseline, certs, ca, bodies, seconds, results)

        time.sleep(5)
        results["main_rss"] = memory(forcegate.proc.pid)
        results["baseline_rss"] = memory(baseline.proc.pid)
        log(f"idle after load: forcegate {results['main_rss']}, baseline {results['baseline_rss']}")
    finally:
        for server in servers:
            server.stop()

    log("memory vs snapshot size")
    results["sizes"] = []
    moderate = min(1000.0, results["peak"]["forcegate"] * 0.5)
    for pods in SIZES:
        fx = fixtures[pods]
        server = start_forcegate(work, Path(fx["snapshot"]), certs, f"{pods // 1000}k-rss")
        try:
            server.wait_ready(ca)
            time.sleep(2)
            at_ready = memory(server.proc.pid)
            run_result = oha(tools["oha"], server, ca, Path(fx["bodies"]), min(seconds, 10.0), moderate)
            time.sleep(3)
            after = memory(server.proc.pid)
        finally:
            server.stop()
        results["sizes"].append(
            {
                "pods": pods,
                "ready_after_s": server.ready_after_s,
                "rss_ready_mib": at_ready["VmRSS"],
                "rss_after_load_mib": after["VmRSS"],
                "hwm_mib": after["VmHWM"],
                "load_rps": run_result["rps"],
                "load_p99_ms": run_result["p99_ms"],
            }
        )
        log(f"  {pods} pods: ready after {server.ready_after_s}s, at ready {at_ready}, after load {after}")

    settle()
    results["decide_ns"] = decision_scaling()
    results["load_avg_end"] = load_average()
    # One entry per run; profile-guided runs go apart and leave the docs alone.
    report.append_run(results, ROOT / "bench" / ("results-pgo.json" if args.pgo else "results.json"))
    if not args.pgo:
        plots.plot(results)
    text = report.markdown(results)
    print()
    print(text)
    if not args.no_doc and not args.pgo:
        report.update_doc(text)
    log(f"done; fixtures and logs in {work}")


if __name__ == "__main__":
    main()
