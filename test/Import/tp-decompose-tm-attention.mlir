// RUN: tp-opt %s --split-input-file --tp-decompose-tm-attention --verify-diagnostics | FileCheck %s --enable-var-scope

// What torch-mlir writes for BERT's attention: rank 3, a float mask, the
// default scale, a zero-filled output. The scores are divided by sqrt(64),
// the mask added; the softmax over the keys gives 0 for a row whose every
// score is -inf (its maximum -inf, its sum 0) where exp(-inf - -inf) would
// give NaN; the product with V accumulates into the output as it is (no
// second fill).
// CHECK-LABEL: func.func @float_mask(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<12x7x64xf32>, %[[K:[^:]*]]: tensor<12x7x64xf32>, %[[V:[^:]*]]: tensor<12x7x64xf32>, %[[M:[^:]*]]: tensor<12x7x7xf32>)
// CHECK: %[[OUT:.*]] = linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SQRT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<12x7x64xf32>) outs(%{{.*}} : tensor<12x64x7xf32>) permutation = [0, 2, 1]
// CHECK: %[[S0:.*]] = tensor.empty() : tensor<12x7x7xf32>
// CHECK: %[[SZ:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[S0]] : tensor<12x7x7xf32>)
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %[[KT]] : {{.*}}) outs(%[[SZ]] : tensor<12x7x7xf32>)
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[M]] : tensor<12x7x7xf32>, tensor<12x7x7xf32>) outs(%[[S0]] : tensor<12x7x7xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[MV:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[X]], %[[SQRT]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[D]], %[[MV]] : f32
// CHECK-NEXT: linalg.yield %[[A]] : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<12x7xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[MASKED]] : tensor<12x7x7xf32>) outs(%[[M0]] : tensor<12x7xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[ACC:[^:]*]]: f32):
// CHECK-NEXT: arith.maximumf %[[X]], %[[ACC]] : f32
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[MAX]] : tensor<12x7x7xf32>, tensor<12x7xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[RM:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[DEAD:.*]] = arith.cmpf oeq, %[[RM]], %[[NINF]] : f32
// CHECK-NEXT: %[[SH:.*]] = arith.subf %[[X]], %[[RM]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[SH]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.select %[[DEAD]], %[[ZERO]], %[[EXP]] : f32
// CHECK-NEXT: linalg.yield %[[K]] : f32
// CHECK: %[[S0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<12x7xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<12x7x7xf32>) outs(%[[S0]] : tensor<12x7xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[ACC:[^:]*]]: f32):
// CHECK-NEXT: arith.addf %[[X]], %[[ACC]] : f32
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SUM]] : tensor<12x7x7xf32>, tensor<12x7xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[Z:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[NONE:.*]] = arith.cmpf oeq, %[[Z]], %[[ZERO]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[X]], %[[Z]] : f32
// CHECK-NEXT: %[[R0:.*]] = arith.select %[[NONE]], %[[ZERO]], %[[Q]] : f32
// CHECK-NEXT: linalg.yield %[[R0]] : f32
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = linalg.batch_matmul ins(%[[P]], %[[V]] : tensor<12x7x7xf32>, tensor<12x7x64xf32>) outs(%[[OUT]] : tensor<12x7x64xf32>)
// CHECK-NEXT: return %[[R]]
func.func @float_mask(%q: tensor<12x7x64xf32>, %k: tensor<12x7x64xf32>, %v: tensor<12x7x64xf32>, %m: tensor<12x7x7xf32>) -> tensor<12x7x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x7x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<12x7x64xf32>) -> tensor<12x7x64xf32>
  %r = tm_tensor.attention ins(%q, %k, %v, %m : tensor<12x7x64xf32>, tensor<12x7x64xf32>, tensor<12x7x64xf32>, tensor<12x7x7xf32>) outs(%init : tensor<12x7x64xf32>) -> tensor<12x7x64xf32>
  return %r : tensor<12x7x64xf32>
}

// -----

// No mask, a scale: the scores are multiplied by it. The output operand is
// not read, so one not known to be zero is filled first.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[O:[^:]*]]: tensor<4x5x3xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: linalg.generic {{.*}} ins(%{{[^ ]*}} : tensor<4x5x6xf32>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK: %[[Z:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[O]] : tensor<4x5x3xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}) outs(%[[Z]] : tensor<4x5x3xf32>)
func.func @scale(%q: tensor<4x5x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x3xf32>, %o: tensor<4x5x3xf32>) -> tensor<4x5x3xf32> {
  %r = tm_tensor.attention {scale = 0.25 : f64} ins(%q, %k, %v : tensor<4x5x8xf32>, tensor<4x6x8xf32>, tensor<4x6x3xf32>) outs(%o : tensor<4x5x3xf32>) -> tensor<4x5x3xf32>
  return %r : tensor<4x5x3xf32>
}

// -----

// An i1 mask adds 0 where it is true and -inf where it is false. Batch
// dimensions [2, 3] become one around the ops; a dynamic key length sizes
// the scores. The output, zero-filled before it is collapsed, is not filled
// again.
// CHECK-LABEL: func.func @bool_mask_rank4(
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x3x5x?xi1>, %{{[^:]*}}: tensor<2x3x5x4xf32>)
// CHECK: %[[K:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x?x8xf32> into tensor<6x?x8xf32>
// CHECK: %[[MC:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x?xi1> into tensor<6x5x?xi1>
// CHECK-NEXT: %[[OUT:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SQRT:.*]] = arith.constant 2.82842{{[0-9]*}} : f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[LEN:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<6x?x8xf32>
// CHECK-NEXT: tensor.empty(%[[LEN]]) : tensor<6x8x?xf32>
// CHECK: %[[LEN2:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<6x?x8xf32>
// CHECK-NEXT: tensor.empty(%[[LEN2]]) : tensor<6x5x?xf32>
// CHECK: linalg.generic {{.*}} ins(%{{[^,]*}}, %[[MC]] : tensor<6x5x?xf32>, tensor<6x5x?xi1>)
// CHECK-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[KEEP:[^:]*]]: i1, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[X]], %[[SQRT]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.select %[[KEEP]], %[[ZERO]], %[[NINF]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[D]], %[[T]] : f32
// CHECK: arith.divf
// CHECK-NEXT: arith.select
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = linalg.batch_matmul {{.*}} outs(%[[OUT]] : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
// CHECK: return %[[E]]
func.func @bool_mask_rank4(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x?x8xf32>, %v: tensor<2x3x?x4xf32>, %m: tensor<2x3x5x?xi1>, %e: tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  %r = tm_tensor.attention ins(%q, %k, %v, %m : tensor<2x3x5x8xf32>, tensor<2x3x?x8xf32>, tensor<2x3x?x4xf32>, tensor<2x3x5x?xi1>) outs(%o : tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %r : tensor<2x3x5x4xf32>
}

// -----

// A dynamic head dimension: its square root is computed.
// CHECK-LABEL: func.func @dynamic_head(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<4x5x?xf32>
// CHECK: %[[W:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<4x5x?xf32>
// CHECK: %[[I:.*]] = arith.index_castui %[[W]] : index to i64
// CHECK: %[[F:.*]] = arith.uitofp %[[I]] : i64 to f32
// CHECK: %[[SQRT:.*]] = math.sqrt %[[F]] : f32
// CHECK: arith.divf %{{.*}}, %[[SQRT]] : f32
func.func @dynamic_head(%q: tensor<4x5x?xf32>, %k: tensor<4x6x?xf32>, %v: tensor<4x6x3xf32>, %o: tensor<4x5x3xf32>) -> tensor<4x5x3xf32> {
  %r = tm_tensor.attention ins(%q, %k, %v : tensor<4x5x?xf32>, tensor<4x6x?xf32>, tensor<4x6x3xf32>) outs(%o : tensor<4x5x3xf32>) -> tensor<4x5x3xf32>
  return %r : tensor<4x5x3xf32>
}

// -----

func.func @buffers(%q: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) {
  // expected-error @below {{decomposes on tensors only (run tp-import before bufferization)}}
  tm_tensor.attention ins(%q, %q, %q : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%o : memref<2x4x8xf32>)
  return
}

// -----

func.func @no_batch(%q: tensor<4x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{needs a batch dimension (query, key and value of rank 3 or more), as torch-mlir writes it}}
  %r = tm_tensor.attention ins(%q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
