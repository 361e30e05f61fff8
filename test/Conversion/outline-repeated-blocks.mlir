// RUN: tp-opt %s --split-input-file --tp-outline-repeated-blocks | FileCheck %s --enable-var-scope

// Three layers of h = x + relu(x @ w), then a projection that starts like a
// layer: one function, called by each layer with its own weight. The run of
// repeated ops reaches into the projection, but the boundary that keeps three
// whole layers and passes only the residual stream wins; the projection
// stays inline. The constant is cloned into the callee; each op that reads
// an empty tensor gets its own.

// CHECK-LABEL: func.func @three_layers(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %[[W0:[^:]*]]: tensor<8x8xf32>, %[[W1:[^:]*]]: tensor<8x8xf32>, %[[W2:[^:]*]]: tensor<8x8xf32>, %[[W3:[^:]*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[H0:.*]] = call @three_layers_block0(%[[X]], %[[W0]]) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[H1:.*]] = call @three_layers_block0(%[[H0]], %[[W1]])
// CHECK-NEXT: %[[H2:.*]] = call @three_layers_block0(%[[H1]], %[[W2]])
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill ins(%[[ZERO]]
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[H2]], %[[W3]]
// CHECK-NEXT: return %[[P]]

// CHECK-LABEL: func.func private @three_layers_block0(
// CHECK-SAME: %[[BX:[^:]*]]: tensor<4x8xf32>, %[[BW:[^:]*]]: tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-SAME: attributes {llvm.bareptr, llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-NEXT: %[[BZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E:.*]] = tensor.empty
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[BZERO]] : f32) outs(%[[E]]
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[BX]], %[[BW]] : {{.*}}) outs(%[[F]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty
// CHECK-NEXT: %[[H:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[BX]] : {{.*}}) outs(%[[E2]]
// CHECK: arith.maximumf %{{.*}}, %[[BZERO]]
// CHECK: return %[[H]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @three_layers(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %w3: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %h1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%h2, %w3 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f3 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// The middle layer has the same ops, but its residual add reads the GEMM
// twice instead of the layer's input: it stays inline, the other two call
// the block.

// CHECK-LABEL: func.func @miswired(
// CHECK: %[[H0:.*]] = call @miswired_block0(%{{.*}}, %{{.*}})
// CHECK: %[[M1:.*]] = linalg.matmul ins(%[[H0]],
// CHECK: %[[H1:.*]] = linalg.generic {{.*}} ins(%[[M1]], %[[M1]] :
// CHECK: %[[H2:.*]] = call @miswired_block0(%[[H1]], %{{.*}})
// CHECK: return %[[H2]]
// CHECK-LABEL: func.func private @miswired_block0(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @miswired(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %m1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %h1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h2 : tensor<4x8xf32>
}

// -----

// The last layer's ReLU clamps at another constant: two calls, and the last
// layer inline.

// CHECK-LABEL: func.func @other_constant(
// CHECK: %[[H0:.*]] = call @other_constant_block0(
// CHECK: %[[H1:.*]] = call @other_constant_block0(%[[H0]],
// CHECK: linalg.matmul ins(%[[H1]],
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: call
// CHECK: return
// CHECK-LABEL: func.func private @other_constant_block0(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @other_constant(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %h1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %one : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h2 : tensor<4x8xf32>
}

// -----

// One layer: nothing repeats, nothing changes.

// CHECK-LABEL: func.func @one_layer(
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK-NOT: func.func private
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @one_layer(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h0 : tensor<4x8xf32>
}

// -----

// Weights compiled into the model as constant tensors: each layer's are its
// own, passed like arguments (only scalars and tables of up to 16 elements
// are cloned into the callee).

// CHECK-LABEL: func.func @constant_weights(
// CHECK-DAG: %[[W0:.*]] = arith.constant dense<{{\[\[}}0.0
// CHECK-DAG: %[[W1:.*]] = arith.constant dense<{{\[\[}}3.0
// CHECK: %[[H0:.*]] = call @constant_weights_block0(%{{.*}}, %[[W0]])
// CHECK: call @constant_weights_block0(%[[H0]], %[[W1]])
// CHECK-LABEL: func.func private @constant_weights_block0(
// CHECK-NOT: dense<
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @constant_weights(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %w0 = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 1.0], [2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0]]> : tensor<8x8xf32>
  %w1 = arith.constant dense<[[3.0, 4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 1.0], [2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0]]> : tensor<8x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h1 : tensor<4x8xf32>
}

// -----

// The empty tensors and zero fills of each shape once for both layers, in
// the first layer only, between its ops (what CSE leaves of torch-mlir's
// per-op ones): each op gets its own copy right before it, and the layers
// are one block again.

// CHECK-LABEL: func.func @shared_fills(
// CHECK-NOT: linalg.fill
// CHECK: %[[H0:.*]] = call @shared_fills_block0(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: call @shared_fills_block0(%[[H0]], %{{.*}}, %{{.*}})
// CHECK-LABEL: func.func private @shared_fills_block0(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E2]] : tensor<4x16xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_fills(%x: tensor<4x8xf32>, %u0: tensor<8x16xf32>, %d0: tensor<16x8xf32>, %u1: tensor<8x16xf32>, %d1: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %eu = tensor.empty() : tensor<4x16xf32>
  %fu = linalg.fill ins(%zero : f32) outs(%eu : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mu0 = linalg.matmul ins(%x, %u0 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fu : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mu0 : tensor<4x16xf32>) outs(%eu : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %ed = tensor.empty() : tensor<4x8xf32>
  %fd = linalg.fill ins(%zero : f32) outs(%ed : tensor<4x8xf32>) -> tensor<4x8xf32>
  %md0 = linalg.matmul ins(%r0, %d0 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%fd : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%md0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ed : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %mu1 = linalg.matmul ins(%h0, %u1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fu : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mu1 : tensor<4x16xf32>) outs(%eu : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %md1 = linalg.matmul ins(%r1, %d1 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%fd : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%md1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ed : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h1 : tensor<4x8xf32>
}

// -----

// Splat weights (a stripped model's biases), each layer's of its own value:
// passed like any other weight, so that the layers still share one callee.

// CHECK-LABEL: func.func @splat_biases(
// CHECK-DAG: %[[B0:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[B1:.*]] = arith.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK: %[[H0:.*]] = call @splat_biases_block0(%{{.*}}, %{{.*}}, %[[B0]])
// CHECK: call @splat_biases_block0(%[[H0]], %{{.*}}, %[[B1]])
// CHECK-LABEL: func.func private @splat_biases_block0(
// CHECK-NOT: dense<
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @splat_biases(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %b0 = arith.constant dense<1.0> : tensor<4x8xf32>
  %b1 = arith.constant dense<2.0> : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %b0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %h1 : tensor<4x8xf32>
}

// -----

// A dynamic number of rows: the layers are outlined all the same, but the
// callee keeps descriptors for its buffers (a bare pointer carries no
// sizes, and the block reads the rows from its input): no llvm.bareptr.

// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-COUNT-3: call @dynamic_rows_block0(
// CHECK-LABEL: func.func private @dynamic_rows_block0(
// CHECK-SAME: %[[BX:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: tensor.dim %[[BX]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic_rows(%x: tensor<?x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty(%d0) : tensor<?x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m0, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %d1 = tensor.dim %h0, %c0 : tensor<?x8xf32>
  %e1 = tensor.empty(%d1) : tensor<?x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %h0 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %d2 = tensor.dim %h1, %c0 : tensor<?x8xf32>
  %e2 = tensor.empty(%d2) : tensor<?x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<?x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %h1 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    %s = arith.addf %r, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %h2 : tensor<?x8xf32>
}

// -----

// A generating model's position, a scalar read from a rank-0 tensor: the
// callee reads it itself from the tensor (so that on the cuda backend its
// kernels can load it), rather than taking the number read by the caller.

// CHECK-LABEL: func.func @position(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x8xf32>, %[[POS:[^:]*]]: tensor<i64>, %[[C0:[^:]*]]: tensor<16x8xf32>, %[[C1:[^:]*]]: tensor<16x8xf32>, %[[W0:[^:]*]]: tensor<8x8xf32>, %[[W1:[^:]*]]: tensor<8x8xf32>)
// CHECK: %[[L0:.*]]:2 = call @position_block0(%[[X]], %[[W0]], %[[C0]], %[[POS]]) : (tensor<1x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<i64>)
// CHECK: call @position_block0(%[[L0]]#0, %[[W1]], %[[C1]], %[[POS]])
// CHECK-LABEL: func.func private @position_block0(
// CHECK-SAME: %[[P:[^:]*]]: tensor<i64>)
// CHECK: %[[E:.*]] = tensor.extract %[[P]][] : tensor<i64>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], 0] [1, 8]
func.func @position(%x: tensor<1x8xf32>, %pos: tensor<i64>, %c0: tensor<16x8xf32>, %c1: tensor<16x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %p = tensor.extract %pos[] : tensor<i64>
  %i = arith.index_cast %p : i64 to index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %k0 = tensor.insert_slice %h0 into %c0[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<1x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %k1 = tensor.insert_slice %h1 into %c1[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  return %h1, %k0, %k1 : tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// A scalar the layer takes as a dynamic size (the length pos + 1 of its
// attention) stays an argument: the host needs that value anyway. The
// offset beside it is still read in the callee.

// CHECK-LABEL: func.func @length(
// CHECK-SAME: %[[POS:[^:]*]]: tensor<i64>
// CHECK: %[[N:.*]] = arith.addi
// CHECK: call @length_block0(%{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %[[POS]]) : (tensor<1x8xf32>, tensor<8x8xf32>, tensor<16x8xf32>, index, tensor<i64>)
// CHECK-LABEL: func.func private @length_block0(
// CHECK-SAME: %[[LEN:[^:]*]]: index, %[[P:[^:]*]]: tensor<i64>)
// CHECK: %[[E:.*]] = tensor.extract %[[P]][] : tensor<i64>
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], 0] [1, 8]
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%[[LEN]], 8]
func.func @length(%x: tensor<1x8xf32>, %pos: tensor<i64>, %c0: tensor<16x8xf32>, %c1: tensor<16x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<1x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %p = tensor.extract %pos[] : tensor<i64>
  %i = arith.index_cast %p : i64 to index
  %one = arith.constant 1 : index
  %n = arith.addi %i, %one : index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %k0 = tensor.insert_slice %h0 into %c0[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %s0 = tensor.extract_slice %k0[0, 0] [%n, 8] [1, 1] : tensor<16x8xf32> to tensor<?x8xf32>
  %e1 = tensor.empty() : tensor<1x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %k1 = tensor.insert_slice %h1 into %c1[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %s1 = tensor.extract_slice %k1[0, 0] [%n, 8] [1, 1] : tensor<16x8xf32> to tensor<?x8xf32>
  return %h1, %s0, %s1 : tensor<1x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A layer that computes its length itself (pos + 1 inside it) takes the
// position as a number: a size, read once by the caller.

// CHECK-LABEL: func.func @inner_length(
// CHECK: %[[E:.*]] = tensor.extract
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[E]]
// CHECK-NEXT: call @inner_length_block0(%{{.*}}, %{{.*}}, %[[I]], %{{.*}}) : (tensor<1x8xf32>, tensor<8x8xf32>, index, tensor<16x8xf32>)
func.func @inner_length(%x: tensor<1x8xf32>, %pos: tensor<i64>, %c0: tensor<16x8xf32>, %c1: tensor<16x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<1x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %p = tensor.extract %pos[] : tensor<i64>
  %i = arith.index_cast %p : i64 to index
  %one = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %n0 = arith.addi %i, %one : index
  %k0 = tensor.insert_slice %h0 into %c0[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %s0 = tensor.extract_slice %k0[0, 0] [%n0, 8] [1, 1] : tensor<16x8xf32> to tensor<?x8xf32>
  %e1 = tensor.empty() : tensor<1x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %n1 = arith.addi %i, %one : index
  %k1 = tensor.insert_slice %h1 into %c1[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %s1 = tensor.extract_slice %k1[0, 0] [%n1, 8] [1, 1] : tensor<16x8xf32> to tensor<?x8xf32>
  return %h1, %s0, %s1 : tensor<1x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The position's tensor is also what the first layer's generic reads, the
// second reading another tensor there: the position gets an argument of
// its own, and each layer's generic reads its own tensor.

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @shared_root(
// CHECK-SAME: %{{[^:]*}}: tensor<1x8xf32>, %[[POS:[^:]*]]: tensor<i64>, %[[OTHER:[^:]*]]: tensor<i64>
// CHECK-NOT: tensor.extract
// CHECK: call @shared_root_block0(%{{.*}}, %{{.*}}, %[[POS]], %{{.*}}, %[[POS]])
// CHECK: call @shared_root_block0(%{{.*}}, %{{.*}}, %[[OTHER]], %{{.*}}, %[[POS]])
// CHECK-LABEL: func.func private @shared_root_block0(
// CHECK-SAME: %[[READ:[^:]*]]: tensor<i64>, %{{[^:]*}}: tensor<16x8xf32>, %[[P:[^:]*]]: tensor<i64>)
// CHECK: tensor.extract %[[P]][]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[READ]] : tensor<1x8xf32>, tensor<i64>)
func.func @shared_root(%x: tensor<1x8xf32>, %pos: tensor<i64>, %other: tensor<i64>, %c0: tensor<16x8xf32>, %c1: tensor<16x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %p = tensor.extract %pos[] : tensor<i64>
  %i = arith.index_cast %p : i64 to index
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %m0 = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel"]} ins(%h0, %pos : tensor<1x8xf32>, tensor<i64>) outs(%e0 : tensor<1x8xf32>) {
  ^bb0(%a: f32, %s: i64, %o: f32):
    %sf = arith.sitofp %s : i64 to f32
    %r = arith.addf %a, %sf : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %k0 = tensor.insert_slice %m0 into %c0[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<1x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %h1 = linalg.matmul ins(%m0, %w1 : tensor<1x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %m1 = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel"]} ins(%h1, %other : tensor<1x8xf32>, tensor<i64>) outs(%e1 : tensor<1x8xf32>) {
  ^bb0(%a: f32, %s: i64, %o: f32):
    %sf = arith.sitofp %s : i64 to f32
    %r = arith.addf %a, %sf : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %k1 = tensor.insert_slice %m1 into %c1[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  return %m1, %k0, %k1 : tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}
