//===- Watchdog.cpp - collectives in flight, watched from a host thread ---===//
//
// A forward pass issues its collectives and goes on: NCCL's kernels run in
// stream order, so nothing on the host has to wait for them. What must not
// happen is a hang when a peer never arrives or a link fails. A host thread
// (as PyTorch's ProcessGroupNCCL does) watches an event recorded after each
// collective: once the one before it has finished, a collective has
// TPRT_COMM_TIMEOUT_S seconds (default 60) to finish; when that passes, or
// ncclCommGetAsyncError reports an error, the thread ends every rank with a
// message naming the collective (tprt_abort: ncclCommAbort, then MPI_Abort),
// even while the main thread is blocked waiting for the stream.
//
//===----------------------------------------------------------------------===//

#include "../lib/WatchThread.h"
#include "CudaState.h"

#include <deque>

using namespace tprt::cuda;

namespace {

struct Watched {
  const char *call;
  std::string what;
  Event done;
  double issued;
};

struct Watchdog {
  tprt::common::WatchThread thread;
  // Guarded by thread.mutex.
  std::deque<Watched> inFlight;
  std::vector<Event> freeEvents;
};

Watchdog &watchdog() {
  // Never destroyed (see WatchThread).
  static Watchdog *instance = new Watchdog;
  return *instance;
}

/// Ends every rank (tprt_abort). The message is built here rather than in
/// the shared last-error string, which the main thread may be writing.
[[noreturn]] void end(const Watched &w, const std::string &why) {
  std::string message = std::string(w.call) + ": " + w.what + " " + why;
  tprt_abort(message.c_str());
  __builtin_unreachable(); // tprt_abort ends the process
}

void watch(int device, ncclComm_t comm, double timeout) {
  Watchdog &d = watchdog();
  cudaSetDevice(device);
  // When the collective at the front could start: when it was issued, or
  // when the one before it finished, whichever is later.
  double since = 0;
  std::unique_lock<std::mutex> lock(d.thread.mutex);
  while (true) {
    if (d.inFlight.empty()) {
      if (d.thread.stopping())
        return;
      d.thread.wake.wait(lock);
      continue;
    }
    // Only this thread removes elements, and adding one at the back keeps
    // the deque's references valid: read the front without the lock.
    Watched &front = d.inFlight.front();
    lock.unlock();
    since = std::max(since, front.issued);
    cudaError_t rc = cudaEventQuery(front.done.get());
    // A sticky error from any kernel surfaces here too; the collective is
    // the first place the host looks.
    if (rc != cudaSuccess && rc != cudaErrorNotReady)
      end(front,
          std::string("failed (or work before it): ") + cudaGetErrorString(rc));
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm, &async);
    if (async != ncclSuccess && async != ncclInProgress)
      end(front,
          std::string("failed: NCCL error ") + ncclGetErrorString(async));
    if (rc == cudaErrorNotReady && now() - since > timeout)
      end(front, tprt::common::commTimeoutReason(timeout));
    lock.lock();
    if (rc == cudaSuccess) {
      since = now();
      d.freeEvents.push_back(std::move(front.done));
      d.inFlight.pop_front();
    } else {
      // Nobody waits on this thread: a millisecond's delay in noticing a
      // finished collective costs nothing.
      d.thread.wake.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
}

} // namespace

void tprt::cuda::startWatchdog() {
  State &s = state();
  watchdog().thread.start(
      [] {}, [device = s.device, comm = s.nccl(),
              timeout = s.commTimeout] { watch(device, comm, timeout); });
}

bool tprt::cuda::onWatchdogThread() { return watchdog().thread.onThread(); }

void tprt::cuda::stopWatchdog() {
  Watchdog &d = watchdog();
  d.thread.stop();
  d.freeEvents.clear();
}

void tprt::cuda::watchCollective(const char *call, std::string what) {
  if (state().capturing)
    return;
  Watchdog &d = watchdog();
  Event done;
  {
    std::lock_guard<std::mutex> lock(d.thread.mutex);
    if (!d.freeEvents.empty()) {
      done = std::move(d.freeEvents.back());
      d.freeEvents.pop_back();
    }
  }
  if (!done) {
    cudaEvent_t event = nullptr;
    check(call, cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
    done.reset(event);
  }
  check(call, cudaEventRecord(done.get(), stream(call)), "cudaEventRecord");
  {
    std::lock_guard<std::mutex> lock(d.thread.mutex);
    d.inFlight.push_back({call, std::move(what), std::move(done), now()});
  }
  d.thread.wake.notify_all();
}
