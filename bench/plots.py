"""The load run's plots in docs/img/, drawn from a run's results dict."""

from __future__ import annotations

from pathlib import Path

from report import MAIN_SIZE, P99_FACTOR, RATIO_BUDGET, ROOT, RSS_BUDGET_MIB

IMG = ROOT / "docs" / "img"


def plot(results: dict, img: Path = IMG) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img.mkdir(parents=True, exist_ok=True)
    half = results["half_peak"]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, style in (("forcegate", "o-"), ("baseline", "s--")):
        points = sorted((r for r in results["open_loop"] if r["server"].startswith(name)), key=lambda r: r["offered_rps"])
        xs = [r["offered_rps"] for r in points]
        for key, alpha in (("p50_ms", 0.6), ("p99_ms", 1.0), ("p99_9_ms", 0.35)):
            ax.plot(xs, [r[key] for r in points], style, alpha=alpha, label=f"{name} {key[:-3].replace('_', '.')}")
    ax.axvline(half["rate"], color="grey", linestyle="--", linewidth=0.8, label="50% of forcegate peak")
    budget = P99_FACTOR * half["baseline_median_p99_ms"]
    ax.axhline(budget, color="grey", linestyle=":", linewidth=1, label=f"p99 budget: {P99_FACTOR}× baseline's at 50%")
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
    left.axhline(RSS_BUDGET_MIB, color="grey", linestyle=":", label=f"budget at 10k: {RSS_BUDGET_MIB:.1f} MiB")
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
    right.set_yscale("log")
    right.set_xlabel("pods in cluster")
    right.set_ylabel("µs per decision (classify + facts + policies)")
    right.set_title("decision time vs cluster size (interleaved medians)")
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(img / "scaling.png", dpi=110)
    plt.close(fig)


def plot_calibration(results: dict, img: Path) -> None:
    import matplotlib.pyplot as plt

    cal, peak, half = results["calibration"], results["peak"], results["half_peak"]
    points = cal["points"]
    xs = [0] + [p["work_us"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.plot(xs, [100] + [p["ratio"] * 100 for p in points], "s--", label="baseline + fixed CPU work")
    left.axhline(peak["ratio"] * 100, color="C1", label="forcegate (oha, same run)")
    if results.get("peak_wrk"):
        left.axhline(results["peak_wrk"]["ratio"] * 100, color="C4", linestyle="-.", label="forcegate (wrk, same run)")
    left.axhline(peak["floor_ratio"] * 100, color="C2", linestyle="-.", label="answer floor")
    if "facts_floor_ratio" in peak:
        left.axhline(peak["facts_floor_ratio"] * 100, color="C3", linestyle="--", label="facts floor")
    left.axhline(RATIO_BUDGET * 100, color="grey", linestyle=":", label=f"budget {RATIO_BUDGET:.0%}")
    left.set_xlabel("CPU work added per request (µs)")
    left.set_ylabel("peak throughput, % of bare baseline")
    left.set_title("What per-request work costs here (closed loop)")
    left.set_ylim(0, 105)
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    right.plot(xs, [half["baseline_median_p99_ms"]] + [p["p99_ms_at_half"] for p in points], "s--",
               label="baseline + fixed CPU work (bare: median of rounds)")
    right.axhline(half["forcegate_median_p99_ms"], color="C1", label="forcegate (median of rounds)")
    right.axhline(P99_FACTOR * half["baseline_median_p99_ms"], color="grey", linestyle=":", label=f"budget: {P99_FACTOR}× baseline")
    right.set_xlabel("CPU work added per request (µs)")
    right.set_ylabel("p99 ms")
    right.set_title(f"p99 at {cal['half_rate']:.0f} req/s (half of forcegate's peak)")
    # The heaviest calibration servers overload at this rate (seconds of
    # queueing): a linear axis would flatten everything that matters.
    right.set_yscale("log")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(img / "calibration.png", dpi=110)
    plt.close(fig)
