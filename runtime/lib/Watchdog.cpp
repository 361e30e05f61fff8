//===- Watchdog.cpp - a time limit on the blocking MPI collectives --------===//
//
// A CPU collective blocks in MPI until every rank has arrived, so a rank
// that never arrives (stopped, looping, its node gone quiet) would hang all
// the others for good. A host thread, started by tprt_init when there is
// more than one rank, wakes now and then and ends every rank (tprt_abort:
// a message naming the rank and the collective, then MPI_Abort) once the
// collective in flight has waited TPRT_COMM_TIMEOUT_S seconds.
//
// Not the cuda runtime's Watchdog.cpp: that one follows a queue of
// asynchronous collectives through CUDA events and NCCL's error state, none
// of which exists here; the main thread is itself blocked in MPI, so all
// there is to watch is one "in flight since". What the two do share (the
// setting, its default, the message, which failing thread ends the ranks)
// is in Common.cpp, and the thread's start and stop in WatchThread.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"
#include "WatchThread.h"

#include <algorithm>
#include <sstream>

using namespace tprt::detail;

namespace {

struct Watchdog {
  tprt::common::WatchThread thread;
  double timeout = 0;
  // The collective in flight (guarded by thread.mutex); none while `call`
  // is null.
  const char *call = nullptr;
  const char *mpiCall = nullptr;
  int64_t count = 0;
  double since = 0;
};

Watchdog &watchdog() {
  // Never destroyed (see WatchThread).
  static Watchdog *instance = new Watchdog;
  return *instance;
}

void watch() {
  Watchdog &d = watchdog();
  // A wake-up costs nothing next to a forward pass; a hang ends at most a
  // tenth of the timeout late.
  auto period =
      std::chrono::duration<double>(std::clamp(d.timeout / 10, 0.01, 1.0));
  std::unique_lock<std::mutex> lock(d.thread.mutex);
  while (!d.thread.stopping()) {
    if (d.call && now() - d.since > d.timeout) {
      std::ostringstream message;
      message << d.call << ": " << d.mpiCall << " of " << d.count << " floats "
              << tprt::common::commTimeoutReason(d.timeout);
      lock.unlock();
      tprt_abort(message.str().c_str());
    }
    d.thread.wake.wait_for(lock, period);
  }
}

} // namespace

void tprt::detail::startWatchdog(double timeout) {
  Watchdog &d = watchdog();
  d.thread.start(
      [&] {
        d.timeout = timeout;
        d.call = nullptr;
      },
      watch);
}

void tprt::detail::stopWatchdog() { watchdog().thread.stop(); }

bool tprt::detail::onWatchdogThread() { return watchdog().thread.onThread(); }

WatchedCollective::WatchedCollective(const char *call, const char *mpiCall,
                                     int64_t count) {
  Watchdog &d = watchdog();
  std::lock_guard<std::mutex> lock(d.thread.mutex);
  d.call = call;
  d.mpiCall = mpiCall;
  d.count = count;
  d.since = now();
}

WatchedCollective::~WatchedCollective() {
  Watchdog &d = watchdog();
  std::lock_guard<std::mutex> lock(d.thread.mutex);
  d.call = nullptr;
}
