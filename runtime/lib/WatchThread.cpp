//===- WatchThread.cpp - the watchdogs' host thread -----------------------===//

#include "WatchThread.h"

namespace tprt {
namespace common {

void WatchThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!thread.joinable())
      return;
    stopping_ = true;
  }
  wake.notify_all();
  thread.join();
}

bool WatchThread::onThread() const {
  return std::this_thread::get_id() == thread.get_id();
}

} // namespace common
} // namespace tprt
