//===- Runtime.cpp - libtprt start-up, errors and counters ----------------===//
//
// tprt_init/tprt_finalize own the MPI set-up of one rank: MPI_Init when the
// launcher has not done it, a duplicated world communicator (freed on
// finalize), BLAS threads, the collectives' watchdog (Watchdog.cpp). Failures of the launcher-side calls return a
// status and leave their message in tprt_last_error; compiled-code calls go
// through fail(), which ends every rank.
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

static void setBlasThreads() {
  int threads = 1;
  if (const char *value = std::getenv("TPRT_BLAS_THREADS")) {
    int requested = std::atoi(value);
    if (requested > 0)
      threads = requested;
  }
  openblas_set_num_threads(threads);
}

extern "C" tprt_status tprt_init(int *argc, char ***argv) {
  RuntimeState &s = state();
  if (s.initialized)
    return TPRT_OK;
  double commTimeout = 0;
  if (tprt_status st = tprt::common::readCommTimeout(commTimeout);
      st != TPRT_OK)
    return st;
  if (tprt_status st = tprt::common::startMpi(s.finalized, argc, argv,
                                              s.ownsMpi, s.mpiThreadMultiple);
      st != TPRT_OK)
    return st;

  std::string error;
  s.comm = Communicator::dupWorld(error);
  if (!s.comm)
    return setError(TPRT_ERR_COMM, "tprt_init", error);
  MPI_Comm_rank(s.comm->get(), &s.rank);
  MPI_Comm_size(s.comm->get(), &s.worldSize);

  setBlasThreads();
  // With one rank no collective waits for anyone.
  if (s.worldSize > 1)
    startWatchdog(commTimeout);
  s.counters = tprt_counters{};
  tprt::common::lastError().clear();
  s.initialized = true;
  return TPRT_OK;
}

extern "C" tprt_status tprt_finalize(void) {
  RuntimeState &s = state();
  if (!s.initialized)
    return setError(TPRT_ERR_STATE, "tprt_finalize",
                    "the runtime is not initialised");
  stopWatchdog();
  s.comm.reset();
  s.initialized = false;
  s.finalized = true;
  return tprt::common::finishMpi(s.ownsMpi);
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
  tprt::common::enterAbort();
  tprt::common::printAbortMessage(
      tprt::common::rankForMessages(state().initialized, state().rank),
      message);
  // MPI_Abort from the watchdog's thread needs MPI_THREAD_MULTIPLE; below it
  // (MPI started by an embedding program), end this rank only: mpirun ends
  // the others when a rank exits non-zero.
  if (!state().mpiThreadMultiple && onWatchdogThread())
    std::_Exit(1);
  tprt::common::endAllRanks();
}
