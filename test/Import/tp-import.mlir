// RUN: tp-opt %s --tp-import --verify-diagnostics | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --tp-import --tp-shard="tp-size=2" 2>/dev/null | FileCheck %s --check-prefix=SHARD
// RUN: tp-opt %s --tp-import 2>/dev/null | FileCheck %s --check-prefix=INLINE

// An MLP as buddy-mlir's dynamo front-end writes it in TOSA (HF [out, in]
// weights transposed, a reshape to 3-D for tosa.matmul, SiLU from a
// sigmoid), with upstream shard annotations on top: tp-import leaves func,
// arith, tensor and linalg, and tp-shard then cuts it as a Megatron pair.
// The unused global (torch-mlir's TorchScript modules carry one) goes too.
// CHECK-NOT: ml_program.global
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @mlp(
// CHECK-NOT: tosa.
// CHECK-NOT: shard.
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK: linalg.batch_matmul
// CHECK-NOT: tosa.
// CHECK: return

// SHARD-LABEL: func.func @mlp(
// SHARD-SAME: tensor<4x8xf32> {tp.shard = #tp.shard<dim = 0>}
// SHARD-SAME: tensor<8x4xf32> {tp.shard = #tp.shard<dim = 1>}
// SHARD-COUNT-1: tp.all_reduce
// SHARD-NOT: tp.all_reduce
ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
shard.grid @grid(shape = 2)
// expected-remark @below {{dropped 1 shard annotations and 1 shardings: tp-shard decides the cut}}
func.func @mlp(%x: tensor<3x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<3x8xf32> {
  %cols = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w1a = shard.shard %w1 to %cols annotate_for_users : tensor<8x8xf32>
  %s3 = tosa.const_shape {values = dense<[1, 3, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[3, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tosa.reshape %x, %s3 : (tensor<3x8xf32>, !tosa.shape<3>) -> tensor<1x3x8xf32>
  %w1t = tosa.transpose %w1a {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s38 = tosa.const_shape {values = dense<[1, 8, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w1r = tosa.reshape %w1t, %s38 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %h = tosa.matmul %x3, %w1r, %zp, %zp : (tensor<1x3x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x8xf32>
  %sig = tosa.sigmoid %h : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %silu = tosa.mul %h, %sig, %shift : (tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1xi8>) -> tensor<1x3x8xf32>
  %w2t = tosa.transpose %w2 {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w2r = tosa.reshape %w2t, %s38 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %y = tosa.matmul %silu, %w2r, %zp, %zp : (tensor<1x3x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x8xf32>
  %y2 = tosa.reshape %y, %s2 : (tensor<1x3x8xf32>, !tosa.shape<2>) -> tensor<3x8xf32>
  return %y2 : tensor<3x8xf32>
}

// Layers as calls of one private function, as some front-ends write them:
// tp-shard does not cut across calls, so tp-import inlines them (and the
// function, then unused, goes); each layer is then a pair of its own.
// INLINE-NOT: call
// INLINE-NOT: func.func private
// INLINE-LABEL: func.func @layers(
// INLINE-COUNT-4: linalg.matmul

// SHARD-LABEL: func.func @layers(
// SHARD-SAME: tensor<8x8xf32> {tp.shard = #tp.shard<dim = 1>}
// SHARD-SAME: tensor<8x8xf32> {tp.shard = #tp.shard<dim = 0>}
// SHARD-SAME: tensor<8x8xf32> {tp.shard = #tp.shard<dim = 1>}
// SHARD-SAME: tensor<8x8xf32> {tp.shard = #tp.shard<dim = 0>}
// SHARD-COUNT-2: tp.all_reduce
// SHARD-NOT: tp.all_reduce
func.func private @block(%x: tensor<3x8xf32>, %up: tensor<8x16xf32>, %down: tensor<16x8xf32>) -> tensor<3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<3x16xf32>) -> tensor<3x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<3x8xf32>, tensor<8x16xf32>) outs(%i : tensor<3x16xf32>) -> tensor<3x16xf32>
  %e2 = tensor.empty() : tensor<3x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x8xf32>) -> tensor<3x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<3x16xf32>, tensor<16x8xf32>) outs(%i2 : tensor<3x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

func.func @layers(%x: tensor<3x8xf32>, %up0: tensor<8x16xf32>, %down0: tensor<16x8xf32>,
                  %up1: tensor<8x16xf32>, %down1: tensor<16x8xf32>) -> tensor<3x8xf32> {
  %y0 = func.call @block(%x, %up0, %down0) : (tensor<3x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
  %y1 = func.call @block(%y0, %up1, %down1) : (tensor<3x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
  return %y1 : tensor<3x8xf32>
}
