//===- Graph.cpp - a compiled function's call as a CUDA graph -------------===//
//
// A decode step is launch-bound: one launch per kernel, a few hundred per
// step, each costing the host more than the GPU's work. tp-run-cuda
// --cuda-graph captures one call of @decode on the rank's stream and replays
// it; the ids and the position are written into the same device buffers
// before each replay, so the captured pointers hold.
//
// While capturing nothing runs: the runtime records none of its own events
// (the GEMM and collective timers, the watchdog's), since the host could
// not read their state, and counts the captured calls apart. Each replay
// adds those counts (no times: they are not measured inside a graph), and
// the watchdog watches one event after it, as it watches a collective.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"

using namespace tprt::cuda;

namespace {

/// An instantiated graph and what one replay of it counts.
struct Graph {
  cudaGraphExec_t exec = nullptr;
  tprt_counters counts{};
};

// The two helpers below name every count field: a field added to the
// counters must be added there too.
static_assert(sizeof(tprt_counters) == 7 * sizeof(int64_t) + 3 * sizeof(double),
              "countsBetween and addCounts must name every counter");

/// The count fields of `a` - `b`; times zero.
tprt_counters countsBetween(const tprt_counters &a, const tprt_counters &b) {
  tprt_counters d{};
  d.all_reduce_calls = a.all_reduce_calls - b.all_reduce_calls;
  d.all_reduce_bytes = a.all_reduce_bytes - b.all_reduce_bytes;
  d.all_gather_calls = a.all_gather_calls - b.all_gather_calls;
  d.all_gather_bytes = a.all_gather_bytes - b.all_gather_bytes;
  d.reduce_scatter_calls = a.reduce_scatter_calls - b.reduce_scatter_calls;
  d.reduce_scatter_bytes = a.reduce_scatter_bytes - b.reduce_scatter_bytes;
  d.gemm_calls = a.gemm_calls - b.gemm_calls;
  d.gemm_flops = a.gemm_flops - b.gemm_flops;
  return d;
}

void addCounts(tprt_counters &to, const tprt_counters &d) {
  to.all_reduce_calls += d.all_reduce_calls;
  to.all_reduce_bytes += d.all_reduce_bytes;
  to.all_gather_calls += d.all_gather_calls;
  to.all_gather_bytes += d.all_gather_bytes;
  to.reduce_scatter_calls += d.reduce_scatter_calls;
  to.reduce_scatter_bytes += d.reduce_scatter_bytes;
  to.gemm_calls += d.gemm_calls;
  to.gemm_flops += d.gemm_flops;
}

tprt_status graphError(const char *call, cudaError_t rc, const char *what) {
  return setError(TPRT_ERR_NO_DEVICE, call,
                  std::string(what) + " failed: " + cudaGetErrorString(rc));
}

} // namespace

extern "C" tprt_status tprt_graph_begin(void) {
  const char *call = "tprt_graph_begin";
  State &s = state();
  if (tprt_status st = tprt::common::checkRunning(s); st != TPRT_OK)
    return st;
  if (s.capturing)
    return setError(TPRT_ERR_INVALID_ARGUMENT, call, "already capturing");
  // Thread-local: the watchdog's thread goes on querying its events.
  cudaError_t rc =
      cudaStreamBeginCapture(s.stream(), cudaStreamCaptureModeThreadLocal);
  if (rc != cudaSuccess)
    return graphError(call, rc, "cudaStreamBeginCapture");
  s.capturing = true;
  s.countersAtCapture = s.counters;
  return TPRT_OK;
}

extern "C" tprt_status tprt_graph_end(void **out) {
  const char *call = "tprt_graph_end";
  State &s = state();
  if (!out)
    return setError(TPRT_ERR_INVALID_ARGUMENT, call, "no place for the graph");
  *out = nullptr;
  if (!s.capturing)
    return setError(TPRT_ERR_INVALID_ARGUMENT, call, "not capturing");
  s.capturing = false;
  // Nothing captured ran: the counters are as before it.
  tprt_counters counts = countsBetween(s.counters, s.countersAtCapture);
  s.counters = s.countersAtCapture;
  cudaGraph_t graph = nullptr;
  cudaError_t rc = cudaStreamEndCapture(s.stream(), &graph);
  if (rc != cudaSuccess)
    return graphError(call, rc,
                      "cudaStreamEndCapture (something in the call waited "
                      "for the GPU or read device memory on the host)");
  auto g = std::make_unique<Graph>();
  g->counts = counts;
  rc = cudaGraphInstantiate(&g->exec, graph, 0);
  cudaGraphDestroy(graph);
  if (rc != cudaSuccess)
    return graphError(call, rc, "cudaGraphInstantiate");
  *out = g.release();
  return TPRT_OK;
}

extern "C" tprt_status tprt_graph_launch(void *graph) {
  const char *call = "tprt_graph_launch";
  State &s = state();
  if (tprt_status st = tprt::common::checkRunning(s); st != TPRT_OK)
    return st;
  if (s.capturing || !graph)
    return setError(TPRT_ERR_INVALID_ARGUMENT, call,
                    s.capturing ? "capturing" : "no graph");
  auto *g = static_cast<Graph *>(graph);
  cudaError_t rc = cudaGraphLaunch(g->exec, s.stream());
  if (rc != cudaSuccess)
    return graphError(call, rc, "cudaGraphLaunch");
  addCounts(s.counters, g->counts);
  int64_t collectives = g->counts.all_reduce_calls +
                        g->counts.all_gather_calls +
                        g->counts.reduce_scatter_calls;
  if (collectives > 0)
    watchCollective(call, "a replayed call's " + std::to_string(collectives) +
                              " collectives");
  return TPRT_OK;
}

extern "C" void tprt_graph_destroy(void *graph) {
  auto *g = static_cast<Graph *>(graph);
  if (!g)
    return;
  if (g->exec)
    cudaGraphExecDestroy(g->exec);
  delete g;
}
