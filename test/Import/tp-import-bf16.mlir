// RUN: tp-opt %s --tp-import="weights=%t.safetensors" 2>%t.err | FileCheck %s --enable-var-scope
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// RUN: %python %S/../Transforms/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=FILE

// A model held in bf16, its weight a resource blob (1, 2, 3, -4): tp-import
// widens the graph to f32 before it makes the weight an argument, so the
// checkpoint it writes holds the weight's values in F32, exactly, under the
// resource's key.
// REMARK: remark: computes in f32: its bf16 and f16 values, arguments and results included, were widened
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x2xf32>, %[[W:[^:]*]]: tensor<2x2xf32> {tp.name = "proj"}) -> tensor<2x2xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<2x2xf32>, tensor<2x2xf32>)
// FILE: proj F32 [2, 2] [1.0, 2.0, 3.0, -4.0]
func.func @forward(%x: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %w = arith.constant dense_resource<proj> : tensor<2x2xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x2xbf16>
  %i = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  %y = linalg.matmul ins(%x, %w : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%i : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %y : tensor<2x2xbf16>
}
{-#
  dialect_resources: {
    builtin: {
      proj: "0x02000000803F0040404080C0"
    }
  }
#-}
