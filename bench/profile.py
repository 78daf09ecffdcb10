#!/usr/bin/env python3
"""Where a server's CPU time per request goes, under the load run's load.

    python3 bench/profile.py                           # the load mix
    python3 bench/profile.py --kind force_delete_leader --seconds 10
    python3 bench/profile.py --floor      # against the answer floor

Starts `forcegate serve` on the 10k-pod snapshot, then the bare baseline,
drives each at peak (closed loop, as in bench/load.py), samples it with
`perf record --call-graph dwarf` meanwhile, and sorts every sample into the
first stage its stack contains (decide, decode, encode, log line, ...).
Each stage's share times the server's CPU µs per request (from /proc over
the same window) is printed for both servers, with the difference: what
forcegate's work costs, and how much more the parts both servers share
cost when it runs next to them. With `--floor` the other server is the
answer floor (forcegate's answers replayed and its log line written, no
deciding), so the difference is the decision's alone. forcegate's decide
stage is then split into its parts (classify, each fact group, policy
templates, truth tests, ...), the same way. Needs `perf`
(Debian: linux-perf). Builds cargo profile `profiling` (release without
LTO, so the stages keep their symbols; target/profiling). Traffic goes
to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (the load run's servers, fixtures and oha driver)

# First match wins, in this order, anywhere in a sample's stack (so time in
# the kernel under a `writev` counts as the TLS write that called it).
STAGES = [
    ("decide: classify, facts, policies", r"Engine::decide|intent::classify"),
    ("decode review", r"admission::decode"),
    ("encode response", r"admission::(encode|respond)"),
    ("cleanup record", r"Engine::record|cleanup::journal"),
    ("log line", r"log_decision|tracing_subscriber|tracing_core|telemetry::"),
    ("metrics", r"prometheus_client|server::metrics|policy_metrics"),
    # The handler's own work around those (limits, body, dropping the
    # request): forcegate's `admit`, the baseline's handler.
    ("handler: the rest", r"Engine::admit|routes::admit|routes::read_checked|baseline::"),
    ("TLS write, send", r"rustls.*(write|encrypt|seal)|writev|sendmsg|tcp_sendmsg"),
    ("TLS read, receive", r"rustls.*(read|decrypt|open|process_new_packets)|recvfrom|readv|tcp_recvmsg"),
    ("HTTP: hyper, axum, tower", r"hyper::|hyper_util::|axum::|tower::"),
    ("runtime: tokio, scheduling", r"tokio::|epoll_wait|futex|schedule|finish_task_switch"),
]

# Inside the decide stage: first match wins, over the frames from the
# leaf up to `Engine::decide` (or `intent::classify`).
DECIDE_PARTS = [
    ("classify", r"intent::classify"),
    # Facts serialized into the policies' context: policy work, though its
    # frames name the facts' types.
    ("policies: context as JSON", r"context::root_json"),
    ("facts: the request's pod", r"record::pod::Pod::from_dynamic|record::body"),
    ("facts: volumes", r"facts::volumes"),
    ("facts: leader", r"facts::leader"),
    ("facts: node", r"facts::node"),
    ("facts: owners", r"facts::owners"),
    ("facts: other", r"facts::"),
    ("policies: templates", r"Template::render"),
    ("policies: explanations", r"Condition::explain|eval_all"),
    ("policies: truth tests", r"::truth"),
    ("policies: merging", r"eval::assemble|fit_warnings|clean_warning"),
    ("policies: other", r"policy::"),
    ("other", r"."),
]


def stacks(perf_script: str):
    """Samples of `perf script` output as lists of symbol names."""
    frames: list[str] = []
    for line in perf_script.splitlines():
        if not line.strip():
            if frames:
                yield frames
            frames = []
        elif line[0] in " \t":
            parts = line.split(None, 1)
            if len(parts) == 2:
                frames.append(parts[1])
    if frames:
        yield frames


def stage_of(frames: list[str], patterns: list[tuple[str, re.Pattern]]) -> str:
    text = "\n".join(frames)
    for name, pattern in patterns:
        if pattern.search(text):
            return name
    return "other"


def decide_parts(frames: list[str], decide: re.Pattern, parts: list[tuple[str, re.Pattern]]) -> str | None:
    """The part of the decide stage a sample is in; None outside it."""
    inner = next((i for i, frame in enumerate(frames) if decide.search(frame)), None)
    if inner is None:
        return None
    text = "\n".join(frames[: inner + 1])
    return next(name for name, pattern in parts if pattern.search(text))


def profile(oha_bin: str, server: load.Server, ca: Path, bodies: Path, seconds: float, data: Path) -> dict:
    """Shares of samples per stage and CPU µs per request, same window."""
    load.oha(oha_bin, server, ca, bodies, min(3.0, seconds))
    record = [
        "perf", "record", "-q", "-F", "499", "--call-graph", "dwarf,32768",
        "-p", str(server.proc.pid), "-o", str(data), "--", "sleep", str(seconds),
    ]
    recorder = threading.Thread(target=lambda: subprocess.run(record, check=True, capture_output=True))
    recorder.start()
    measured = load.oha(oha_bin, server, ca, bodies, seconds + 1)
    recorder.join()
    script = subprocess.run(["perf", "script", "-i", str(data)], check=True, capture_output=True, text=True).stdout
    patterns = [(name, re.compile(pattern)) for name, pattern in STAGES]
    decide = re.compile(STAGES[0][1])
    parts = [(name, re.compile(pattern)) for name, pattern in DECIDE_PARTS]
    counts, in_decide = collections.Counter(), collections.Counter()
    for frames in stacks(script):
        counts[stage_of(frames, patterns)] += 1
        part = decide_parts(frames, decide, parts)
        if part:
            in_decide[part] += 1
    total = sum(counts.values()) or 1
    cpu = measured["cpu_us_per_request"] or 0.0
    return {
        "rps": measured["rps"],
        "cpu_us_per_request": cpu,
        "samples": total,
        "us_per_request": {stage: cpu * n / total for stage, n in counts.items()},
        "decide_us_per_request": {part: cpu * n / total for part, n in in_decide.items()},
    }


def report(forcegate: dict, baseline: dict, other: str) -> str:
    stages = [name for name, _ in STAGES] + ["other"]
    rows = [f"{'µs per request':<36} {'forcegate':>10} {other:>12} {'difference':>11}"]
    for stage in stages:
        f = forcegate["us_per_request"].get(stage, 0.0)
        b = baseline["us_per_request"].get(stage, 0.0)
        rows.append(f"{stage:<36} {f:>10.1f} {b:>12.1f} {f - b:>+11.1f}")
    f, b = forcegate["cpu_us_per_request"], baseline["cpu_us_per_request"]
    rows.append(f"{'total (CPU time / requests)':<36} {f:>10.1f} {b:>12.1f} {f - b:>+11.1f}")
    rows.append(
        f"peak req/s: forcegate {forcegate['rps']:.0f}, {other} {baseline['rps']:.0f} "
        f"(ratio {forcegate['rps'] / baseline['rps']:.0%}); samples {forcegate['samples']} / {baseline['samples']}"
    )
    decide = forcegate["decide_us_per_request"]
    total = sum(decide.values()) or 1.0
    rows.append(f"\n{'forcegate, inside decide':<36} {'µs/request':>10} {'share':>12}")
    for part, _ in DECIDE_PARTS:
        rows.append(f"{part:<36} {decide.get(part, 0.0):>10.2f} {decide.get(part, 0.0) / total:>12.0%}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", help="one kind of request alone (a scenario name), default: the load mix")
    parser.add_argument("--seconds", type=float, default=8, help="length of the sampled phase")
    parser.add_argument("--floor", action="store_true", help="compare with the answer floor, not the bare baseline")
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
        raise SystemExit("perf is needed (Debian: apt-get install linux-perf)")
    oha_bin = load.ensure_oha()
    # The release profile's fat LTO inlines the stages away (no
    # `Engine::decide` frame is left to sort samples by); this profile is
    # release without it.
    load.use_profile("profiling")
    if not args.skip_build:
        load.build()
    work = Path(tempfile.mkdtemp(prefix="forcegate-profile-"))
    fixtures = load.fixtures_for(load.MAIN_SIZE, work)
    bodies = Path(fixtures["bodiesAlone"][args.kind] if args.kind else fixtures["bodies"])
    certs = work / "certs"
    ca = certs / "ca.crt"
    other = "answer floor" if args.floor else "baseline"
    answers = None
    results = {}
    for name in ("forcegate", other):
        if name == "forcegate":
            server = load.start_forcegate(work, Path(fixtures["snapshot"]), certs, "10k")
        else:
            server = load.start_baseline(work, certs, answers=answers)
        try:
            server.wait_ready(ca)
            if name == "forcegate" and args.floor:
                answers = load.record_answers(server, ca, bodies, work / "answers.jsonl")
            results[name] = profile(oha_bin, server, ca, bodies, args.seconds, work / f"{name}.perf")
        finally:
            server.stop()
    print(f"\n{args.kind or 'load mix'}, closed loop, {load.CONNECTIONS} connections, {args.seconds} s sampled")
    print(report(results["forcegate"], results[other], other))


if __name__ == "__main__":
    main()
