//===- WatchThread.h - the watchdogs' host thread ---------------*- C++ -*-===//
//
// Both runtimes watch their collectives from a host thread (lib/Watchdog.cpp:
// the one blocking MPI call in flight; cuda/Watchdog.cpp: the queue of
// asynchronous NCCL calls). What they watch differs; starting, stopping and
// recognising that thread does not, and is written here once.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_WATCHTHREAD_H
#define TPRT_LIB_WATCHTHREAD_H

#include <condition_variable>
#include <mutex>
#include <thread>

namespace tprt {
namespace common {

/// One watchdog thread and the lock its state is read under. A runtime keeps
/// it in a never-destroyed object: a process that exits without
/// tprt_finalize must not destroy a running std::thread (std::terminate).
class WatchThread {
public:
  /// Guards `stopping()` and whatever the caller's loop watches.
  std::mutex mutex;
  /// Wakes the loop: stop() notifies it, as may the caller.
  std::condition_variable wake;

  /// Unless the thread runs already: calls `prepare` (under `mutex`), then
  /// runs `loop` on a new thread. The loop returns once stopping() is true.
  /// (A template: a std::function would add its type information to what
  /// the runtimes export.)
  template <typename Prepare, typename Loop>
  void start(Prepare prepare, Loop loop) {
    std::lock_guard<std::mutex> lock(mutex);
    if (thread.joinable())
      return;
    stopping_ = false;
    prepare();
    thread = std::thread(std::move(loop));
  }
  /// Tells the loop to stop, wakes it and joins the thread (if it runs).
  void stop();
  /// Whether the caller is the watchdog's thread.
  bool onThread() const;
  /// Read under `mutex`.
  bool stopping() const { return stopping_; }

private:
  std::thread thread;
  bool stopping_ = false;
};

} // namespace common
} // namespace tprt

#endif // TPRT_LIB_WATCHTHREAD_H
