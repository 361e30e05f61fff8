//===- RuntimeState.h - libtprt's per-process state -------------*- C++ -*-===//
//
// Internal to libtprt: the communicator the runtime owns, the counters, the
// last error, and the helpers every entry point uses to report a failure.
// One rank per process; the compiled model calls the runtime from one thread.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_RUNTIMESTATE_H
#define TPRT_LIB_RUNTIMESTATE_H

// libtprt is built with hidden visibility; the C ABI is what it exports.
#pragma GCC visibility push(default)
#include "tprt/tprt.h"
#pragma GCC visibility pop

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace tprt {
namespace detail {

/// A duplicate of MPI_COMM_WORLD, freed when the runtime ends. Errors on it
/// are returned (MPI_ERRORS_RETURN), so every failing call can say which
/// collective failed before the ranks are ended.
class Communicator {
public:
  /// Duplicates MPI_COMM_WORLD; on failure returns null and sets `error`.
  static std::unique_ptr<Communicator> dupWorld(std::string &error);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  MPI_Comm get() const { return comm; }

private:
  explicit Communicator(MPI_Comm comm) : comm(comm) {}
  MPI_Comm comm;
};

struct RuntimeState {
  bool initialized = false;
  bool finalized = false;
  /// Whether tprt_init called MPI_Init (then tprt_finalize calls
  /// MPI_Finalize); a launcher that initialised MPI itself finalises it.
  bool ownsMpi = false;
  int rank = 0;
  int worldSize = 1;
  std::unique_ptr<Communicator> comm;
  tprt_counters counters{};
  std::string lastError;
};

RuntimeState &state();

/// Records "<call>: <message>" as the last error and returns `code`; for the
/// launcher-side functions, which return a status.
tprt_status setError(tprt_status code, const char *call,
                     const std::string &message);

/// Records "<call>: <message>", prints it with the rank and ends every rank;
/// for the compiled-code entry points, which cannot return a status.
[[noreturn]] void fail(const char *call, const std::string &message);

/// "[a, b, c]".
std::string formatList(const int64_t *values, int64_t count);

/// The text of an MPI error code.
std::string mpiErrorString(int code);

/// Seconds since an arbitrary origin (steady clock).
inline double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_RUNTIMESTATE_H
