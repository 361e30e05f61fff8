//===- report.h - a launcher's run report ------------------------*- C++
//-*-===//
//
// What tp-run prints (and writes with --report-json) after the forward
// passes: phase times, forward times, collectives, GEMM rate and memory
// (library tprt_loader; docs/runtime.md describes every field).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_REPORT_H
#define TPRT_REPORT_H

#include "tprt/manifest.h"
#include "tprt/tprt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tprt {

struct RunReport {
  RunReport() = default;
  /// The run's description: `model` (as given) with `manifest`, on
  /// `worldSize` ranks; `warmup` untimed and `iterations` timed passes.
  RunReport(std::string model, const Manifest &manifest, int worldSize,
            int warmup, int iterations);

  std::string model;
  std::string backend;
  int64_t tpSize = 0;
  int worldSize = 1;
  std::vector<int64_t> inputShape;
  int warmup = 0;
  int iterations = 0;
  double loadSeconds = 0, sliceSeconds = 0;
  /// Per timed iteration (the slowest rank's).
  std::vector<double> forwardSeconds;
  /// Rank 0's, over the timed iterations.
  tprt_counters counters{};
  /// MiB, the largest over ranks: peak resident set, this rank's weight
  /// slices, the heap's growth over the forward passes.
  double peakRssMib = 0, weightsLocalMib = 0, activationsMib = 0;
};

/// The block tp-run prints on stdout.
std::string reportText(const RunReport &report);
/// The --report-json file's contents.
std::string reportJson(const RunReport &report);

/// Bytes the malloc heap has taken from the system (sbrk arena and mmapped
/// chunks).
double heapBytes();
/// The process's peak resident set (getrusage ru_maxrss), MiB.
double peakRssMib();

} // namespace tprt

#endif // TPRT_REPORT_H
