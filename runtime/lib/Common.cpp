//===- Common.cpp - what libtprt and libtprt_cuda share
//--------------------===//

#include "Common.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace tprt {
namespace common {

std::string &lastError() {
  static std::string instance;
  return instance;
}

tprt_status setError(tprt_status code, const char *call,
                     const std::string &message) {
  lastError() = std::string(call) + ": " + message;
  return code;
}

void fail(const char *call, const std::string &message) {
  setError(TPRT_ERR_INVALID_ARGUMENT, call, message);
  tprt_abort(lastError().c_str());
  __builtin_unreachable(); // tprt_abort ends the process
}

std::string formatList(const int64_t *values, int64_t count) {
  std::ostringstream os;
  os << '[';
  for (int64_t i = 0; i < count; ++i)
    os << (i ? ", " : "") << values[i];
  os << ']';
  return os.str();
}

std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

int rankForMessages(bool initialized, int rank) {
  if (initialized)
    return rank;
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

tprt_status startMpi(bool finalized, int *argc, char ***argv, bool &ownsMpi,
                     bool &threadMultiple) {
  if (finalized)
    return setError(TPRT_ERR_STATE, "tprt_init",
                    "the runtime was finalized; it cannot start again");
  int mpiInitialized = 0, mpiFinalized = 0;
  MPI_Initialized(&mpiInitialized);
  MPI_Finalized(&mpiFinalized);
  if (mpiFinalized)
    return setError(TPRT_ERR_STATE, "tprt_init", "MPI was already finalized");
  if (!mpiInitialized) {
    int provided = 0;
    // The watchdog's thread may call MPI_Abort while the main thread waits
    // in a collective (below THREAD_MULTIPLE, Open MPI 4.1 then sometimes
    // garbles its abort notice).
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
      return setError(TPRT_ERR_COMM, "tprt_init",
                      "MPI_Init_thread failed: " + mpiErrorString(rc));
    ownsMpi = true;
  }
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  threadMultiple = level == MPI_THREAD_MULTIPLE;
  return TPRT_OK;
}

std::unique_ptr<Communicator> Communicator::dupWorld(std::string &error) {
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc != MPI_SUCCESS) {
    error = "MPI_Comm_dup failed: " + mpiErrorString(rc);
    return nullptr;
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::unique_ptr<Communicator>(new Communicator(comm));
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

tprt_status finishMpi(bool ownsMpi) {
  if (ownsMpi) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS)
      return setError(TPRT_ERR_COMM, "tprt_finalize",
                      "MPI_Finalize failed: " + mpiErrorString(rc));
  }
  return TPRT_OK;
}

tprt_status startRank(RankState &s, int *argc, char ***argv,
                      std::unique_ptr<Communicator> &comm) {
  if (tprt_status st = readCommTimeout(s.commTimeout); st != TPRT_OK)
    return st;
  if (tprt_status st =
          startMpi(s.finalized, argc, argv, s.ownsMpi, s.mpiThreadMultiple);
      st != TPRT_OK)
    return st;
  std::string error;
  comm = Communicator::dupWorld(error);
  if (!comm)
    return setError(TPRT_ERR_COMM, "tprt_init", error);
  MPI_Comm_rank(comm->get(), &s.rank);
  MPI_Comm_size(comm->get(), &s.worldSize);
  return TPRT_OK;
}

void startedRank(RankState &s) {
  s.counters = tprt_counters{};
  lastError().clear();
  s.initialized = true;
}

tprt_status checkRunning(const RankState &s) {
  if (!s.initialized)
    return setError(TPRT_ERR_STATE, "tprt_finalize",
                    "the runtime is not initialised");
  return TPRT_OK;
}

tprt_status finishRank(RankState &s) {
  s.initialized = false;
  s.finalized = true;
  return finishMpi(s.ownsMpi);
}

void abortRanks(const RankState &s, const char *message, bool onWatchdogThread,
                void (*abortBackend)()) {
  enterAbort();
  printAbortMessage(rankForMessages(s.initialized, s.rank), message);
  if (abortBackend)
    abortBackend();
  if (!s.mpiThreadMultiple && onWatchdogThread)
    std::_Exit(1);
  endAllRanks();
}

tprt_status readCommTimeout(double &seconds) {
  seconds = kDefaultCommTimeoutSeconds;
  const char *value = std::getenv("TPRT_COMM_TIMEOUT_S");
  if (!value)
    return TPRT_OK;
  char *end = nullptr;
  double parsed = std::strtod(value, &end);
  // !(parsed > 0) also refuses NaN.
  if (end == value || *end != '\0' || !(parsed > 0) || std::isinf(parsed))
    return setError(TPRT_ERR_INVALID_ARGUMENT, "tprt_init",
                    std::string("TPRT_COMM_TIMEOUT_S='") + value +
                        "' is not a positive number of seconds");
  seconds = parsed;
  return TPRT_OK;
}

std::string commTimeoutReason(double seconds) {
  std::ostringstream os;
  os << "did not finish within " << seconds
     << " s (TPRT_COMM_TIMEOUT_S); a rank did not reach it or the link is "
        "down";
  return os.str();
}

void enterAbort() {
  static std::atomic<bool> aborting{false};
  if (aborting.exchange(true))
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
}

void printAbortMessage(int rank, const char *message) {
  std::fprintf(stderr, "tprt[rank %d]: %s\n", rank,
               message ? message : "aborted");
  std::fflush(stderr);
}

void endAllRanks() {
  int mpiInitialized = 0, mpiFinalized = 0;
  MPI_Initialized(&mpiInitialized);
  MPI_Finalized(&mpiFinalized);
  if (mpiInitialized && !mpiFinalized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

} // namespace common
} // namespace tprt
