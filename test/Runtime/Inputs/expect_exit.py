#!/usr/bin/env python3
"""Runs a command with a deadline and checks its exit code.

  expect_exit.py CODE [--timeout SECONDS] -- COMMAND...

Prints the command's stdout and stderr (merged) and then
"expect_exit: exit N", and exits 0 only if the command ended by itself
within the deadline (default 60 s) with exit code CODE. A hang is reported
as "expect_exit: TIMEOUT" and fails, unlike `not timeout ...`, which would
accept it.
"""
import subprocess
import sys


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    expected = int(options[0])
    timeout = float(options[options.index("--timeout") + 1]) \
        if "--timeout" in options else 60.0
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as hung:
        sys.stdout.write((hung.output or b"").decode(errors="replace"))
        print(f"expect_exit: TIMEOUT after {timeout:g} s")
        return 1
    sys.stdout.write(done.stdout.decode(errors="replace"))
    print(f"expect_exit: exit {done.returncode}")
    return 0 if done.returncode == expected else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
