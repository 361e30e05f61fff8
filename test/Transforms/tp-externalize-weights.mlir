// RUN: tp-opt %s --tp-externalize-weights="file=%t.safetensors" | FileCheck %s
// RUN: %python %S/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=FILE
// With nothing to move, file= still gets a (empty) checkpoint: a stale one
// from an earlier run must not be taken for this model's.
// RUN: echo 'func.func @f(%%x: tensor<2xf32>) -> tensor<2xf32> { return %%x : tensor<2xf32> }' \
// RUN:   | tp-opt --tp-externalize-weights="file=%t.safetensors" -o /dev/null
// RUN: %python %S/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=EMPTY
// EMPTY-NOT: F32
// EMPTY: data in argument order, header padded to 8 bytes

// A weight as torch-mlir's importer writes it (dense_resource) and one
// inline (dense<[...]>) written twice become arguments after the existing
// ones, named after the resource key and `const0` (taken by an argument
// already: `const0_1`); the same value is one argument; the splat stays.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {tp.name = "x"}, %{{[^:]*}}: tensor<4xf32> {tp.name = "const0"},
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x2xf32> {tp.name = "fc.weight"}, %[[B:[^:]*]]: tensor<2xf32> {tp.name = "const0_1"})
// CHECK: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<2x4xf32>, tensor<4x2xf32>)
// CHECK: linalg.broadcast ins(%[[B]] :
// CHECK: linalg.broadcast ins(%[[B]] :
// CHECK: linalg.broadcast ins(%[[S]] :
// FILE: fc.weight F32 [4, 2] [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
// FILE-NEXT: const0_1 F32 [2] [-1.0, 2.5]
// FILE-NEXT: data in argument order, header padded to 8 bytes
module {
  func.func @forward(%x: tensor<2x4xf32> {tp.name = "x"}, %unused: tensor<4xf32> {tp.name = "const0"}) -> tensor<2x2xf32> {
    %w = arith.constant dense_resource<fc.weight> : tensor<4x2xf32>
    %b = arith.constant dense<[-1.0, 2.5]> : tensor<2xf32>
    %b2 = arith.constant dense<[-1.0, 2.5]> : tensor<2xf32>
    %s = arith.constant dense<0.5> : tensor<2xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x2xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
    %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<2x2xf32>) dimensions = [0]
    %bb2 = linalg.broadcast ins(%b2 : tensor<2xf32>) outs(%e : tensor<2x2xf32>) dimensions = [0]
    %sb = linalg.broadcast ins(%s : tensor<2xf32>) outs(%e : tensor<2x2xf32>) dimensions = [0]
    %y1 = linalg.add ins(%y, %bb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y2 = linalg.add ins(%y1, %bb2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y3 = linalg.add ins(%y2, %sb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    return %y3 : tensor<2x2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E040"
    }
  }
#-}
