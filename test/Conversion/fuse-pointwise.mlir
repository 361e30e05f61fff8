// RUN: tp-opt %s --tp-fuse-pointwise --split-input-file | FileCheck %s
// RUN: tp-opt %s --tp-fuse-pointwise="into-arg-reductions=false" --split-input-file | FileCheck %s --check-prefix=CPU

// Bias add then GeLU-like scaling: one generic (one loop nest, one kernel).
// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// A producer read twice stays (no recomputation); a pointwise producer of a
// contraction stays too, so the GEMM is still a GEMM for the runtime.
// CHECK-LABEL: func.func @kept(
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[EXP]]
// CHECK: linalg.generic {{.*}} ins(%[[EXP]]
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[SCALED]],
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %u1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %u2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sc, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %u1, %u2, %mm : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A padded vocabulary's mask before the greedy argmax: fused into it by
// default (the cuda kernels); on the CPU (into-arg-reductions=false) the
// argmax stays alone, for tp-argmax-to-runtime.
// CHECK-LABEL: func.func @masked_argmax(
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CPU-LABEL: func.func @masked_argmax(
// CPU: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CPU: arith.select
// CPU: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CPU-NOT: arith.cmpi ult
#io = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d0)>
func.func @masked_argmax(%logits: tensor<2x16xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x16xf32>
  %masked = linalg.generic {indexing_maps = [#io, #io], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<2x16xf32>) outs(%e : tensor<2x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %vocab = arith.constant 13 : index
    %real = arith.cmpi ult, %j, %vocab : index
    %v = arith.select %real, %in, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<2x16xf32>
  %me = tensor.empty() : tensor<2xf32>
  %maxinit = linalg.fill ins(%ninf : f32) outs(%me : tensor<2xf32>) -> tensor<2xf32>
  %ie = tensor.empty() : tensor<2xi64>
  %iinit = linalg.fill ins(%c0 : i64) outs(%ie : tensor<2xi64>) -> tensor<2xi64>
  %max:2 = linalg.generic {indexing_maps = [#io, #o, #o], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<2x16xf32>) outs(%maxinit, %iinit : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %i64, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %max#0, %max#1 : tensor<2xf32>, tensor<2xi64>
}
