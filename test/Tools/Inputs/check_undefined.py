"""Checks that a shared object needs no symbol its dependencies lack.

    check_undefined.py LLVM-NM LLVM-READELF MODEL.so [MODEL.so ...]

For each model: the undefined dynamic symbols (llvm-nm --undefined-only)
must each be defined by a library of its DT_NEEDED closure, found the way
the loader finds them (the object's RUNPATH/RPATH, then the system's
directories). Weak undefined symbols may stay unresolved. This is the check
that catches a model linked on a machine whose libraries happen to provide
a symbol (`__truncsfbf2`) that a fresh machine's do not. Prints one line per
model, exits 1 if any model misses a symbol.
"""

import os
import re
import subprocess
import sys

SYSTEM_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
               "/usr/lib64", "/lib", "/usr/lib"]


def run(tool, *args):
    return subprocess.run([tool, *args], check=True, capture_output=True,
                          text=True).stdout


def dynamic_section(readelf, path):
    """(needed, search dirs) from the object's dynamic section."""
    text = run(readelf, "--dynamic", path)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", text)
    dirs = []
    for paths in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.+?)\]", text):
        origin = os.path.dirname(os.path.abspath(path))
        dirs += [d.replace("$ORIGIN", origin) for d in paths.split(":") if d]
    return needed, dirs


def closure(readelf, path):
    """Every library the loader maps for `path`, breadth first."""
    found, queue, missing = [], [path], []
    seen = set()
    while queue:
        current = queue.pop(0)
        needed, dirs = dynamic_section(readelf, current)
        for name in needed:
            if name in seen:
                continue
            seen.add(name)
            for d in dirs + SYSTEM_DIRS:
                candidate = os.path.join(d, name)
                if os.path.exists(candidate):
                    found.append(candidate)
                    queue.append(candidate)
                    break
            else:
                missing.append(name)
    return found, missing


def symbols(nm, path, *flags):
    text = run(nm, "--dynamic", "--no-sort", *flags, path)
    result = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            # "                 U name" or "0000 T name"; versions after '@'.
            kind, name = parts[-2], parts[-1].split("@")[0]
            result[name] = kind
    return result


def main():
    nm, readelf, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = False
    for model in models:
        libraries, missing = closure(readelf, model)
        defined = set()
        for library in libraries:
            defined |= set(symbols(nm, library, "--defined-only"))
        undefined = symbols(nm, model, "--undefined-only")
        lacking = sorted(name for name, kind in undefined.items()
                         if kind not in ("w", "v") and name not in defined)
        name = os.path.basename(model)
        if missing:
            print(f"{name}: DT_NEEDED not found: {', '.join(missing)}")
            failed = True
        if lacking:
            print(f"{name}: undefined, and no needed library defines it: "
                  f"{', '.join(lacking)}")
            failed = True
        else:
            print(f"{name}: {len(undefined)} undefined symbols, all defined "
                  f"by its {len(libraries)} needed libraries")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
