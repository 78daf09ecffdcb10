"""What a load run (bench/load.py) writes: the verdicts on the budgets, the
"today's numbers" block of docs/performance.md and one entry per run
appended to bench/results.json (the plots are bench/plots.py's).

Every function here reads a run's results dict and measures nothing, so a
saved run can be reported again (`load.py --report-only`, `load.py --check`).
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.json"
DOC = ROOT / "docs" / "performance.md"
MAIN_SIZE = 10_000

# The budgets (docs/performance.md, "Targets").
RATIO_BUDGET = 0.70
P99_FACTOR = 1.5
# 87 MiB served the 10k-pod snapshot before the simpler core; it may
# cost at most 10% more.
RSS_BUDGET_MIB = 87.0 * 1.1
SCALING_BUDGET = 1.2

GENERATORS = ("oha", "wrk")
# Server names in the peak rounds, by role.
# The control is a second bare baseline: its ratio to the first is what the
# host alone does to a ratio of identical binaries (an A/A test).
PEAK_SERVERS = {
    "forcegate": "forcegate-10k",
    "baseline": "baseline",
    "floor": "answer-floor",
    "facts_floor": "facts-floor",
    "control": "baseline-again",
}
# The ratio to the bare baseline each server's summary carries.
RATIO_LABELS = {"forcegate": "ratio", "floor": "floor_ratio", "facts_floor": "facts_floor_ratio", "control": "control_ratio"}
MET, MISSED = "met", "**missed**"


# ---------------------------------------------------------------- peak


def generator_of(row: dict) -> str:
    """Runs before wrk was added measured with oha only."""
    return row.get("generator", "oha")


def round_ratios(rounds: list[dict], numerator: str, denominator: str) -> list[float]:
    """`numerator` / `denominator` within each round: on a host whose speed
    drifts during the run, their spread says how far the ratio of medians
    can be trusted. Unrounded: a round at 69.96% must not be judged 70%."""
    tops = [r["rps"] for r in rounds if r["server"] == numerator]
    bottoms = [r["rps"] for r in rounds if r["server"] == denominator]
    return [top / bottom for top, bottom in zip(tops, bottoms)]


def peak_summary(rounds: list[dict], generator: str) -> dict | None:
    """Medians of one generator's peak rounds: each server's req/s and CPU
    per request, its ratio to the bare baseline and the round by round
    ratios; None when that generator did not run."""
    rows = [r for r in rounds if generator_of(r) == generator]
    if not rows:
        return None
    base = PEAK_SERVERS["baseline"]
    summary: dict = {"generator": generator, "cpu_us_per_request": {}, "spread": {}}
    for key, name in PEAK_SERVERS.items():
        mine = [r for r in rows if r["server"] == name]
        if not mine:
            continue
        rps = [r["rps"] for r in mine]
        summary[key] = statistics.median(rps)
        summary["spread"][key] = [min(rps), max(rps)]
        cpu = [r["cpu_us_per_request"] for r in mine if r.get("cpu_us_per_request") is not None]
        if cpu:
            summary["cpu_us_per_request"][key] = statistics.median(cpu)
    for key, label in RATIO_LABELS.items():
        if key in summary and summary.get("baseline"):
            summary[label] = round(summary[key] / summary["baseline"], 4)
            prefix = "" if key == "forcegate" else f"{key}_"
            summary[f"{prefix}round_ratios"] = round_ratios(rows, PEAK_SERVERS[key], base)
    return summary


def derive(results: dict) -> dict:
    """The peak summaries recomputed from the rounds (also for runs saved
    before they were stored this way)."""
    results["peak"] = peak_summary(results["peak_rounds"], "oha")
    wrk = peak_summary(results["peak_rounds"], "wrk")
    if wrk:
        results["peak_wrk"] = wrk
    return results


# ---------------------------------------------------------------- verdicts


def ratio_status(ratios: list[float], target: float) -> str:
    """A ratio judged round by round (each round pairs servers run minutes
    apart at most): met or missed only when every round agrees."""
    if not ratios:
        return "unjudgeable (no rounds)"
    if all(r < target for r in ratios):
        return MISSED
    if all(r >= target for r in ratios):
        return MET
    return f"unjudgeable (rounds {min(ratios):.2%}–{max(ratios):.2%} straddle the budget)"


def worst_scaling(results: dict) -> tuple[str, float] | None:
    worst = None
    for scenario, by_size in results.get("decide_ns", {}).items():
        if "1000" in by_size and "100000" in by_size:
            factor = by_size["100000"] / by_size["1000"]
            if worst is None or factor > worst[1]:
                worst = (scenario, factor)
    return worst


def verdicts(results: dict) -> list[tuple[str, str, str]]:
    """(budget, measured, verdict) for each budget; throughput once per
    load generator, since it holds only if it holds under both."""
    rows = []
    for generator in GENERATORS:
        peak = results.get("peak" if generator == "oha" else "peak_wrk")
        budget = f"throughput ≥ {RATIO_BUDGET:.0%} of the bare baseline ({generator})"
        if not peak:
            rows.append((budget, "not measured", "not measured"))
            continue
        rounds = ", ".join(f"{r:.1%}" for r in peak["round_ratios"])
        measured = f"{peak['ratio']:.1%} (rounds {rounds})"
        control = peak.get("control_round_ratios")
        if control:
            measured += f"; the baseline against itself: {min(control):.1%}–{max(control):.1%}"
        rows.append((budget, measured, ratio_status(peak["round_ratios"], RATIO_BUDGET)))
    half = results["half_peak"]
    f, b = half["forcegate_median_p99_ms"], half["baseline_median_p99_ms"]
    measured = f"{f} against {b} ms at {half['rate']:.0f} req/s ({f / b:.2f}×)"
    if half.get("control_median_p99_ms"):
        measured += f"; the baseline against itself: {half['control_median_p99_ms'] / b:.2f}×"
    rows.append((
        f"p99 at half of forcegate's peak ≤ {P99_FACTOR}× the baseline's",
        measured,
        MET if f <= P99_FACTOR * b else MISSED,
    ))
    rss = next(s for s in results["sizes"] if s["pods"] == MAIN_SIZE)
    rows.append((
        f"RSS serving the 10k-pod snapshot ≤ {RSS_BUDGET_MIB:.1f} MiB",
        f"{rss['rss_after_load_mib']} MiB idle after load (peak {rss['hwm_mib']})",
        MET if rss["rss_after_load_mib"] <= RSS_BUDGET_MIB else MISSED,
    ))
    worst = worst_scaling(results)
    if worst:
        rows.append((
            f"decision at 100k pods ≤ {SCALING_BUDGET}× at 1k",
            f"{worst[1]:.2f}× (worst: {worst[0]})",
            MET if worst[1] <= SCALING_BUDGET else MISSED,
        ))
    return rows


# ---------------------------------------------------------------- markdown


def table(headers: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def noise_note(peak: dict, limit: float = 0.15) -> str:
    """What a generator's own spread of rounds lets its ratios say."""
    wide = {k: v for k, v in peak.get("spread", {}).items() if v[0] > 0 and v[1] / v[0] - 1 > limit}
    if not wide:
        return ""
    names = ", ".join(f"{k} {v[0]:.0f}–{v[1]:.0f}" for k, v in wide.items())
    return (
        f"{peak['generator']}: some servers' rounds lie more than {limit:.0%} apart ({names} req/s); "
        f"differences of that order between ratios are the host, not the code."
    )


def peak_lines(results: dict) -> list[str]:
    peaks = [p for p in (results.get("peak"), results.get("peak_wrk")) if p]

    def cell(peak: dict, key: str) -> str:
        if key not in peak:
            return "–"
        ratio = peak.get(RATIO_LABELS.get(key, ""))
        cpu = peak["cpu_us_per_request"].get(key)
        text = f"{peak[key]:.0f}"
        if ratio is not None:
            text += f" ({ratio:.1%})"
        return text + (f", {cpu} µs" if cpu is not None else "")

    rows = [
        [label] + [cell(p, key) for p in peaks]
        for label, key in (
            ("forcegate", "forcegate"),
            ("bare baseline", "baseline"),
            ("answer floor (forcegate's answers and log line, no deciding)", "floor"),
            ("facts floor (answer floor + classify and facts)", "facts_floor"),
            ("bare baseline again (A/A control)", "control"),
        )
        # Runs before the control had none.
        if any(key in p for p in peaks)
    ]
    lines = ["Peak, closed loop, median of rounds: req/s (share of the bare baseline), CPU per request.", ""]
    lines += table(["server"] + [p["generator"] for p in peaks], rows)
    notes = [n for n in (noise_note(p) for p in peaks) if n]
    return lines + ([""] + notes if notes else []) + [""]


def kinds_lines(results: dict) -> list[str]:
    kinds = results.get("kinds_alone")
    if not kinds:
        return []
    generators = [g for g in GENERATORS if any(k.get("generator", "oha") == g for k in kinds)]
    by_kind: dict = {}
    for k in kinds:
        by_kind.setdefault(k["kind"], {})[k.get("generator", "oha")] = (
            f"{k['ratio']:.0%}, {k['forcegate_cpu_us_per_request']} / {k['baseline_cpu_us_per_request']} µs"
        )
    rows = [[kind] + [cells.get(g, "–") for g in generators] for kind, cells in by_kind.items()]
    return [
        "Each kind alone, closed loop, one round: forcegate's req/s as a share of the baseline's, "
        "CPU per request forcegate / baseline.",
        "",
    ] + table(["request", *generators], rows) + [""]


def latency_lines(results: dict) -> list[str]:
    rows = {}
    for r in results["open_loop"]:
        fraction = r["fraction_of_forcegate_peak"]
        rows.setdefault(fraction, {"rate": r["offered_rps"]})["forcegate" if r["server"].startswith("forcegate") else "baseline"] = r["p99_ms"]
    half = results["half_peak"]
    lines = [
        f"p99 at fixed rates (oha, open loop, latency-corrected); at half of forcegate's peak, "
        f"{len(half['forcegate_p99_ms'])} alternating rounds: forcegate "
        f"{', '.join(map(str, half['forcegate_p99_ms']))} ms, baseline {', '.join(map(str, half['baseline_p99_ms']))} ms"
        + (f", the baseline again {', '.join(map(str, half['control_p99_ms']))} ms" if half.get("control_p99_ms") else "")
        + ".",
        "",
    ]
    return lines + table(
        ["share of forcegate's peak", "req/s", "forcegate p99 ms", "baseline p99 ms"],
        [[f"{f:.0%}", f"{v['rate']:.0f}", v.get("forcegate"), v.get("baseline")] for f, v in sorted(rows.items())],
    ) + [""]


def memory_lines(results: dict) -> list[str]:
    rows = [[s["pods"], s["ready_after_s"], s["rss_ready_mib"], s["rss_after_load_mib"], s["hwm_mib"]] for s in results["sizes"]]
    lines = table(["snapshot pods", "ready after s", "VmRSS at ready MiB", "VmRSS idle after load MiB", "VmHWM MiB"], rows)
    b = results.get("baseline_rss", {})
    return lines + ["", f"Bare baseline idle after load: {b.get('VmRSS')} MiB (peak {b.get('VmHWM')}).", ""]


def scaling_lines(results: dict) -> list[str]:
    decide = results.get("decide_ns")
    if not decide:
        return []
    sizes = sorted({int(s) for by in decide.values() for s in by})
    rows = []
    for scenario, by_size in sorted(decide.items()):
        cells = [f"{by_size[str(s)] / 1000:.2f}" if str(s) in by_size else "–" for s in sizes]
        factor = f"{by_size['100000'] / by_size['1000']:.2f}×" if "100000" in by_size and "1000" in by_size else "–"
        rows.append([scenario, *cells, factor])
    return table(["decision µs (interleaved medians)", *(f"{s // 1000}k pods" for s in sizes), "100k / 1k"], rows) + [""]


def calibration_lines(results: dict) -> list[str]:
    cal = results.get("calibration")
    if not cal:
        return []
    points = ", ".join(f"+{p['work_us']} µs {p['ratio']:.0%}" for p in cal["points"])
    budget = cal.get("budget_us_at_70")

    def us(value) -> str:
        return "?" if value is None else f"{value} µs"

    text = (
        f"Calibration: a baseline burning a fixed CPU time per request keeps, of a bare round just "
        f"before it: {points}. forcegate's peak equals a baseline burning {us(cal.get('forcegate_equivalent_us'))}"
    )
    if budget is not None:
        text += f"; {RATIO_BUDGET:.0%} leaves room for {us(budget)}"
    return [text + ".", ""]


def header(results: dict) -> str:
    m = results["machine"]
    tools = ", ".join(filter(None, [results.get("oha"), results.get("wrk")]))
    return (
        f"Run of {m['date_utc']} on {m['nproc']} × {m['cpu']}, {m['memory_gib']} GiB, kernel {m['kernel']}; "
        f"load average at start {results['load_avg_start']}, at end {results.get('load_avg_end')}; "
        f"{results['phase_seconds']} s phases, {results['connections']} connections, "
        f"{results['rounds']} alternating peak rounds; {tools}."
    )


def markdown(results: dict, note: str = "") -> str:
    """The "today's numbers" block of docs/performance.md."""
    derive(results)
    lines = [note, ""] if note else []
    lines += [header(results), ""]
    lines += table(["budget", "measured", "verdict"], [list(row) for row in verdicts(results)]) + [""]
    lines += peak_lines(results)
    lines += latency_lines(results)
    lines += kinds_lines(results)
    lines += calibration_lines(results)
    lines += memory_lines(results)
    lines += scaling_lines(results)
    return "\n".join(lines).rstrip("\n") + "\n"


def update_doc(text: str) -> None:
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    content = DOC.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{DOC} has no {begin} … {end} block")
    DOC.write_text(pattern.sub(lambda _: f"{begin}\n{text}{end}", content))


# ---------------------------------------------------------------- results.json


def load_runs() -> list[dict]:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else []


def summary(results: dict) -> dict:
    """The headline numbers of a run, in the shape every entry of
    results.json has (older entries were converted from the docs' tables)."""
    derive(results)
    half = results["half_peak"]
    rss = {s["pods"]: s["rss_after_load_mib"] for s in results["sizes"]}
    out = {
        "peak_ratio": {},
        "peak_round_ratios": {},
        "control_round_ratios": {},
        "peak_rps": {},
        "p99_half_peak_ms": {"forcegate": half["forcegate_median_p99_ms"], "baseline": half["baseline_median_p99_ms"]},
        "rss_10k_mib": rss.get(10_000),
        "rss_100k_mib": rss.get(100_000),
        "decision_us_10k": {k: round(v["10000"] / 1000, 2) for k, v in results.get("decide_ns", {}).items() if "10000" in v},
    }
    for peak in (results.get("peak"), results.get("peak_wrk")):
        if peak:
            g = peak["generator"]
            out["peak_ratio"][g] = peak["ratio"]
            out["peak_round_ratios"][g] = [round(r, 4) for r in peak["round_ratios"]]
            if peak.get("control_round_ratios"):
                out["control_round_ratios"][g] = [round(r, 4) for r in peak["control_round_ratios"]]
            out["peak_rps"][g] = {"forcegate": peak["forcegate"], "baseline": peak["baseline"]}
    worst = worst_scaling(results)
    if worst:
        out["scaling_100k_over_1k"] = round(worst[1], 3)
    return out


def commit() -> str | None:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def append_run(results: dict, path: Path = RESULTS) -> None:
    """One entry per run, oldest first."""
    runs = json.loads(path.read_text()) if path.exists() else []
    if isinstance(runs, dict):
        # A file of one run, as load.py wrote them before keeping a history.
        runs = [{"date_utc": runs.get("machine", {}).get("date_utc"), "source": "bench/load.py", "results": runs}]
    runs.append({
        "date_utc": results["machine"]["date_utc"],
        "source": "bench/load.py",
        "commit": commit(),
        "build": results.get("build", "release"),
        "machine": results["machine"],
        "summary": summary(results),
        "results": results,
    })
    path.write_text(json.dumps(runs, indent=1, default=str, ensure_ascii=False) + "\n")
