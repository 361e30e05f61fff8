//===- Lanes.h - the runtime kernels' vector of 16 floats ------*- C++ -*-===//
//
// Plain vector code over 16 floats (Gemv.cpp, Panels.cpp, TiledRows.cpp):
// one AVX-512 register where the function is built for it, split into what
// the target has otherwise. A function built for AVX-512 passes a Vec in a
// register and one built without it in memory, so none may call the other
// with one. TPRT_CLONES builds a kernel for AVX-512, for AVX2 with FMA
// (x86-64-v3) and for the baseline (the loader picks the build for the CPU
// it runs on), and the helpers here are inlined into each build
// (TPRT_INLINE, at -O0 too). A kernel built for AVX-512 alone
// (TiledRows.cpp) keeps helpers of its own: clang refuses a call from it to
// one built without AVX-512, inlined or not.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_LANES_H
#define TPRT_LIB_LANES_H

#include <cstdint>
#include <cstring>

#define TPRT_INLINE [[gnu::always_inline]] inline
#if defined(__x86_64__)
#define TPRT_CLONES                                                            \
  __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define TPRT_CLONES
#endif

namespace tprt {
namespace detail {

constexpr int64_t kLanes = 16;
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

TPRT_INLINE Vec loadVec(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

TPRT_INLINE void storeVec(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_LANES_H
