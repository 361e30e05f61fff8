//===- OpenMpiLeaks.cpp - ASan/LSan defaults for the MPI programs ---------===//
//
// Linked into the MPI programs (tp-run, the runtime's test programs) of a
// sanitizer build only; see the top-level CMakeLists.txt. The sanitizer
// runtime calls these hooks at start-up; ASAN_OPTIONS and LSAN_OPTIONS in the
// environment still override what they name.
//
// Open MPI allocates in MPI_Init and in its plugins and never frees it: every
// MPI process, even one rank of a run that ends cleanly, reports ~120 KB in
// ~3300 leaked allocations. A leak is suppressed only when an Open MPI
// library is on its allocation stack, so what libtprt, tp-run and the tests
// allocate themselves is still checked. The plugins have no frame pointers
// and MPI_Finalize unloads them, so only the slow unwinder reaches those
// libraries; these programs allocate little, so it costs nothing here (in
// the MLIR tools it would triple tp-compile's time).
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "fast_unwind_on_malloc=0";
}

extern "C" const char *__lsan_default_suppressions() {
  return "leak:libmpi.so\n"
         "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n";
}
