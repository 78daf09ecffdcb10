#!/usr/bin/env python3
"""Profile-guided release build of forcegate and the bare baseline.

    python3 bench/pgo.py             # train and build, ~45 minutes on 2 cores from an empty target/
    python3 bench/load.py --pgo      # the load run on what it built

Both servers go through the same steps, so the load run's forcegate/baseline
ratio stays a like-for-like comparison:
  1. finds llvm-profdata of rustc's own LLVM major version (installs
     Debian's llvm-<major> with apt-get when it is missing and it can);
  2. builds them instrumented (-Cprofile-generate) into target/pgo-train;
  3. trains each on the load mix and on each kind of it alone, aimed at a
     1k-pod snapshot: not the 10k-pod bodies the load run measures;
  4. merges the two profiles into target/pgo/forcegate.profdata;
  5. builds them again with -Cprofile-use into target/pgo/release, the same
     binaries `bench/load.py` builds (so `--pgo` finds them up to date).

Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402  (the load run's build, servers, fixtures and oha driver)

TRAIN_TARGET = load.TARGET / "pgo-train"
TRAIN_PODS = 1_000


def llvm_major() -> str:
    out = subprocess.run(["rustc", "-vV"], check=True, capture_output=True, text=True).stdout
    found = re.search(r"^LLVM version: (\d+)", out, re.MULTILINE)
    if not found:
        raise SystemExit(f"rustc -vV names no LLVM version:\n{out}")
    return found.group(1)


def profdata_major(tool: str) -> str | None:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    found = re.search(r"LLVM version (\d+)", out)
    return found.group(1) if found else None


def ensure_llvm_profdata() -> str:
    """llvm-profdata reading the profile format of rustc's LLVM: an older
    one refuses the profiles, a newer one may write what rustc cannot read."""
    major = llvm_major()
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], check=True, capture_output=True, text=True)
    candidates = [
        shutil.which(f"llvm-profdata-{major}"),
        f"/usr/lib/llvm-{major}/bin/llvm-profdata",
        *Path(sysroot.stdout.strip()).glob("lib/rustlib/*/bin/llvm-profdata"),
        shutil.which("llvm-profdata"),
    ]
    for tool in filter(None, candidates):
        if profdata_major(str(tool)) == major:
            return str(tool)
    if shutil.which("apt-get") and os.geteuid() == 0:
        load.log(f"llvm-profdata {major} not found: apt-get install llvm-{major}")
        load.run(["apt-get", "install", "-y", "--no-install-recommends", f"llvm-{major}"])
        tool = f"/usr/lib/llvm-{major}/bin/llvm-profdata"
        if profdata_major(tool) == major:
            return tool
    raise SystemExit(
        f"rustc uses LLVM {major}; install llvm-profdata {major} "
        f"(Debian/Ubuntu: llvm-{major}; rustup: llvm-tools) and run again"
    )


def cargo_build(command: list[str], target_dir: Path, flag: str) -> Path:
    """`command` into `target_dir` with `flag` added to RUSTFLAGS."""
    env = os.environ | {"CARGO_TARGET_DIR": str(target_dir), "RUSTFLAGS": load.rustflags_with(flag)}
    load.run(command, cwd=load.ROOT, env=env)
    return target_dir / "release"


def train(release: Path, raw: Path, seconds: float, work: Path) -> None:
    """Each server on the mix and on each kind alone; one profile each."""
    load.RELEASE = release
    oha_bin = load.ensure_oha()
    # The fixture writer is instrumented too: keep its profile out.
    os.environ["LLVM_PROFILE_FILE"] = str(work / "fixtures-%p.profraw")
    fixtures = load.fixtures_for(TRAIN_PODS, work)
    del os.environ["LLVM_PROFILE_FILE"]
    bodies = [Path(fixtures["bodies"]), *map(Path, fixtures["bodiesAlone"].values())]
    certs = work / "certs"
    ca = certs / "ca.crt"
    starts = (
        lambda: load.start_forcegate(work, Path(fixtures["snapshot"]), certs, "train"),
        lambda: load.start_baseline(work, certs),
    )
    for start in starts:
        server = start()
        try:
            server.wait_ready(ca)
            for each in bodies:
                load.oha(oha_bin, server, ca, each, seconds)
        finally:
            server.stop()
        # The profile is written at exit: a killed server leaves none.
        if server.proc.returncode != 0:
            raise SystemExit(f"{server.name} exited with {server.proc.returncode}; see {server.log_path}")
    profiles = sorted(raw.glob("*.profraw"))
    if len(profiles) != len(starts):
        raise SystemExit(f"expected {len(starts)} profiles in {raw}, found {len(profiles)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="length of each training load")
    args = parser.parse_args()
    profdata = ensure_llvm_profdata()
    raw = TRAIN_TARGET / "profiles"
    # What training runs: the two servers and the fixture writer.
    train_build = load.build_command("release", ("baseline", "bench_fixtures"))
    release = cargo_build(train_build, TRAIN_TARGET, f"-Cprofile-generate={raw}")
    # Build scripts ran instrumented too: start from an empty directory.
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="forcegate-pgo-") as work:
        train(release, raw, max(1.0, args.seconds), Path(work))
    load.PGO_PROFILE.parent.mkdir(parents=True, exist_ok=True)
    load.run([profdata, "merge", "-o", str(load.PGO_PROFILE), *map(str, sorted(raw.glob("*.profraw")))])
    # The very build `load.py --pgo` asks for, so it finds it up to date.
    load.use_pgo_build()
    load.build()
    load.log(f"built {load.PGO_TARGET / 'release'}; measure it with: python3 bench/load.py --pgo")


if __name__ == "__main__":
    main()
