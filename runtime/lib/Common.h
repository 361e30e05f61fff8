//===- Common.h - what libtprt and libtprt_cuda share -----------*- C++ -*-===//
//
// Internal to the runtimes: both libraries (CPU and cuda) compile Common.cpp
// and Views.cpp, so the error reporting, the MPI start-up and the checks of
// what compiled code passes in are written once and say the same thing on
// either backend. Each library keeps its own copy (hidden visibility), so
// the last error stays per library.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_COMMON_H
#define TPRT_LIB_COMMON_H

// The runtimes are built with hidden visibility; the C ABI is what they
// export.
#pragma GCC visibility push(default)
#include "tprt/tprt.h"
#pragma GCC visibility pop

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace tprt {
namespace common {

/// What tprt_last_error returns.
std::string &lastError();

/// Records "<call>: <message>" as the last error and returns `code`; for the
/// launcher-side functions, which return a status.
tprt_status setError(tprt_status code, const char *call,
                     const std::string &message);

/// Records "<call>: <message>", prints it with the rank and ends every rank
/// (tprt_abort); for the compiled-code entry points, which cannot return a
/// status.
[[noreturn]] void fail(const char *call, const std::string &message);

/// "[a, b, c]".
std::string formatList(const int64_t *values, int64_t count);

/// The text of an MPI error code.
std::string mpiErrorString(int code);

/// The rank tprt_abort prints: `rank` once tprt_init has run; before (or
/// after it failed) the one the launcher put in the environment, else 0.
int rankForMessages(bool initialized, int rank);

/// tprt_init's first steps, before the backend's own: refuses a finalized
/// runtime or MPI, and initialises MPI asking for MPI_THREAD_MULTIPLE unless
/// the launcher did (`ownsMpi`); `threadMultiple` says whether MPI runs at
/// that level (the watchdog may then call MPI_Abort from its thread).
tprt_status startMpi(bool finalized, int *argc, char ***argv, bool &ownsMpi,
                     bool &threadMultiple);

/// A duplicate of MPI_COMM_WORLD, freed when destroyed (unless MPI is
/// finalized by then). Errors on it are returned (MPI_ERRORS_RETURN), so
/// every failing call can say which collective failed before the ranks are
/// ended.
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

/// MPI_Finalize when the runtime called MPI_Init.
tprt_status finishMpi(bool ownsMpi);

/// tprt_abort's message line on stderr.
void printAbortMessage(int rank, const char *message);

/// Ends every rank (MPI_Abort while MPI runs), else this process.
[[noreturn]] void endAllRanks();

/// How long a collective may wait for the other ranks before every rank is
/// ended, unless TPRT_COMM_TIMEOUT_S says otherwise: generous, since a slow
/// rank is not a stopped one.
constexpr double kDefaultCommTimeoutSeconds = 60;

/// TPRT_COMM_TIMEOUT_S, or the default when it is not set; an error (for
/// tprt_init to return) when it is set but not a positive number.
tprt_status readCommTimeout(double &seconds);

/// What a collective's watchdog adds after "<call>: <what>" when the time
/// ran out.
std::string commTimeoutReason(double seconds);

/// tprt_abort's first step. Both a watchdog thread and the main thread may
/// fail (the main one on the communicator the other just aborted): the
/// first caller returns, a later one waits to be ended with the process.
void enterAbort();

/// Seconds since an arbitrary origin (steady clock).
inline double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace common
} // namespace tprt

#endif // TPRT_LIB_COMMON_H
