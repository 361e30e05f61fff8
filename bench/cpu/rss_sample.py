"""Run a command and sample the resident memory of its tp-run processes.

    /usr/bin/python3 bench/cpu/rss_sample.py --json out.json -- mpirun ... tp-run ...

Every --interval seconds (default 0.01) reads /proc/PID/status of every process
named tp-run and keeps, per process, the largest VmRSS, RssAnon, RssFile and
RssShmem seen, and the last VmHWM (the kernel's peak RSS). RssFile is file
pages mapped into the process (the mmap'ed checkpoint, shared libraries),
RssAnon its heap and stacks, RssShmem shared memory (MPI's shared-memory
transport). Writes {"ranks": [...per process...], "max": {...over processes...}}
in MiB and exits with the command's status. Sampling misses peaks shorter
than the interval; VmHWM does not.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

FIELDS = ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")


def read_status(pid: str) -> dict[str, float] | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in FIELDS:
            values[key] = int(rest.split()[0]) / 1024.0  # kB -> MiB
    return values


def tp_run_pids() -> list[str]:
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "tp-run":
                    pids.append(pid)
        except OSError:
            pass
    return pids


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--interval", type=float, default=0.01)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    before = set(tp_run_pids())
    proc = subprocess.Popen(command)
    peaks: dict[str, dict[str, float]] = {}
    while proc.poll() is None:
        for pid in tp_run_pids():
            if pid in before:
                continue
            values = read_status(pid)
            if not values:
                continue
            peak = peaks.setdefault(pid, {})
            for key, value in values.items():
                peak[key] = value if key == "VmHWM" else max(peak.get(key, 0.0), value)
        time.sleep(args.interval)
    ranks = [dict(pid=int(pid), **v) for pid, v in sorted(peaks.items())]
    overall = {k: max((r.get(k, 0.0) for r in ranks), default=0.0) for k in FIELDS}
    with open(args.json, "w") as f:
        json.dump({"ranks": ranks, "max": overall, "interval_s": args.interval}, f, indent=2)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
