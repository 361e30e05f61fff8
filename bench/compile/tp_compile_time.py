#!/usr/bin/python3
"""Whole-process tp-compile time against the depth of the model.

    bench/compile/tp_compile_time.py [LAYERS ...]        default LAYERS: 2 12 48

Models (python -m tpmlir.build, untimed, seq 128, random weights): the toy
(tiny_gpt2, d 64, 2 layers), GPT-2-small shapes (gpt2_small: d 768, 12 heads,
ffn 3072) and a Llama-style model (llama_like: d 512, 8 heads, 4 kv heads,
ffn 1408, RMSNorm, SwiGLU, RoPE) at each LAYERS. Each is compiled REPS times
by

    tp-compile m.mlir --tp-size 2 --backend cpu -o m.so --mlir-timing

under /usr/bin/time: the wall time and peak RSS of the whole process, and the
steps tp-compile's timing report names (parse, sharding, lowering, translate
to LLVM IR, LLVM optimisation, object, link). At BASELINE_LAYERS the same is
run with --outline-blocks=false (the forward pass as one straight-line
function), interleaved with the outlined runs. Medians over the reps; the
table and the targets are written, with the command, date, machine and
versions, to docs/bench-tp-compile.md.

Environment: REPS (default 3), BASELINE_LAYERS (default "2 12"; 48 layers
without outlining take minutes), BUILD (default build), DOC (default
docs/bench-tp-compile.md; "-" skips it), KEEP (a directory to keep the models
in).
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
TP_COMPILE = os.path.join(BUILD, "bin", "tp-compile")
REPS = int(os.environ.get("REPS", "3"))
BASELINE = [int(n) for n in os.environ.get("BASELINE_LAYERS", "2 12").split()]
DOC = os.environ.get("DOC", os.path.join(ROOT, "docs", "bench-tp-compile.md"))
STAGES = ["parse", "sharding", "lowering", "translate to LLVM IR",
          "LLVM optimisation", "object", "link"]
# "  0.0228 (  1.4%)    0.0228 (  1.4%)  parse": user then wall time, or wall alone.
TIMING_LINE = re.compile(r"^((?:\s*[0-9.]+ \(\s*[0-9.]+%\))+)\s+(\S.*?)\s*$")


def build_model(work, preset, layers):
    path = os.path.join(work, f"{preset}.{layers}.mlir")
    if not os.path.exists(path):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        subprocess.run([sys.executable, "-m", "tpmlir.build", "--preset", preset,
                        "--layers", str(layers), "--seq", "128", "-o", path],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    return path


def compile_once(model, outline):
    out = model[:-len(".mlir")] + (".so" if outline else ".inline.so")
    rss_file = model + ".time"
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", rss_file, TP_COMPILE, model,
           "--tp-size", "2", "--backend", "cpu", "-o", out, "--mlir-timing",
           "--mlir-timing-display=tree"]
    if not outline:
        cmd.append("--outline-blocks=false")
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"tp_compile_time: {' '.join(cmd)} failed:\n{proc.stderr}")
    stages = {}
    for line in proc.stderr.splitlines():
        m = TIMING_LINE.match(line)
        if m and m.group(2) in STAGES and m.group(2) not in stages:
            stages[m.group(2)] = float(re.findall(r"([0-9.]+) \(", m.group(1))[-1])
    with open(rss_file) as f:
        rss_kib = int(f.read().split()[-1])
    return {"wall": wall, "rss": rss_kib / 1024, **stages}


def median(runs, key):
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else float("nan")


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [2, 12, 48]
    if not os.access(TP_COMPILE, os.X_OK):
        sys.exit(f"tp_compile_time: {TP_COMPILE} missing: run scripts/setup.sh")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("tp_compile_time: /usr/bin/time missing (Debian package time)")
    work = os.environ.get("KEEP") or tempfile.mkdtemp(prefix="tp-compile-time.")
    os.makedirs(work, exist_ok=True)
    configs = [("tiny_gpt2", 2, True)]
    for preset in ("gpt2_small", "llama_like"):
        for n in sizes:
            configs.append((preset, n, True))
    configs += [(p, n, False) for (p, n, _) in list(configs) if n in BASELINE]
    models = {(p, n): build_model(work, p, n) for (p, n, _) in configs}
    runs = {c: [] for c in configs}
    for rep in range(REPS):
        order = configs if rep % 2 == 0 else list(reversed(configs))
        for c in order:
            runs[c].append(compile_once(models[c[:2]], c[2]))
            print(f"# rep {rep + 1}/{REPS} {c[0]} {c[1]} layers "
                  f"{'outlined' if c[2] else 'inline'}: "
                  f"{runs[c][-1]['wall']:.2f} s", file=sys.stderr, flush=True)
    if not os.environ.get("KEEP"):
        shutil.rmtree(work)

    rows = ["| model | layers | blocks | wall (s) | parse | sharding | lowering "
            "| translate | LLVM opt | object | link | peak RSS (MiB) |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in sorted(configs, key=lambda c: (c[0] != "tiny_gpt2", c[0], c[1], not c[2])):
        r = runs[c]
        cells = [f"{median(r, s):.2f}" for s in STAGES]
        rows.append(f"| {c[0]} | {c[1]} | {'outlined' if c[2] else 'inline'} | "
                    f"{median(r, 'wall'):.2f} | " + " | ".join(cells) +
                    f" | {median(r, 'rss'):.0f} |")

    def wall(preset, n, outline=True):
        c = (preset, n, outline)
        return median(runs[c], "wall") if c in runs else None

    targets = ["| target | measured | verdict |", "|---|---|---|"]

    def target(name, value, limit, unit="s"):
        if value is None:
            return
        verdict = "met" if value <= limit else "not met"
        targets.append(f"| {name} | {value:.2f} {unit} | {verdict} |")

    target("2-layer toy (tiny_gpt2) <= 1 s", wall("tiny_gpt2", 2), 1.0)
    target("GPT-2-small 12 layers <= 5 s", wall("gpt2_small", 12), 5.0)
    target("GPT-2-small 48 layers <= 6 s", wall("gpt2_small", 48), 6.0)
    w12, w48 = wall("gpt2_small", 12), wall("gpt2_small", 48)
    if w12 and w48:
        target("GPT-2-small 48 / 12 layers <= 1.3", w48 / w12, 1.3, "x")

    report = "\n".join(rows) + "\n\n" + "\n".join(targets) + "\n"
    print(report)
    if DOC == "-":
        return
    version = subprocess.run([TP_COMPILE, "--version"], capture_output=True,
                             text=True).stdout
    llvm = re.search(r"LLVM version ([0-9.]+)", version)
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    cmd = "bench/compile/tp_compile_time.py" + "".join(f" {a}" for a in sys.argv[1:])
    with open(DOC, "w") as f:
        f.write(f"""# Whole-process `tp-compile` time against depth

Generated by `{cmd}` (REPS={REPS}, BASELINE_LAYERS="{' '.join(map(str, BASELINE))}")
on {time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores (load average
{load} at the end), LLVM {llvm.group(1) if llvm else '?'}, tp-mlir {git}; overwritten on
every run, do not edit by hand.

Each model is `python -m tpmlir.build --preset P --layers N --seq 128`, compiled by
`tp-compile m.mlir --tp-size 2 --backend cpu --mlir-timing`: wall time and peak
RSS of the whole process (`/usr/bin/time`), and the steps of tp-compile's timing
report in seconds (sharding: import and `tp-shard`; lowering: the MLIR pipeline down
to the LLVM dialect, `tp-outline-repeated-blocks` included; then LLVM). "inline" is
`--outline-blocks=false`, the forward pass as one function. Medians of the reps, the
configurations interleaved (the order flips every rep).

{report}""")
    print(f"tp_compile_time: wrote {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
