#!/usr/bin/env bash
# Turns test/Cuda/device/gpu_bundle.sh's folder into one that runs here,
# without a GPU, so test/Cuda/device-script.test can run
# test/Cuda/device/gpu_check.sh through every step: the launcher, the unit
# tests and libtprt_cuda built over the host stand-ins for cudart/cuBLAS/NCCL
# (runtime/cuda/test/FakeCuda.cpp), each
# model recompiled from its m.mlir with test/lib/tp-compile-emulated.sh (its
# kernels' loops run on the host), and a probe and a gemm_peak that only say so.
#   fake_bundle.sh BUNDLE BUILD
set -euo pipefail
bundle=$1 build=$2
external="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/../shared/external"
t="$build/runtime/cuda/test"
cp "$t/tp-run-cuda-fake" "$bundle/bin/tp-run-cuda"
cp "$t/tprt-cuda-fake-unittests" "$bundle/bin/tprt-cuda-unittests"
cp "$t/libtprt_cuda_fake.so" "$bundle/lib/"
printf '#!/bin/sh\necho "fake probe: host stand-ins, no GPU"\n' > "$bundle/bin/tprt-cuda-probe"
# gemm_peak GEMM_LOG --json FILE: a made-up best rate, so the report has a
# ratio; gemm_peak GEMM_LOG --cold: the number of calls replayed.
cat > "$bundle/bin/gemm_peak" <<'SH'
#!/bin/sh
echo "fake gemm_peak${2:+ $2}: $(wc -l < "$1") calls"
[ "$2" = --cold ] || echo '{"same_dtype_tflops": 1.0}' > "$3"
SH
chmod +x "$bundle/bin/tprt-cuda-probe" "$bundle/bin/gemm_peak"
for so in "$bundle"/models/*/m.*.so; do
  flags=() mlir=m.mlir
  case "$(basename "$so")" in
    m.cuda2.so) flags=(--tp-size 2) ;;
    m.bf16.so) flags=(--dtype bf16) ;;
    m.inline.so) mlir=m.inline.mlir ;;
    m.masked.f32.so) mlir=m.masked.mlir ;;
    m.masked.bf16.so) mlir=m.masked.mlir flags=(--dtype bf16) ;;
    # The emulation's kernel loops have row kernels either way.
    m.masked_rows0.bf16.so) mlir=m.masked.mlir flags=(--dtype bf16) ;;
    m.masked_stack0.bf16.so) mlir=m.masked.mlir flags=(--dtype bf16 --stack-weights=false) ;;
  esac
  src="$(dirname "$so")/$mlir"
  # A corpus graph stays where it is (gpu_bundle.sh).
  [ -f "$(dirname "$so")/source" ] && src="$external/$(cat "$(dirname "$so")/source")"
  bash "$(dirname "${BASH_SOURCE[0]}")/../../lib/tp-compile-emulated.sh" \
    "$build/bin" "$src" --backend cuda "${flags[@]}" -o "$so"
done
