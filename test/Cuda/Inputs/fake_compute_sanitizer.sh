#!/bin/sh
# compute-sanitizer's stand-in for test/Cuda/device-script.test: runs the
# program after the tool's options (no checking) and reports no errors, so
# gpu_check.sh's memcheck step and its arguments run without a GPU.
while [ $# -gt 0 ]; do
  case "$1" in
    --tool|--report-api-errors|--print-limit) shift 2 ;;
    *) break ;;
  esac
done
echo "fake compute-sanitizer: $*"
"$@" || exit $?
echo "========= ERROR SUMMARY: 0 errors"
