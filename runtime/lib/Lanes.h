//===- Lanes.h - the runtime kernels' vector of 16 floats ------*- C++ -*-===//
//
// Plain vector code over 16 floats (Gemv.cpp, TiledRows.cpp): one AVX-512
// register where the function is built for it, split into what the target
// has otherwise. Each file keeps its own loads and stores: a function built
// for AVX-512 passes a Vec in a register and one built without it in
// memory, so none may call the other with one.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_LANES_H
#define TPRT_LIB_LANES_H

#include <cstdint>

namespace tprt {
namespace detail {

constexpr int64_t kLanes = 16;
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_LANES_H
