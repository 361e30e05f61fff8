// RUN: tp-opt %s -split-input-file --tp-stack-weights | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-stack-weights --tp-model-manifest | FileCheck %s --check-prefix=MANIFEST

// q, k and v of a rank at tp 2 (GQA: k and v narrower), torch's [out, in]
// weights read transposed, each projection collapsing the activation
// itself: one GEMM over the stacked weights, at the first weight's place,
// sliced into q, k and v in order.

// CHECK-LABEL: func.func @qkv(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x8xf32>,
// CHECK-SAME: %[[W:.*]]: tensor<8x8xf32> {tp.name = "layer.{q,k,v}.weight", tp.stack = {dim = 0 : i64, parts = [{size = 4 : i64, tp.name = "layer.q.weight", tp.shard = #tp.shard<dim = 0>}, {size = 2 : i64, tp.name = "layer.k.weight", tp.shard = #tp.shard<dim = 0>}, {size = 2 : i64, tp.name = "layer.v.weight", tp.shard = #tp.shard<dim = 0>}]}},
// CHECK-SAME: %[[O:.*]]: tensor<8x4xf32> {tp.name = "layer.o.weight"})
// CHECK:      %[[LHS:.*]] = tensor.collapse_shape %[[X]]
// CHECK:      %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) permutation = [1, 0]
// CHECK:      %[[INIT:.*]] = linalg.fill
// CHECK:      %[[QKV:.*]] = linalg.matmul ins(%[[LHS]], %[[T]] : tensor<2x8xf32>, tensor<8x8xf32>) outs(%[[INIT]] : tensor<2x8xf32>)
// CHECK-NEXT: %[[Q:.*]] = tensor.extract_slice %[[QKV]][0, 0] [2, 4] [1, 1]
// CHECK-NEXT: %[[K:.*]] = tensor.extract_slice %[[QKV]][0, 4] [2, 2] [1, 1]
// CHECK-NEXT: %[[V:.*]] = tensor.extract_slice %[[QKV]][0, 6] [2, 2] [1, 1]
// The o projection reads another activation: left alone.
// CHECK:      linalg.matmul
// CHECK-NOT:  linalg.matmul
// CHECK:      return %[[Q]], %[[K]], %[[V]], %{{.*}}

// The manifest says how the loader builds the stack: each part is read and
// cut as the argument it was.
// MANIFEST: \22local_shape\22:[8,8],\22name\22:\22layer.{q,k,v}.weight\22,\22named\22:true,\22role\22:\22weight\22,\22shape\22:[8,8],\22shard\22:null,\22stack\22:{\22dim\22:0,\22parts\22:[{\22dtype\22:\22f32\22,\22local_shape\22:[4,8],\22name\22:\22layer.q.weight\22,\22named\22:true,\22shape\22:[8,8],\22shard\22:{\22dim\22:0,\22outer\22:1}},{\22dtype\22:\22f32\22,\22local_shape\22:[2,8],\22name\22:\22layer.k.weight\22,\22named\22:true,\22shape\22:[4,8],\22shard\22:{\22dim\22:0,\22outer\22:1}},{\22dtype\22:\22f32\22,\22local_shape\22:[2,8],\22name\22:\22layer.v.weight\22,\22named\22:true,\22shape\22:[4,8],\22shard\22:{\22dim\22:0,\22outer\22:1}}]}}
module attributes {tp.size = 2 : i64} {
  func.func @qkv(%x: tensor<1x2x8xf32>,
                 %wq: tensor<4x8xf32> {tp.name = "layer.q.weight", tp.shard = #tp.shard<dim = 0>},
                 %wk: tensor<2x8xf32> {tp.name = "layer.k.weight", tp.shard = #tp.shard<dim = 0>},
                 %wv: tensor<2x8xf32> {tp.name = "layer.v.weight", tp.shard = #tp.shard<dim = 0>},
                 %wo: tensor<8x4xf32> {tp.name = "layer.o.weight"})
      -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %xq = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x2x8xf32> into tensor<2x8xf32>
    %tq0 = tensor.empty() : tensor<8x4xf32>
    %tq = linalg.transpose ins(%wq : tensor<4x8xf32>) outs(%tq0 : tensor<8x4xf32>) permutation = [1, 0]
    %eq = tensor.empty() : tensor<2x4xf32>
    %iq = linalg.fill ins(%zero : f32) outs(%eq : tensor<2x4xf32>) -> tensor<2x4xf32>
    %q = linalg.matmul ins(%xq, %tq : tensor<2x8xf32>, tensor<8x4xf32>) outs(%iq : tensor<2x4xf32>) -> tensor<2x4xf32>
    %xk = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x2x8xf32> into tensor<2x8xf32>
    %tk0 = tensor.empty() : tensor<8x2xf32>
    %tk = linalg.transpose ins(%wk : tensor<2x8xf32>) outs(%tk0 : tensor<8x2xf32>) permutation = [1, 0]
    %ek = tensor.empty() : tensor<2x2xf32>
    %ik = linalg.fill ins(%zero : f32) outs(%ek : tensor<2x2xf32>) -> tensor<2x2xf32>
    %k = linalg.matmul ins(%xk, %tk : tensor<2x8xf32>, tensor<8x2xf32>) outs(%ik : tensor<2x2xf32>) -> tensor<2x2xf32>
    %tv0 = tensor.empty() : tensor<8x2xf32>
    %tv = linalg.transpose ins(%wv : tensor<2x8xf32>) outs(%tv0 : tensor<8x2xf32>) permutation = [1, 0]
    %ev = tensor.empty() : tensor<2x2xf32>
    %iv = linalg.fill ins(%zero : f32) outs(%ev : tensor<2x2xf32>) -> tensor<2x2xf32>
    %v = linalg.matmul ins(%xk, %tv : tensor<2x8xf32>, tensor<8x2xf32>) outs(%iv : tensor<2x2xf32>) -> tensor<2x2xf32>
    %to0 = tensor.empty() : tensor<4x8xf32>
    %to = linalg.transpose ins(%wo : tensor<8x4xf32>) outs(%to0 : tensor<4x8xf32>) permutation = [1, 0]
    %eo = tensor.empty() : tensor<2x8xf32>
    %io = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8xf32>) -> tensor<2x8xf32>
    %o = linalg.matmul ins(%q, %to : tensor<2x4xf32>, tensor<4x8xf32>) outs(%io : tensor<2x8xf32>) -> tensor<2x8xf32>
    return %q, %k, %v, %o : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x8xf32>
  }
}

// -----

// Weights stored [k, n] (GPT-2's Conv1D layout) stack along n, dimension 1.

// CHECK-LABEL: func.func @columns(
// CHECK-SAME: %{{.*}}: tensor<8x6xf32> {tp.name = "mlp.fc_{a,b}", tp.stack = {dim = 1 : i64, parts = [{size = 4 : i64, tp.name = "mlp.fc_a"}, {size = 2 : i64, tp.name = "mlp.fc_b"}]}})
// CHECK:      %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8x6xf32>)
// CHECK-NEXT: tensor.extract_slice %[[P]][0, 0] [2, 4] [1, 1]
// CHECK-NEXT: tensor.extract_slice %[[P]][0, 4] [2, 2] [1, 1]
// MANIFEST: \22name\22:\22mlp.fc_{a,b}\22,\22named\22:true,\22role\22:\22weight\22,\22shape\22:[8,6],\22shard\22:null,\22stack\22:{\22dim\22:1,
func.func @columns(%x: tensor<2x8xf32>,
                   %a: tensor<8x4xf32> {tp.name = "mlp.fc_a"},
                   %b: tensor<8x2xf32> {tp.name = "mlp.fc_b"})
    -> (tensor<2x4xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<2x4xf32>
  %ia = linalg.fill ins(%zero : f32) outs(%ea : tensor<2x4xf32>) -> tensor<2x4xf32>
  %pa = linalg.matmul ins(%x, %a : tensor<2x8xf32>, tensor<8x4xf32>) outs(%ia : tensor<2x4xf32>) -> tensor<2x4xf32>
  %eb = tensor.empty() : tensor<2x2xf32>
  %ib = linalg.fill ins(%zero : f32) outs(%eb : tensor<2x2xf32>) -> tensor<2x2xf32>
  %pb = linalg.matmul ins(%x, %b : tensor<2x8xf32>, tensor<8x2xf32>) outs(%ib : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %pa, %pb : tensor<2x4xf32>, tensor<2x2xf32>
}

// -----

// Left alone: a weight read by something else too (a tied embedding), an
// unnamed weight (bound by its position), GEMMs of one activation into inits
// of different values, weights of two layouts, GEMMs of a private helper.

// CHECK-LABEL: func.func @alone(
// CHECK-SAME: %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<8x4xf32> {tp.name = "tied"}, %{{.*}}: tensor<8x4xf32> {tp.name = "b"}, %{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<8x4xf32> {tp.name = "c"}, %{{.*}}: tensor<4x8xf32> {tp.name = "d"})
// CHECK-COUNT-5: linalg.matmul
// CHECK-NOT: tp.stack
func.func @alone(%x: tensor<2x8xf32>,
                 %tied: tensor<8x4xf32> {tp.name = "tied"},
                 %b: tensor<8x4xf32> {tp.name = "b"},
                 %unnamed: tensor<8x4xf32>,
                 %c: tensor<8x4xf32> {tp.name = "c"},
                 %d: tensor<4x8xf32> {tp.name = "d"})
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %i1 = linalg.fill ins(%one : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p0 = linalg.matmul ins(%x, %tied : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p1 = linalg.matmul ins(%x, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p2 = linalg.matmul ins(%x, %unnamed : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p3 = linalg.matmul ins(%x, %c : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %t0 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%d : tensor<4x8xf32>) outs(%t0 : tensor<8x4xf32>) permutation = [1, 0]
  %p4 = linalg.matmul ins(%x, %t : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %p0, %p1, %p2, %p3, %p4, %tied : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<8x4xf32>
}

func.func private @helper(%x: tensor<2x8xf32>, %a: tensor<8x4xf32> {tp.name = "a"}, %b: tensor<8x4xf32> {tp.name = "b"}) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %pa = linalg.matmul ins(%x, %a : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  %pb = linalg.matmul ins(%x, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %pa, %pb : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A public function that another calls keeps its signature.

// CHECK-LABEL: func.func @called(
// CHECK-SAME: {tp.name = "a"}, %{{.*}}: tensor<8x4xf32> {tp.name = "b"})
// CHECK-COUNT-2: linalg.matmul
func.func @called(%x: tensor<2x8xf32>, %a: tensor<8x4xf32> {tp.name = "a"}, %b: tensor<8x4xf32> {tp.name = "b"}) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %pa = linalg.matmul ins(%x, %a : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  %pb = linalg.matmul ins(%x, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %pa, %pb : tensor<2x4xf32>, tensor<2x4xf32>
}

func.func @caller(%x: tensor<2x8xf32>, %a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %pa, %pb = func.call @called(%x, %a, %b) : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %pa : tensor<2x4xf32>
}
