#!/usr/bin/env python3
"""Instructions each server executes per request, counted by callgrind: the
deterministic side of the load run's ratio, for comparing builds on a
host whose speed swings by a quarter within a minute.

    python3 bench/instructions.py                      # the four servers of the peak rounds
    python3 bench/instructions.py --bin-dir /tmp/old   # forcegate and baseline side by side, as in target/release
    python3 bench/instructions.py --servers forcegate,baseline --requests 2000,8000

Each server (`forcegate serve` on the 10k-pod snapshot, the bare baseline,
the answer floor, the facts floor) runs under `valgrind --tool=callgrind`.
After a warm-up on the mix (connections, the journal's first record per
pod, lazy statics), each kind of the mix is sent alone in two windows of
N1 and N2 requests, each between `callgrind_control --zero` and `--dump`;
(I2 − I1) / (N2 − N1) cancels what a window pays once (its connections'
handshakes). The mix's count is the mean of the four kinds (the load run
sends them in equal shares); a random mix would move it by a thousand
instructions between runs. It counts user-space instructions of every
thread: what the load run adds on top (the kernel's network path, cache
misses, two cores shared with oha) is exactly what this leaves out, so
the ratio here is what the code alone would allow. Traffic to 127.0.0.1
only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (the load run's servers, fixtures and oha)

SERVERS = ("forcegate", "baseline", "answer-floor", "facts-floor")
CONNECTIONS = 4


def send(oha_bin: str, server: load.Server, ca: Path, bodies: Path, count: int) -> None:
    cmd = [
        oha_bin, "--no-tui", "--output-format", "json", "-n", str(count), "-c", str(CONNECTIONS),
        "--http-version", "1.1", "--cacert", str(ca),
        "-m", "POST", "-T", "application/json", "-Z", str(bodies), server.url + "/validate",
    ]
    done = subprocess.run(cmd, check=True, capture_output=True, timeout=1800)
    codes = json.loads(done.stdout).get("statusCodeDistribution", {})
    if codes.get("200", 0) != count:
        raise SystemExit(f"{server.name}: {codes} of {count} requests")


def window(oha_bin: str, server: load.Server, ca: Path, bodies: Path, count: int, out: Path) -> int:
    """Instructions of `count` requests, from a zeroed counter to a dump."""
    pid = str(server.proc.pid)
    subprocess.run(["callgrind_control", "--zero", pid], check=True, capture_output=True)
    send(oha_bin, server, ca, bodies, count)
    before = set(out.parent.glob(out.name + "*"))
    subprocess.run(["callgrind_control", "--dump", pid], check=True, capture_output=True)
    for _ in range(600):
        new = set(out.parent.glob(out.name + "*")) - before
        if new:
            time.sleep(0.5)  # written whole before it is read
            return sum(totals(path) for path in new)
        time.sleep(0.1)
    raise SystemExit(f"{server.name}: no callgrind dump")


def totals(path: Path) -> int:
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"{path}: no totals")


def measure(args, oha_bin: str, work: Path, fixtures: dict, answers: Path | None) -> dict:
    certs = work / "certs"
    ca = certs / "ca.crt"
    snapshot = Path(fixtures["snapshot"])
    first, second = args.requests
    results = {}
    for name in args.servers:
        out = work / f"callgrind.{name}"
        wrap = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no")
        if name == "forcegate":
            server = load.start_forcegate(work, snapshot, certs, "cg", wrap=wrap, bin_dir=args.bin_dir)
        else:
            server = load.start_baseline(
                work, certs,
                answers=answers if name != "baseline" else None,
                facts_from=snapshot if name == "facts-floor" else None,
                wrap=wrap, bin_dir=args.bin_dir,
            )
        kinds = {}
        try:
            server.wait_ready(ca)
            send(oha_bin, server, ca, Path(fixtures["bodies"]), args.warmup)
            for kind, bodies in sorted(fixtures["bodiesAlone"].items()):
                small = window(oha_bin, server, ca, Path(bodies), first, out)
                large = window(oha_bin, server, ca, Path(bodies), second, out)
                kinds[kind] = round((large - small) / (second - first))
        finally:
            server.stop()
        mix = round(sum(kinds.values()) / len(kinds))
        results[name] = {"mix": mix, "kinds": kinds}
        load.log(f"  {name}: {mix:,} instructions per request over the mix; {kinds}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", type=Path, default=load.RELEASE, help="where forcegate and baseline are")
    parser.add_argument("--servers", default=",".join(SERVERS), help=f"any of {','.join(SERVERS)}")
    parser.add_argument("--requests", default="1000,3000", help="the two windows' request counts")
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    args.servers = [s for s in args.servers.split(",") if s]
    unknown = set(args.servers) - set(SERVERS)
    if unknown:
        parser.error(f"unknown servers {sorted(unknown)}")
    args.requests = [int(n) for n in args.requests.split(",")]
    if len(args.requests) != 2 or not 0 < args.requests[0] < args.requests[1]:
        parser.error("--requests takes two counts, the first smaller")

    oha_bin = load.ensure_oha()
    if not args.skip_build:
        load.build()
    work = Path(tempfile.mkdtemp(prefix="forcegate-instructions-"))
    fixtures = load.fixtures_for(load.MAIN_SIZE, work)
    answers = None
    if any(s.endswith("floor") for s in args.servers):
        # The floors replay forcegate's answers, recorded from a plain run.
        forcegate = load.start_forcegate(work, Path(fixtures["snapshot"]), work / "certs", "answers", bin_dir=args.bin_dir)
        try:
            forcegate.wait_ready(work / "certs" / "ca.crt")
            answers = load.record_answers(forcegate, work / "certs" / "ca.crt", Path(fixtures["bodies"]), work / "answers.jsonl")
        finally:
            forcegate.stop()
    results = measure(args, oha_bin, work, fixtures, answers)
    print(json.dumps({"bin_dir": str(args.bin_dir), "instructions_per_request": results}, indent=1))
    base = results.get("baseline")
    for name, counts in results.items():
        line = f"{name:>13}: {counts['mix']:>9,} instructions per request"
        if base:
            line += f", baseline / this = {base['mix'] / counts['mix']:.1%} (by kind: "
            line += ", ".join(f"{k} {base['kinds'][k] / v:.0%}" for k, v in counts["kinds"].items()) + ")"
        print(line)


if __name__ == "__main__":
    main()
