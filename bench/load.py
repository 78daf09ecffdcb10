#!/usr/bin/env python3
"""Load run: forcegate serve against a bare baseline, same stack, same load.

    python3 bench/load.py            # full run, ~20 minutes plus builds
    python3 bench/load.py --quick    # 5 s phases, for trying the script
    python3 bench/load.py --pgo      # both servers as bench/pgo.py built them

What it does, in order (see docs/performance.md):
  1. installs what it needs if missing: oha (cargo install), matplotlib (pip);
  2. builds release: forcegate, and forcegate-bench's baseline,
     bench_fixtures and decision_scaling (bench/src/bin);
  3. writes deterministic synthetic snapshots (1k, 10k, 100k pods) and, for
     each, AdmissionReview bodies aimed at objects in it (the load mix:
     force delete of a leader, of a pod with an attached volume, a finalizer
     strip, a kubelet final delete);
  4. starts `forcegate serve` (10k snapshot, shipped policies, journal in a
     temp dir) and the baseline on 127.0.0.1, waits for /readyz, checks one
     request of each kind gets the expected answer;
  5. records forcegate's answer to each body and starts the answer floor:
     the baseline replaying those answers through the same encoder and
     logging the same decision line (what answering costs without deciding),
     and the facts floor: the same, after classifying each request and
     gathering its facts from the 10k snapshot as serve does (what any
     engine reading those facts costs, however it evaluates policies);
  6. drives them with oha over HTTP/1.1 keep-alive TLS: closed loop at peak
     (forcegate/baseline/floors, `--rounds` times, every other round in
     reverse order), each kind of the mix alone at peak (which request
     costs what), then open loop at
     the same fixed rates for both (10/25/50/75% of forcegate's peak, so
     none overloads it; 50% is the p99 target's point, run `--rounds`
     times alternating and judged on the median p99), recording each
     server's CPU time per request;
  7. calibrates: the baseline again with `--work-us W` (W µs of CPU burnt
     per request, W = 5 … 80), its peak against a bare baseline round just
     before it and its p99 at forcegate's half-peak rate, so the targets
     read as a budget in µs per request;
  8. reads RSS (VmRSS/VmHWM from /proc) of serve idle after the load, then
     for each snapshot size: at ready and idle after a short load;
  9. runs decision_scaling (decision time vs cluster size, sizes
     timed in interleaved rounds so machine noise hits all alike);
  10. writes docs/img/latency-vs-load.png, docs/img/calibration.png,
      docs/img/scaling.png, bench/results.json, and the results section of
      docs/performance.md.

Traffic goes to 127.0.0.1 only; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
) -> Server:
    """The bare baseline; with `work_us`, one that also burns that much CPU
    per request (the calibration servers); with `answers`, the answer floor:
    it replays forcegate's recorded answers and logs its decision line; with
    `facts_from` as well, the facts floor: it also classifies each request
    and gathers its facts from that snapshot first."""
    bin_dir = bin_dir or RELEASE
    port = free_port()
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
    report = json.loads(done.stdout)
    summary = report["summary"]
    pct = report["latencyPercentiles"]
    codes = report.get("statusCodeDistribution", {})
    errors = report.get("errorDistribution", {})
    ok = codes.get("200", 0)
    total = sum(codes.values()) + sum(errors.values())
    result = {
        "server": server.name,
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


def round_ratios(rounds: list[dict], numerator: str, denominator: str) -> list[float]:
    """forcegate / baseline within each round: on a host whose speed drifts
    during the run, their spread says how far the ratio of medians can be
    trusted."""
    tops = [r["rps"] for r in rounds if r["server"] == numerator]
    bottoms = [r["rps"] for r in rounds if r["server"] == denominator]
    # Unrounded: a round at 79.96% must not be judged as meeting 80%.
    return [top / bottom for top, bottom in zip(tops, bottoms)]


def in_turn(servers: tuple, round_index: int) -> tuple:
    """The order of one alternating round: reversed every other round, so a
    host that speeds up or slows down during the run (seen: the baseline's
    peak rising 24k → 35k over four minutes) does not always favour the
    server that goes last."""
    return servers if round_index % 2 == 0 else servers[::-1]


def half_peak_rounds(oha_bin: str, servers: tuple, ca: Path, bodies: Path, seconds: float, results: dict, rounds: int) -> dict:
    """The p99 target's point measured like the peak: alternating rounds at
    half of forcegate's peak (the sweep's own 50% phase is the first), the
    median p99 of each server judged. A single 20 s phase's p99 moves by
    2× with the host."""
    swept = [r for r in results["open_loop"] if r["fraction_of_forcegate_peak"] == 0.5]
    rate = swept[0]["offered_rps"]
    log(f"half of forcegate's peak ({rate:.0f}/s), {rounds} alternating rounds")
    by_server = {server.name: [r for r in swept if r["server"] == server.name] for server in servers}
    for round_index in range(1, rounds):
        for server in in_turn(servers, round_index):
            by_server[server.name].append(oha(oha_bin, server, ca, bodies, seconds, rate))
    forcegate, baseline = ([r["p99_ms"] for r in by_server[server.name]] for server in servers)
    return {
        "rate": rate,
        "forcegate_p99_ms": forcegate,
        "baseline_p99_ms": baseline,
        "forcegate_median_p99_ms": statistics.median(forcegate),
        "baseline_median_p99_ms": statistics.median(baseline),
    }


def kinds_alone(oha_bin: str, servers: tuple, ca: Path, alone: dict, seconds: float) -> list[dict]:
    """Each kind of the mix alone, closed loop, forcegate then baseline: which
    request costs what. The kubelet's final delete is never gated (and
    logged at debug only), so its ratio is forcegate's floor (classify,
    metrics) with no decision at all."""
    rows = []
    for kind, bodies in alone.items():
        forcegate, baseline = (oha(oha_bin, server, ca, Path(bodies), seconds) for server in servers)
        rows.append(
            {
                "kind": kind,
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
        "budget_us_at_80": crossing(curve, 0.8),
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


# ---------------------------------------------------------------- plots


def plot(results: dict, img: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, style in (("forcegate", "o-"), ("baseline", "s--")):
        points = sorted(
            (r for r in results["open_loop"] if r["server"].startswith(name)),
            key=lambda r: r["offered_rps"],
        )
        xs = [r["offered_rps"] for r in points]
        for key, alpha in (("p50_ms", 0.6), ("p99_ms", 1.0), ("p99_9_ms", 0.35)):
            label = f"{name} {key[:-3].replace('_', '.')}"
            ax.plot(xs, [r[key] for r in points], style, alpha=alpha, label=label)
    half = results["half_peak"]
    ax.axvline(half["rate"], color="grey", linestyle="--", linewidth=0.8, label="50% of forcegate peak")
    ax.axhline(2.0, color="grey", linestyle=":", linewidth=1, label="p99 target 2 ms")
    ax.set_yscale("log")
    ax.set_xlabel("offered requests/s (open loop, same rates for both)")
    ax.set_ylabel("latency (ms, log)")
    ax.set_title(f"Admission latency vs load, {MAIN_SIZE // 1000}k-pod snapshot, HTTP/1.1 TLS")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(img / "latency-vs-load.png", dpi=110)
    plt.close(fig)

    plot_calibration(results, img)

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    sizes = results["sizes"]
    pods = [s["pods"] for s in sizes]
    left.plot(pods, [s["rss_ready_mib"] for s in sizes], "o-", label="VmRSS at ready")
    left.plot(pods, [s["rss_after_load_mib"] for s in sizes], "s-", label="VmRSS idle after load")
    left.plot(pods, [s["hwm_mib"] for s in sizes], "^--", label="VmHWM (peak)")
    left.axhline(128, color="grey", linestyle=":", label="target at 10k: 128 MiB")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("pods in snapshot")
    left.set_ylabel("MiB (log)")
    left.set_title("forcegate serve memory")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    for scenario, by_size in sorted(results["decide_ns"].items()):
        xs = sorted(int(p) for p in by_size)
        right.plot(xs, [by_size[str(x)] / 1000 for x in xs], "o-", label=scenario)
    right.set_xscale("log")
    right.set_xlabel("pods in cluster")
    right.set_ylabel("µs per decision (classify + facts + policies)")
    right.set_title("decision time vs cluster size (interleaved medians)")
    # The heaviest calibration servers overload at this rate (seconds of
    # queueing), so a linear axis would flatten everything that matters.
    right.set_yscale("log")
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(img / "scaling.png", dpi=110)
    plt.close(fig)


def plot_calibration(results: dict, img: Path) -> None:
    import matplotlib.pyplot as plt

    cal = results["calibration"]
    points = cal["points"]
    xs = [0] + [p["work_us"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.plot(xs, [100] + [p["ratio"] * 100 for p in points], "s--", label="baseline + fixed CPU work")
    left.axhline(results["peak"]["ratio"] * 100, color="C1", label="forcegate (same run)")
    left.axhline(results["peak"]["floor_ratio"] * 100, color="C2", linestyle="-.", label="answer floor")
    if "facts_floor_ratio" in results["peak"]:
        left.axhline(results["peak"]["facts_floor_ratio"] * 100, color="C3", linestyle="--", label="facts floor")
    left.axhline(80, color="grey", linestyle=":", label="target 80%")
    left.set_xlabel("CPU work added per request (µs)")
    left.set_ylabel("peak throughput, % of bare baseline")
    left.set_title("What per-request work costs here (closed loop)")
    left.set_ylim(0, 105)
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    half = results["half_peak"]
    right.plot(
        xs,
        [half["baseline_median_p99_ms"]] + [p["p99_ms_at_half"] for p in points],
        "s--",
        label="baseline + fixed CPU work (bare: median of rounds)",
    )
    right.axhline(half["forcegate_median_p99_ms"], color="C1", label="forcegate (median of rounds)")
    right.axhline(2.0, color="grey", linestyle=":", label="target 2 ms")
    right.set_xlabel("CPU work added per request (µs)")
    right.set_ylabel("p99 ms")
    right.set_title(f"p99 at {cal['half_rate']:.0f} req/s (half of forcegate's peak)")
    # The heaviest calibration servers overload at this rate (seconds of
    # queueing), so a linear axis would flatten everything that matters.
    right.set_yscale("log")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(img / "calibration.png", dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- report


MET, MISSED = "met", "**missed**"


def ratio_status(round_ratios: list[float], target: float) -> str:
    """A ratio target judged round by round (each round pairs servers run
    minutes apart at most): missed or met only when every round agrees."""
    if not round_ratios:
        return "unjudgeable (no rounds)"
    if all(r < target for r in round_ratios):
        return MISSED
    if all(r >= target for r in round_ratios):
        return MET
    return f"unjudgeable (rounds {min(round_ratios):.2%}–{max(round_ratios):.2%} straddle the target)"


def p99_status(forcegate_ms: float, baseline_ms: float, target_ms: float = 2.0) -> str:
    """A host on which the bare baseline itself misses the latency target
    says nothing of what forcegate adds to it."""
    if baseline_ms > target_ms:
        return f"unjudgeable (the bare baseline's own p99 is {baseline_ms} ms)"
    return MET if forcegate_ms <= target_ms else MISSED


def verdicts(results: dict) -> list[tuple[str, str, str, str]]:
    peak = derive(results)["peak"]
    ratio = peak["ratio"]
    half = results["half_peak"]
    rss = next(s for s in results["sizes"] if s["pods"] == MAIN_SIZE)
    rss_main = max(rss["rss_after_load_mib"], rss["rss_ready_mib"])
    rows = [
        (
            "throughput ≥ 80% of baseline",
            f"{ratio:.2%} (rounds {', '.join(f'{r:.2%}' for r in peak['round_ratios'])})",
            "same run, closed loop",
            ratio_status(peak["round_ratios"], 0.8),
        ),
        (
            "p99 ≤ 2 ms at half of peak",
            f"{half['forcegate_median_p99_ms']} ms at {half['rate']:.0f} req/s "
            f"(bare baseline at the same rate: {half['baseline_median_p99_ms']} ms)",
            f"open loop, 50% of forcegate's peak, median of {len(half['forcegate_p99_ms'])} rounds",
            p99_status(half["forcegate_median_p99_ms"], half["baseline_median_p99_ms"]),
        ),
        (
            "RSS ≤ 128 MiB on 10k pods",
            f"{rss_main} MiB (peak {rss['hwm_mib']} MiB)",
            "VmRSS idle after load",
            MET if rss_main <= 128 else MISSED,
        ),
    ]
    decide = results["decide_ns"]
    worst = None
    for scenario, by_size in decide.items():
        if "1000" in by_size and "100000" in by_size:
            factor = by_size["100000"] / by_size["1000"]
            if worst is None or factor > worst[1]:
                worst = (scenario, factor)
    if worst:
        rows.append(
            (
                "decision at 100k ≤ 1.2× at 1k",
                f"{worst[1]:.2f}× (worst: {worst[0]})",
                "decision_scaling, interleaved medians",
                MET if worst[1] <= 1.2 else MISSED,
            )
        )
    return rows


PEAK_SERVERS = {"forcegate": "forcegate-10k", "baseline": "baseline", "floor": "answer-floor", "facts_floor": "facts-floor"}


def derive(results: dict) -> dict:
    """Compute from the peak rounds (also for results written before it
    was, whose stored ratios were rounded): each server's ratio to the
    baseline round by round, and every server's spread of rounds."""
    peak, rounds = results["peak"], results["peak_rounds"]
    base = PEAK_SERVERS["baseline"]
    peak["round_ratios"] = round_ratios(rounds, PEAK_SERVERS["forcegate"], base)
    peak["floor_round_ratios"] = round_ratios(rounds, PEAK_SERVERS["floor"], base)
    peak["facts_floor_round_ratios"] = round_ratios(rounds, PEAK_SERVERS["facts_floor"], base)
    spread = {}
    for key, name in PEAK_SERVERS.items():
        rps = [r["rps"] for r in rounds if r["server"] == name]
        if rps:
            spread[key] = [min(rps), max(rps)]
    peak.setdefault("spread", spread)
    return results


def noise_note(peak: dict, limit: float = 0.15) -> str:
    """What this run's own spread lets it say about the floors."""
    spread = peak.get("spread", {})
    wide = {k: v for k, v in spread.items() if v[0] > 0 and v[1] / v[0] - 1 > limit}
    base = spread.get("baseline")
    text = ""
    if base:
        text = (
            f"The bare baseline's peak rounds spread {base[0]:.0f}–{base[1]:.0f} req/s "
            f"({base[1] / base[0] - 1:.0%} apart). "
        )
    floors = [peak.get("floor_round_ratios") or [], peak.get("facts_floor_round_ratios") or []]
    if wide:
        label = {"floor": "answer floor", "facts_floor": "facts floor"}
        names = ", ".join(f"{label.get(k, k)} {v[0]:.0f}–{v[1]:.0f}" for k, v in wide.items())
        text += (
            f"Some servers' rounds lie more than {limit:.0%} apart ({names} req/s): "
            f"on this run, differences of that order between the ratios are the host, not the code. "
        )
    if all(floors) and any(a < b for a, b in zip(*floors)):
        text += "In some round the facts floor beat the answer floor: their distance is within this run's noise."
    return text

def markdown(results: dict) -> str:
    derive(results)
    m = results["machine"]
    lines = [
        f"Run of {m['date_utc']} on {m['nproc']} × {m['cpu']}, {m['memory_gib']} GiB, "
        f"kernel {m['kernel']}; load average (1/5/15 min) at start {results['load_avg_start']}, "
        f"at end {results.get('load_avg_end')} "
        f"(the machine is shared), {results['phase_seconds']} s per phase, "
        f"{CONNECTIONS} connections, {results['rounds']} alternating peak rounds.",
        "",
        "| run | req/s | p50 ms | p99 ms | p99.9 ms | CPU µs/req | load avg (1m) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["peak_rounds"]:
        lines.append(
            f"| {r['server']} peak (closed loop) | {r['rps']:.0f} | {r['p50_ms']} | {r['p99_ms']} "
            f"| {r['p99_9_ms']} | {r.get('cpu_us_per_request')} | {r['load_avg_1m']} |"
        )
    for r in results["open_loop"]:
        share = r.get("fraction_of_forcegate_peak")
        share = f", {share:.0%} of forcegate peak" if share is not None else ""
        lines.append(
            f"| {r['server']} at {r['offered_rps']:.0f}/s (open loop{share}) | {r['rps']:.0f} | {r['p50_ms']} "
            f"| {r['p99_ms']} | {r['p99_9_ms']} | {r.get('cpu_us_per_request')} | {r['load_avg_1m']} |"
        )
    p = results["peak"]
    lines += [
        "",
        f"Peak (median of rounds): forcegate {p['forcegate']:.0f} req/s, baseline "
        f"{p['baseline']:.0f} req/s, **ratio {p['ratio']:.1%}** (round by round: "
        + ", ".join(f"{r:.1%}" for r in p.get("round_ratios", []))
        + ").",
        "",
        f"Answer floor: the baseline replaying forcegate's recorded answers through the same encoder "
        f"and logging the same decision line, without deciding: {p['floor']:.0f} req/s, "
        f"**{p['floor_ratio']:.0%}** of the baseline{by_round(p, 'floor_round_ratios')}. "
        f"No engine giving these answers and writing this log line "
        f"gets higher here; "
        f"from the floor down to forcegate is the decision (classify, facts, policies, messages), "
        f"its metrics and the cleanup record.",
        "",
        f"Facts floor: the answer floor that also classifies each request and gathers its facts from "
        f"the same 10k-pod snapshot as serve does, then gives the recorded answer: "
        f"{p['facts_floor']:.0f} req/s, **{p['facts_floor_ratio']:.0%}** of the baseline"
        f"{by_round(p, 'facts_floor_round_ratios')}. No engine that reads "
        f"these facts this way gets higher here, however cheaply it evaluates policies; from this floor "
        f"down to forcegate is policy evaluation, its messages, metrics and the cleanup record.",
        "",
    ]
    note = noise_note(p)
    if note:
        lines += [note, ""]
    half = results["half_peak"]
    lines += [
        f"p99 at {half['rate']:.0f} req/s, half of forcegate's peak, alternating rounds: forcegate "
        f"{', '.join(str(x) for x in half['forcegate_p99_ms'])} ms (median **{half['forcegate_median_p99_ms']} ms**), "
        f"baseline {', '.join(str(x) for x in half['baseline_p99_ms'])} ms (median {half['baseline_median_p99_ms']} ms).",
        "",
    ]
    kinds = results.get("kinds_alone")
    if kinds:
        lines += ["Each kind of request alone (closed loop, one round each):", ""]
        lines += table(
            ["request", "forcegate req/s", "baseline req/s", "ratio", "forcegate CPU µs/req", "baseline CPU µs/req"],
            [
                [k["kind"], f"{k['forcegate_rps']:.0f}", f"{k['baseline_rps']:.0f}", f"{k['ratio']:.0%}",
                 k["forcegate_cpu_us_per_request"], k["baseline_cpu_us_per_request"]]
                for k in kinds
            ],
        )
        lines.append("")
    lines += calibration_markdown(results)
    lines += table(
        ["snapshot pods", "ready after s", "VmRSS at ready MiB", "VmRSS idle after load MiB", "VmHWM MiB"],
        [
            [s["pods"], s["ready_after_s"], s["rss_ready_mib"], s["rss_after_load_mib"], s["hwm_mib"]]
            for s in results["sizes"]
        ],
    )
    b = results["baseline_rss"]
    lines += ["", f"Baseline RSS idle after load: {b.get('VmRSS')} MiB (peak {b.get('VmHWM')} MiB).", ""]
    decide = results["decide_ns"]
    if decide:
        sizes = sorted({int(s) for by in decide.values() for s in by})
        lines.append("| decision (µs, median of interleaved rounds) | " + " | ".join(f"{s // 1000}k pods" for s in sizes) + " | 100k / 1k |")
        lines.append("|---|" + "---:|" * (len(sizes) + 1))
        for scenario, by_size in sorted(decide.items()):
            cells = [f"{by_size[str(s)] / 1000:.2f}" if str(s) in by_size else "–" for s in sizes]
            factor = (
                f"{by_size['100000'] / by_size['1000']:.2f}×"
                if "100000" in by_size and "1000" in by_size
                else "–"
            )
            lines.append(f"| {scenario} | " + " | ".join(cells) + f" | {factor} |")
        lines.append("")
    lines += ["| target | measured | how | met |", "|---|---|---|---|"]
    for target, measured, how, status in verdicts(results):
        lines.append(f"| {target} | {measured} | {how} | {status} |")
    return "\n".join(lines) + "\n"


def by_round(peak: dict, key: str) -> str:
    ratios = peak.get(key) or []
    return f" (round by round: {', '.join(f'{r:.0%}' for r in ratios)})" if ratios else ""


def table(headers: list[str], rows: list[list]) -> list[str]:
    """A markdown table with right-aligned (numeric) columns."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---:|" * len(headers)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def calibration_markdown(results: dict) -> list[str]:
    cal = results.get("calibration")
    if not cal:
        return []
    lines = [
        f"Calibration (same run): the baseline burning a fixed CPU time per request; p99 at "
        f"{cal['half_rate']:.0f} req/s, half of forcegate's peak.",
        "",
    ]
    lines += table(
        ["added CPU per request", "peak req/s", "bare baseline just before", "% of bare baseline", "CPU µs/req", "p99 ms at half of forcegate's peak"],
        [
            [f"{p['work_us']} µs", f"{p['rps']:.0f}", f"{p['bare_rps']:.0f}", f"{p['ratio']:.0%}", p["cpu_us_per_request"], p["p99_ms_at_half"]]
            for p in cal["points"]
        ],
    )
    last = CALIBRATION_US[-1]

    def us(value: float | None, above: str = f"more than {last}") -> str:
        return f"**{value if value is not None else above} µs**"

    lines += [
        "",
        f"80% of the baseline leaves room for {us(cal['budget_us_at_80'], '?')} of work per request on this "
        f"machine. The answer floor (forcegate's answers and log line, no deciding) equals a baseline that "
        f"burns {us(cal.get('floor_equivalent_us'))}, the facts floor (answers, log line, classify and "
        f"facts) one that burns {us(cal.get('facts_floor_equivalent_us'))}; forcegate equals one that burns "
        f"{us(cal['forcegate_equivalent_us'])}.",
        "",
    ]
    return lines


def update_doc(text: str) -> None:
    doc = ROOT / "docs" / "performance.md"
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    if not doc.exists():
        log(f"{doc} missing: not updating")
        return
    content = doc.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        log(f"{doc} has no results markers: not updating")
        return
    doc.write_text(pattern.sub(lambda _: f"{begin}\n{text}{end}", content))
    log(f"updated {doc}")


# ---------------------------------------------------------------- main


def report_only(path: Path, update: bool) -> None:
    """The report of a saved run, as the run itself would have written it."""
    ensure_matplotlib()
    results = json.loads(path.read_text())
    plot(results, ROOT / "docs" / "img")
    text = markdown(results)
    print(text)
    if update:
        update_doc(text)


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
    args = parser.parse_args()
    if args.report_only:
        report_only(args.report_only, update=not args.no_doc)
        return
    if args.quick:
        args.seconds, args.rounds = 5, 1
    seconds = max(1.0, min(args.seconds, 120.0))
    rounds = max(1, min(args.rounds, 5))

    oha_bin = ensure_oha()
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
        "oha": subprocess.run([oha_bin, "--version"], capture_output=True, text=True).stdout.strip(),
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
        servers.append(baseline)
        baseline.wait_ready(ca)
        log("checking one request of each kind")
        results["decisions"] = check_decisions(forcegate, baseline, ca, Path(main_fx["samples"]), main_fx)
        answers = record_answers(forcegate, ca, bodies, work / "answers.jsonl")
        floor = start_baseline(work, certs, answers=answers)
        facts_floor = start_baseline(work, certs, answers=answers, facts_from=Path(main_fx["snapshot"]))
        for server in (floor, facts_floor):
            servers.append(server)
            server.wait_ready(ca)
            check_floor(server, ca, bodies, answers)
        peakers = (forcegate, baseline, floor, facts_floor)

        log("warm-up")
        for server in peakers:
            oha(oha_bin, server, ca, bodies, min(3.0, seconds))

        log("peak, closed loop, alternating")
        results["peak_rounds"] = []
        for round_index in range(rounds):
            for server in in_turn(peakers, round_index):
                results["peak_rounds"].append(oha(oha_bin, server, ca, bodies, seconds))
        peak_f, peak_b, peak_floor, peak_facts = (
            statistics.median(r["rps"] for r in results["peak_rounds"] if r["server"] == server.name)
            for server in peakers
        )
        results["peak"] = {
            "forcegate": peak_f,
            "baseline": peak_b,
            "ratio": round(peak_f / peak_b, 4),
            "floor": peak_floor,
            "floor_ratio": round(peak_floor / peak_b, 3),
            "facts_floor": peak_facts,
            "facts_floor_ratio": round(peak_facts / peak_b, 3),
            "round_ratios": round_ratios(results["peak_rounds"], forcegate.name, baseline.name),
            "floor_round_ratios": round_ratios(results["peak_rounds"], floor.name, baseline.name),
            "facts_floor_round_ratios": round_ratios(results["peak_rounds"], facts_floor.name, baseline.name),
        }
        floor.stop()
        facts_floor.stop()
        log(
            f"peak: forcegate {peak_f:.0f} req/s, baseline {peak_b:.0f} req/s, ratio {peak_f / peak_b:.1%}; "
            f"answer floor {peak_floor:.0f} req/s ({peak_floor / peak_b:.1%}); "
            f"facts floor {peak_facts:.0f} req/s ({peak_facts / peak_b:.1%})"
        )

        log("each kind of request alone, closed loop")
        results["kinds_alone"] = kinds_alone(
            oha_bin, (forcegate, baseline), ca, main_fx["bodiesAlone"], min(seconds, 10.0)
        )

        log("fixed rates, open loop (fractions of forcegate's peak, same rates for both)")
        results["open_loop"] = []
        for fraction in (0.1, 0.25, 0.5, 0.75):
            rate = peak_f * fraction
            for server in (forcegate, baseline):
                result = oha(oha_bin, server, ca, bodies, seconds, rate)
                result["fraction_of_forcegate_peak"] = fraction
                results["open_loop"].append(result)
        results["half_peak"] = half_peak_rounds(oha_bin, (forcegate, baseline), ca, bodies, seconds, results, rounds)

        log("calibration: baselines that burn a fixed CPU time per request")
        results["calibration"] = calibrate(oha_bin, work, baseline, certs, ca, bodies, seconds, results)

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
            run_result = oha(oha_bin, server, ca, Path(fx["bodies"]), min(seconds, 10.0), moderate)
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
    name = "results-pgo.json" if args.pgo else "results.json"
    (ROOT / "bench" / name).write_text(json.dumps(results, indent=1, default=str) + "\n")
    if not args.pgo:
        plot(results, ROOT / "docs" / "img")
    text = markdown(results)
    print()
    print(text)
    if not args.no_doc and not args.pgo:
        update_doc(text)
    log(f"done; fixtures and logs in {work}")


if __name__ == "__main__":
    main()
