#!/usr/bin/env python3
"""Checks every gpu.launch_func of a lowered cuda module against the limits of
a CUDA launch: block x, y <= 1024, z <= 64, x*y*z <= 1024; grid x < 2^31,
y, z <= 65535; all dimensions constants >= 1; and that the kernel it names is
in the cubin of the gpu.binary it names (an ELF symbol of that name).

    check_launch_dims.py lowered.mlir

Prints "launches: N, max threads per block T" and "binaries: B, every kernel
found" and exits 0, or names the first bad launch and exits 1.
"""
import re
import sys

CONST = re.compile(r"(%\w+) = llvm\.mlir\.constant\((-?\d+) : (?:index|i64|i32)\)")
LAUNCH = re.compile(r"gpu\.launch_func\s+@(\w+)::@(\w+) blocks in \(([^)]*)\) threads in \(([^)]*)\)")
BINARY = re.compile(r'gpu\.binary @(\w+) .*?bin = "((?:[^"\\]|\\.)*)"')


def unescape(text):
    """The bytes of an MLIR string literal (\\XX hex escapes, \\\\)."""
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] == "\\":
                out.append(0x5C)
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
        else:
            out += text[i].encode("latin-1")
            i += 1
    return bytes(out)


def elf_names(blob):
    """The NUL-terminated names in an ELF image (its string tables)."""
    return set(blob.split(b"\0"))


def main(path):
    text = open(path).read()
    binaries = {m.group(1): elf_names(unescape(m.group(2))) for m in BINARY.finditer(text)}
    launches, most = 0, 0
    for chunk in text.split("llvm.func @")[1:]:
        consts = {m.group(1): int(m.group(2)) for m in CONST.finditer(chunk)}
        for m in LAUNCH.finditer(chunk):
            name = f"@{m.group(1)}::@{m.group(2)}"
            if m.group(2).encode() not in binaries.get(m.group(1), set()):
                print(f"{name}: no kernel {m.group(2)} in a gpu.binary @{m.group(1)}")
                return 1
            try:
                grid = [consts[v.strip()] for v in m.group(3).split(",")]
                block = [consts[v.strip()] for v in m.group(4).split(",")]
            except KeyError as e:
                print(f"{name}: launch dimension {e} is not a constant")
                return 1
            launches += 1
            threads = block[0] * block[1] * block[2]
            most = max(most, threads)
            bad = (min(grid + block) < 1 or block[0] > 1024 or block[1] > 1024
                   or block[2] > 64 or threads > 1024 or grid[0] >= 2**31
                   or grid[1] > 65535 or grid[2] > 65535)
            if bad:
                print(f"{name}: invalid launch: blocks {grid}, threads {block}")
                return 1
    print(f"launches: {launches}, max threads per block {most}")
    print(f"binaries: {len(binaries)}, every kernel found")
    return 0 if launches else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
