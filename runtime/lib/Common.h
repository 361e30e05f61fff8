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

/// How long a collective may wait for the other ranks before every rank is
/// ended, unless TPRT_COMM_TIMEOUT_S says otherwise: generous, since a slow
/// rank is not a stopped one.
constexpr double kDefaultCommTimeoutSeconds = 60;

/// What either runtime keeps of its rank, besides its backend's handles.
struct RankState {
  bool initialized = false;
  bool finalized = false;
  /// Whether tprt_init called MPI_Init (then tprt_finalize calls
  /// MPI_Finalize); a launcher that initialised MPI itself finalises it.
  bool ownsMpi = false;
  /// Whether MPI runs at MPI_THREAD_MULTIPLE, so that the watchdog's thread
  /// may call MPI_Abort.
  bool mpiThreadMultiple = false;
  int rank = 0;
  int worldSize = 1;
  /// Seconds a collective may wait (TPRT_COMM_TIMEOUT_S).
  double commTimeout = kDefaultCommTimeoutSeconds;
  tprt_counters counters{};
};

/// tprt_init's first steps on either backend: TPRT_COMM_TIMEOUT_S, MPI
/// (startMpi), the runtime's duplicate of the world into `comm`, rank and
/// world size. The backend's own steps follow, then startedRank.
tprt_status startRank(RankState &s, int *argc, char ***argv,
                      std::unique_ptr<Communicator> &comm);
/// tprt_init's last step: counters zeroed, the last error cleared.
void startedRank(RankState &s);
/// tprt_finalize's first step: fails unless the runtime runs.
tprt_status checkRunning(const RankState &s);
/// tprt_finalize's last step, once the backend let go of its handles.
tprt_status finishRank(RankState &s);

/// tprt_abort on either backend: the message with the rank on stderr, then
/// `abortBackend` (may be null), then every rank ended (MPI_Abort). The
/// first caller does it, a later one waits to be ended (enterAbort). From
/// the watchdog's thread below MPI_THREAD_MULTIPLE only this rank ends
/// (_exit(1)): mpirun ends the others when a rank exits non-zero.
[[noreturn]] void abortRanks(const RankState &s, const char *message,
                             bool onWatchdogThread, void (*abortBackend)());

/// tprt_abort's message line on stderr.
void printAbortMessage(int rank, const char *message);

/// Ends every rank (MPI_Abort while MPI runs), else this process.
[[noreturn]] void endAllRanks();

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
