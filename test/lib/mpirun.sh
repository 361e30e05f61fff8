#!/usr/bin/env bash
# %mpirun in the lit tests: timeout 120 mpirun --allow-run-as-root
# --oversubscribe ARGS (root needs the first option, more ranks than cores
# the second; the timeout turns a hang into a failure), run once more when
# it failed with Open MPI 4.x's own exit race: "mpirun has exited due to
# process rank N with PID 0 ... exiting improperly", the rank's PID never
# recorded by mpirun (open-mpi/ompi#7833, a bug of the 4.x runtime that was
# not fixed there). It hit about one CI run in three here, in tests whose
# ranks had done everything right; any other failure, and a second one, is
# returned as it is. Output is passed on as it comes (stderr is also kept
# to look for that message), so a run that is repeated shows both attempts.
set -u
err=$(mktemp "${TMPDIR:-/tmp}/mpirun-stderr.XXXXXX")
trap 'rm -f "$err"' EXIT
for attempt in 1 2; do
  {
    timeout 120 mpirun --allow-run-as-root --oversubscribe "$@" 2>&1 1>&3 3>&- |
      tee "$err" >&2 3>&-
    rc=${PIPESTATUS[0]}
  } 3>&1
  if ((rc != 0 && attempt == 1)) && grep -q "with PID 0 on" "$err" &&
    grep -q "exiting improperly" "$err"; then
    echo "mpirun.sh: Open MPI's exit race (open-mpi/ompi#7833); running again" >&2
    continue
  fi
  exit "$rc"
done
