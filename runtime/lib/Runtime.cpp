//===- Runtime.cpp - libtprt start-up, errors and counters ----------------===//
//
// tprt_init/tprt_finalize own the MPI set-up of one rank: MPI_Init when the
// launcher has not done it, a duplicated world communicator (freed on
// finalize), BLAS threads, the collectives' watchdog (Watchdog.cpp). Failures
// of the launcher-side calls return a status and leave their message in
// tprt_last_error; compiled-code calls go through fail(), which ends every
// rank.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include <cstdlib>

extern "C" void openblas_set_num_threads(int numThreads);

namespace tprt {
namespace detail {

RuntimeState &state() {
  static RuntimeState instance;
  return instance;
}

} // namespace detail
} // namespace tprt

using namespace tprt::detail;

static void setBlasThreads(RuntimeState &s) {
  int threads = 1;
  if (const char *value = std::getenv("TPRT_BLAS_THREADS")) {
    int requested = std::atoi(value);
    if (requested > 0)
      threads = requested;
  }
  openblas_set_num_threads(threads);
  s.blasThreads = threads;
}

extern "C" tprt_status tprt_init(int *argc, char ***argv) {
  RuntimeState &s = state();
  if (s.initialized)
    return TPRT_OK;
  if (tprt_status st = tprt::common::startRank(s, argc, argv, s.comm);
      st != TPRT_OK)
    return st;
  setBlasThreads(s);
  // With one rank no collective waits for anyone.
  if (s.worldSize > 1)
    startWatchdog(s.commTimeout);
  tprt::common::startedRank(s);
  return TPRT_OK;
}

extern "C" tprt_status tprt_finalize(void) {
  RuntimeState &s = state();
  if (tprt_status st = tprt::common::checkRunning(s); st != TPRT_OK)
    return st;
  stopWatchdog();
  s.comm.reset();
  return tprt::common::finishRank(s);
}

extern "C" int tprt_rank(void) { return state().rank; }

extern "C" int tprt_world_size(void) { return state().worldSize; }

extern "C" const char *tprt_last_error(void) {
  return tprt::common::lastError().c_str();
}

extern "C" void tprt_get_counters(tprt_counters *out) {
  if (out)
    *out = state().counters;
}

extern "C" void tprt_reset_counters(void) {
  state().counters = tprt_counters{};
}

extern "C" void tprt_abort(const char *message) {
  tprt::common::abortRanks(state(), message, onWatchdogThread(), nullptr);
}
