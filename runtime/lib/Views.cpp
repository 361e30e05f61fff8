//===- Views.cpp - reading compiled code's memrefs, for both runtimes -----===//

#include "Views.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace tprt {
namespace common {

Layout layoutOf(const MatrixView &v) {
  int64_t rows = v.sizes[0], cols = v.sizes[1];
  // A dimension of size 1 has no meaningful stride.
  bool innerUnit = cols == 1 || v.strides[1] == 1;
  bool outerUnit = rows == 1 || v.strides[0] == 1;
  if (innerUnit && (rows == 1 || v.strides[0] >= std::max<int64_t>(1, cols)))
    return Layout::RowMajor;
  if (outerUnit && (cols == 1 || v.strides[1] >= std::max<int64_t>(1, rows)))
    return Layout::ColumnMajor;
  return Layout::Other;
}

int64_t rowMajorLd(const MatrixView &v) {
  return v.sizes[0] == 1 ? std::max<int64_t>(1, v.sizes[1]) : v.strides[0];
}

int64_t columnMajorLd(const MatrixView &v) {
  return v.sizes[1] == 1 ? std::max<int64_t>(1, v.sizes[0]) : v.strides[1];
}

MatrixView matrixView(const tprt_memref2d_f32 *m) {
  return {m->aligned + m->offset,
          {m->sizes[0], m->sizes[1]},
          {m->strides[0], m->strides[1]}};
}

static std::string describe(const char *name, const MatrixView &v) {
  std::ostringstream os;
  os << name << " " << formatList(v.sizes, 2) << " (strides "
     << formatList(v.strides, 2) << ")";
  return os.str();
}

GemmShape gemmShape(const char *call, const MatrixView &a, const MatrixView &b,
                    const MatrixView &c, bool transA, bool transB) {
  int64_t m = transA ? a.sizes[1] : a.sizes[0];
  int64_t k = transA ? a.sizes[0] : a.sizes[1];
  int64_t kB = transB ? b.sizes[1] : b.sizes[0];
  int64_t n = transB ? b.sizes[0] : b.sizes[1];
  if (k != kB || c.sizes[0] != m || c.sizes[1] != n) {
    std::ostringstream os;
    os << "shapes do not agree: op(a) is " << m << "x" << k << ", op(b) is "
       << kB << "x" << n << ", c is " << c.sizes[0] << "x" << c.sizes[1]
       << " (trans_a " << transA << ", trans_b " << transB << "; "
       << describe("a", a) << ", " << describe("b", b) << ", "
       << describe("c", c) << ")";
    fail(call, os.str());
  }
  return {m, n, k};
}

Buffer readBuffer(const char *call, const char *name,
                  const tprt_unranked_memref *memref) {
  if (!memref || !memref->descriptor)
    fail(call, std::string("descriptor of ") + name + " is null");
  if (memref->rank < 0)
    fail(call, std::string(name) + " has a negative rank " +
                   std::to_string(memref->rank));
  // A ranked descriptor: allocated, aligned, offset, sizes[rank],
  // strides[rank].
  const char *base = static_cast<const char *>(memref->descriptor);
  float *aligned;
  int64_t offset;
  std::memcpy(&aligned, base + sizeof(float *), sizeof(float *));
  std::memcpy(&offset, base + 2 * sizeof(float *), sizeof(int64_t));
  Buffer buffer;
  buffer.rank = memref->rank;
  buffer.sizes =
      reinterpret_cast<const int64_t *>(base + 2 * sizeof(float *) + 8);
  buffer.strides = buffer.sizes + buffer.rank;
  for (int64_t i = 0; i < buffer.rank; ++i) {
    if (buffer.sizes[i] < 0)
      fail(call, std::string(name) + " has a negative size " +
                     formatList(buffer.sizes, buffer.rank));
    buffer.numElements *= buffer.sizes[i];
  }
  // Contiguous: each stride is the product of the sizes after it (a
  // dimension of size 1 may have any stride).
  int64_t expected = 1;
  for (int64_t i = buffer.rank - 1; i >= 0; --i) {
    if (buffer.sizes[i] != 1 && buffer.strides[i] != expected)
      fail(call, std::string(name) + " is not contiguous (sizes " +
                     formatList(buffer.sizes, buffer.rank) + ", strides " +
                     formatList(buffer.strides, buffer.rank) + ")");
    expected *= buffer.sizes[i];
  }
  if (!aligned && buffer.numElements != 0)
    fail(call, std::string(name) + " has a null data pointer");
  buffer.data = aligned ? aligned + offset : nullptr;
  return buffer;
}

int64_t checkGatheredShape(const char *call, const Buffer &in,
                           const Buffer &out, int64_t dim, int64_t worldSize) {
  bool shapesAgree = in.rank == out.rank && dim >= 0 && dim < in.rank;
  for (int64_t i = 0; shapesAgree && i < in.rank; ++i)
    shapesAgree =
        out.sizes[i] == (i == dim ? in.sizes[i] * worldSize : in.sizes[i]);
  if (!shapesAgree) {
    std::ostringstream os;
    os << "out " << formatList(out.sizes, out.rank) << " is not in "
       << formatList(in.sizes, in.rank) << " gathered from " << worldSize
       << " ranks along dimension " << dim;
    fail(call, os.str());
  }
  int64_t outer = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= in.sizes[i];
  return outer;
}

void countAllReduce(tprt_counters &c, const Buffer &buffer, double seconds) {
  ++c.all_reduce_calls;
  c.all_reduce_bytes += buffer.numElements * int64_t(sizeof(float));
  c.comm_seconds += seconds;
}

void countAllGather(tprt_counters &c, const Buffer &in, double seconds) {
  ++c.all_gather_calls;
  c.all_gather_bytes += in.numElements * int64_t(sizeof(float));
  c.comm_seconds += seconds;
}

} // namespace common
} // namespace tprt
