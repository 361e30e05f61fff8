// RUN: tp-opt %s --tp-import --verify-diagnostics | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --tp-import --tp-shard="tp-size=2" 2>/dev/null | FileCheck %s --check-prefix=SHARD

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
