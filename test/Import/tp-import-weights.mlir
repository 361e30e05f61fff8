// RUN: tp-opt %s --tp-import="weights=%t.safetensors" | FileCheck %s --enable-var-scope
// RUN: %python %S/../Transforms/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=FILE
// RUN: tp-opt %s --tp-import -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHAPES
// RUN: tp-opt %s --tp-import --tp-shard="tp-size=2" 2>/dev/null | FileCheck %s --check-prefix=SHARD

// An MLP pair with its weights given as constants, each the way a front-end
// writes one: a TOSA constant holding a resource blob, a bias printed
// elided (torch-mlir), a weight stripped to a splat (IREE, tpp-mlir).
// tp-import makes all three arguments, writes the values it has to
// weights=FILE, and tp-shard then cuts them as a Megatron pair.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x4xf32>, %[[UP:[^:]*]]: tensor<4x8xf32> {tp.name = "up"},
// CHECK-SAME: %[[B:[^:]*]]: tensor<8xf32> {tp.name = "const_L{{[0-9]+}}"}, %[[DOWN:[^:]*]]: tensor<8x4xf32> {tp.name = "down"})
// CHECK-NOT: tosa.
// CHECK: linalg.matmul ins(%[[X]], %[[UP]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[DOWN]] :

// FILE: up F32 [4, 8] [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]
// FILE-NEXT: down F32 [8, 4] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
// FILE-NEXT: data in argument order, header padded to 8 bytes

// SHAPES: remark: 3 weights became arguments with their shapes only: the values of 2 were dropped (file=FILE writes them to a checkpoint; tp-import: weights=FILE, tp-compile: --weights-out FILE), 1 had none (elided resources)

// SHARD-LABEL: func.func @mlp(
// SHARD-SAME: tensor<4x4xf32> {tp.name = "up", tp.shard = #tp.shard<dim = 1>}
// SHARD-SAME: tensor<4xf32> {tp.name = "const_L{{[0-9]+}}", tp.shard = #tp.shard<dim = 0>}
// SHARD-SAME: tensor<4x4xf32> {tp.name = "down", tp.shard = #tp.shard<dim = 0>}
// SHARD-COUNT-1: tp.all_reduce
// SHARD-NOT: tp.all_reduce
module {
  func.func @mlp(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %up = "tosa.const"() <{values = dense_resource<up> : tensor<4x8xf32>}> : () -> tensor<4x8xf32>
    %bias = arith.constant dense_resource<__elided__> : tensor<8xf32>
    %down = arith.constant dense<0.5> : tensor<8x4xf32> loc("down")
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x8xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %h = linalg.matmul ins(%x, %up : tensor<4x4xf32>, tensor<4x8xf32>) outs(%i : tensor<4x8xf32>) -> tensor<4x8xf32>
    %bb = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
    %hb = linalg.add ins(%h, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a = tosa.sigmoid %hb : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %e2 = tensor.empty() : tensor<4x4xf32>
    %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %y = linalg.matmul ins(%a, %down : tensor<4x8xf32>, tensor<8x4xf32>) outs(%i2 : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %y : tensor<4x4xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      up: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F841"
    }
  }
#-}
