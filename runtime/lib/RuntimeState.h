//===- RuntimeState.h - libtprt's per-process state -------------*- C++ -*-===//
//
// Internal to libtprt: the communicator the runtime owns and the counters;
// the last error and the failure helpers are Common.h's.
// One rank per process; the compiled model calls the runtime from one thread.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_RUNTIMESTATE_H
#define TPRT_LIB_RUNTIMESTATE_H

#include "Common.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tprt {
namespace detail {

using common::Communicator;

/// The shared part (Common.h) and the communicator the runtime owns.
struct RuntimeState : common::RankState {
  std::unique_ptr<Communicator> comm;
  /// OpenBLAS's threads as tprt_init set them (TPRT_BLAS_THREADS; 1 before
  /// it, whatever OpenBLAS's own default). The runtime's own GEMM kernels
  /// (Gemv.h, TiledRows.h) run on one thread: with more, every product goes
  /// to OpenBLAS.
  int blasThreads = 1;
};

RuntimeState &state();

/// The time limit on collectives (Watchdog.cpp): a thread that ends every
/// rank when a collective has waited `timeout` seconds for the others.
/// Started by tprt_init with more than one rank, stopped by tprt_finalize.
void startWatchdog(double timeout);
void stopWatchdog();
bool onWatchdogThread();

/// Marks this rank as blocked in a collective for the guard's lifetime;
/// `call` and `mpiCall` name it in the watchdog's message ("<call>:
/// <mpiCall> of <count> floats did not finish ...").
class WatchedCollective {
public:
  WatchedCollective(const char *call, const char *mpiCall, int64_t count);
  ~WatchedCollective();
  WatchedCollective(const WatchedCollective &) = delete;
  WatchedCollective &operator=(const WatchedCollective &) = delete;
};

using common::fail;
using common::formatList;
using common::mpiErrorString;
using common::now;
using common::setError;

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_RUNTIMESTATE_H
