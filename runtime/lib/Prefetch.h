//===- Prefetch.h - asking for cache lines before a read -------*- C++ -*-===//
//
// The runtime's kernels ask for what they read next while they compute:
// Gemv.cpp the next operand of a batch, TiledRows.cpp the next block of a
// weight. Addresses are integers here: a span's first line may begin before
// the object it covers and a span may lie past the end of one, where no
// pointer may point.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_PREFETCH_H
#define TPRT_LIB_PREFETCH_H

#include <cstdint>

namespace tprt {
namespace detail {

constexpr uintptr_t kLineBytes = 64;

/// The cache line holding `address`.
inline uintptr_t lineOf(uintptr_t address) {
  return address - address % kLineBytes;
}

/// Asks for one line, into the L1 (locality 3: in the register tiles,
/// prefetches to the L2 only, 1 or 2, ran up to a fifth slower).
inline void prefetchLine(uintptr_t line) {
  __builtin_prefetch(reinterpret_cast<const void *>(line), /*rw=*/0,
                     /*locality=*/3);
}

/// Asks for every line of the bytes [first, end).
inline void prefetchSpan(uintptr_t first, uintptr_t end) {
  for (uintptr_t line = lineOf(first); line < end; line += kLineBytes)
    prefetchLine(line);
}

/// The lines of a span [first, end), asked for a few at a time by the loop
/// that reads what comes before them.
struct LineStream {
  uintptr_t line, end;

  static LineStream of(uintptr_t first, uintptr_t end) {
    return {lineOf(first), end};
  }

  void fetch(int64_t lines) {
    for (int64_t i = 0; i < lines; ++i)
      if (line < end) {
        prefetchLine(line);
        line += kLineBytes;
      }
  }

  void fetchAll() {
    prefetchSpan(line, end);
    line = end;
  }
};

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_PREFETCH_H
