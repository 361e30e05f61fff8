# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tp_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lib", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.use_default_substitutions()

# Debian's python with numpy; the first python3 on PATH may lack it.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
config.environment["PYTHONPATH"] = os.path.join(config.tp_src_root, "python")
# The LLVM whose tools the python oracles run (tpmlir.execute, the corpus
# reference): the one the tests use.
config.environment["TPMLIR_LLVM_PREFIX"] = os.path.dirname(config.llvm_tools_dir)

runner_utils = os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")
# Lowers the oracle's output to LLVM and runs it: upstream passes only.
lower = ("mlir-opt --convert-elementwise-to-linalg "
         "--one-shot-bufferize=bufferize-function-boundaries "
         "--convert-linalg-to-loops --convert-scf-to-cf "
         "--expand-strided-metadata --lower-affine "
         "--finalize-memref-to-llvm --convert-math-to-llvm "
         "--convert-math-to-libm --convert-vector-to-llvm "
         "--convert-arith-to-llvm --convert-func-to-llvm "
         "--convert-cf-to-llvm --reconcile-unrealized-casts")
run = ("mlir-runner -e main -entry-point-result=void "
       "-shared-libs=%s" % runner_utils)
config.substitutions.append(("%tp-lower", lower))
config.substitutions.append(("%mlir-run", run))
config.substitutions.append(("%python", python))
config.substitutions.append(("%tp_src_root", config.tp_src_root))
config.substitutions.append(("%tp_obj_root", config.tp_obj_root))
# tp-compile with the cuda pipeline's host emulation (test/lib).
config.substitutions.append(("%tp-compile-emulated", "bash %s %s" % (
    os.path.join(config.tp_src_root, "test", "lib", "tp-compile-emulated.sh"),
    config.tp_tools_dir)))

# A sanitizer build (scripts/asan.sh): every report must fail its test. ASan
# and UBSan exit with 1 by default, which `not` takes for the failure a test
# expects; an abort is a crash, which `not` (without --crash) and
# Runtime/Inputs/expect_exit.py reject. allow_user_poisoning=0: LLVM's
# headers poison BumpPtrAllocator slabs under ASan, and Debian's LLVM and MLIR
# libraries, built without it, allocate from them without unpoisoning, so
# every MLIR tool would stop at a false use-after-poison (that poisoning needs
# all of LLVM instrumented). Options set by the caller come after these and
# win. The MPI programs add theirs (test/sanitizers/OpenMpiLeaks.cpp).
sanitizers = config.llvm_use_sanitizer.lower().split(";")
if "address" in sanitizers or "undefined" in sanitizers:
    config.environment.setdefault(
        "ASAN_SYMBOLIZER_PATH",
        os.path.join(config.llvm_tools_dir, "llvm-symbolizer"))
    for var, options in [
            ("ASAN_OPTIONS", "abort_on_error=1:allow_user_poisoning=0"),
            ("UBSAN_OPTIONS", "abort_on_error=1:print_stacktrace=1")]:
        config.environment[var] = ":".join(
            o for o in [options, os.environ.get(var, "")] if o)
    # Tests whose stand-in GEMMs (naive loops, FakeCuda.cpp) take minutes
    # once instrumented, and check no runtime path the others do not.
    config.available_features.add("sanitizer")
    # Cuda/device-script.test: the GPU bundle of a sanitized build holds its
    # instrumented tools (13 MB where the plain ones take 3) and is never
    # carried to a device; the plain build's run checks the carry limit.
    config.environment["MAX_MB"] = "72"

# %python_dlopen: python that loads the project's shared objects (ctypes).
# In an ASan build they need the ASan runtime, which a sanitized executable
# carries and python does not: preload it. Leaks are not checked there
# (python's own allocations at exit are not this project's).
python_dlopen = python
if "address" in sanitizers:
    import subprocess
    asan_rt = subprocess.run(
        [config.host_cxx, "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True).stdout.strip()
    python_dlopen = "env LD_PRELOAD=%s ASAN_OPTIONS=%s:detect_leaks=0 %s" % (
        asan_rt, config.environment["ASAN_OPTIONS"], python)
# Before %python, which would otherwise replace its prefix.
config.substitutions.insert(0, ("%python_dlopen", python_dlopen))

tool_dirs = [config.tp_tools_dir, config.llvm_tools_dir]
tools = ["tp-opt", "tp-compile", "mlir-opt", "mlir-runner", "not", "count", "llvm-nm", "llvm-readelf"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Transformer graphs other projects wrote (../shared/external/SOURCES.md),
# read in place: they are not part of the repository, so a clone without
# that folder skips the tests that REQUIRE: external-corpus.
external = os.path.normpath(
    os.path.join(config.tp_src_root, "..", "shared", "external"))
if os.path.isdir(external):
    config.available_features.add("external-corpus")
    config.substitutions.append(("%external", external))

# Tests of many minutes (the large corpus graphs end to end) run only when
# asked: lit --param long-tests=1 ...
if lit_config.params.get("long-tests", "0") not in ("", "0"):
    config.available_features.add("long-tests")

# A compiler-only build (-DTP_ENABLE_RUNTIME=OFF) has no runtime to test.
if not config.tp_enable_runtime:
    config.excludes.append("Runtime")
else:
    config.available_features.add("runtime")

# Runtime tests (test/Runtime): tp-run, and the unit tests, MPI test and fake
# models built in runtime/test.
llvm_config.add_tool_substitutions(["tp-run"], tool_dirs)
tprt_test_dir = os.path.join(config.tp_obj_root, "runtime", "test")
config.substitutions.append(("%tprt_test_dir", tprt_test_dir))
config.substitutions.append(
    ("%tprt_unittests", os.path.join(tprt_test_dir, "tprt-unittests")))

# MPI runs: mpirun with a timeout and the options root and oversubscription
# need, run again on Open MPI 4.x's exit race only (test/lib/mpirun.sh).
if shutil.which("mpirun") and config.tp_enable_runtime:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", "bash " + os.path.join(
        config.tp_src_root, "test", "lib", "mpirun.sh")))

# The cuda backend (docs/gpu.md): `cuda-toolkit` when libtprt_cuda and
# tp-run-cuda were built, `cuda` only when a GPU is usable here too (the
# probe finds one through the CUDA runtime); GPU tests REQUIRE: cuda.
if config.tp_have_cuda and config.tp_enable_runtime:
    import subprocess
    config.available_features.add("cuda-toolkit")
    llvm_config.add_tool_substitutions(["tp-run-cuda"], tool_dirs)
    config.substitutions.append(("%cuda_root", config.cuda_toolkit_root))
    config.substitutions.append(
        ("%tprt_cuda_unittests", os.path.join(
            config.tp_obj_root, "runtime", "cuda", "test",
            "tprt-cuda-unittests")))
    config.substitutions.append(
        ("%tprt_cuda_fake_unittests", os.path.join(
            config.tp_obj_root, "runtime", "cuda", "test",
            "tprt-cuda-fake-unittests")))
    config.substitutions.append(
        ("%tp_run_cuda_fake", os.path.join(
            config.tp_obj_root, "runtime", "cuda", "test", "tp-run-cuda-fake")))
    probe = os.path.join(config.tp_obj_root, "runtime", "cuda", "test",
                         "tprt-cuda-probe")
    try:
        found = subprocess.run([probe], capture_output=True, text=True,
                               timeout=60)
        if found.returncode == 0 and "GPU " in found.stdout:
            config.available_features.add("cuda")
    except (OSError, subprocess.SubprocessError):
        pass
