// RUN: tp-opt %s --tp-fold-constant-globals --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not tp-opt %s --tp-import --split-input-file 2>%t.err | FileCheck %s --check-prefix=IMPORT
// RUN: FileCheck %s --check-prefix=DIAG < %t.err

// A parameter in an immutable global, read by either load, is a constant
// named after the global; tp-import makes it a weight of that name and
// drops the global. The mutable global (state) is left as it is.

// CHECK-LABEL: func.func @params
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<8x16xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<{{.*}}> : tensor<16xf32>
// CHECK:         ml_program.global_load @state
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] :
// CHECK:         return %{{.*}}, %[[B]]

// IMPORT-NOT:    ml_program.global private @w
// IMPORT:        ml_program.global private mutable @state
// IMPORT-NOT:    ml_program.global private @w
// IMPORT-LABEL:  func.func @params
// IMPORT-SAME:     {tp.name = "w"}
// IMPORT-SAME:     {tp.name = "b"}
// IMPORT-NOT:    ml_program.global_load_const
// DIAG:          remark: 2 weights became arguments
// DIAG:          remark: 1 weights became arguments
// DIAG:          error: 'ml_program.global_load_const' op reads @linked
ml_program.global private @w(dense<0.5> : tensor<8x16xf32>) : tensor<8x16xf32>
ml_program.global private @b(dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32>) : tensor<16xf32>
ml_program.global private mutable @state(dense<0> : tensor<i64>) : tensor<i64>
func.func @params(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<i64>) {
  %w = ml_program.global_load_const @w : tensor<8x16xf32>
  %b = ml_program.global_load @b : tensor<16xf32>
  %s = ml_program.global_load @state : tensor<i64>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%a : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %h, %b, %s : tensor<4x16xf32>, tensor<16xf32>, tensor<i64>
}

// -----

// A global loaded twice in one function (a layer inlined twice) is one
// constant, so a splat is one weight; a scalar global folds too.

// CHECK-LABEL: func.func @twice
// CHECK-DAG:     %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<8x8xf32>
// CHECK-DAG:     %[[S:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] :
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] :
// CHECK:         return %{{.*}}, %[[S]]

// IMPORT-LABEL:  func.func @twice
// IMPORT-SAME:     %{{.*}}: tensor<8x8xf32> {tp.name = "layer_w"}) ->
// IMPORT-NOT:    ml_program
ml_program.global private @layer_w(dense<0.5> : tensor<8x8xf32>) : tensor<8x8xf32>
ml_program.global private @scale(2.0 : f32) : f32
func.func @twice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w1 = ml_program.global_load_const @layer_w : tensor<8x8xf32>
  %h1 = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>)
                      outs(%a : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w2 = ml_program.global_load_const @layer_w : tensor<8x8xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>)
                      outs(%a : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = ml_program.global_load_const @scale : f32
  return %h2, %s : tensor<4x8xf32>, f32
}

// -----

// A global defined where the model is linked has no value to fold.
ml_program.global public @linked(#ml_program.extern : tensor<4xf32>) : tensor<4xf32>
func.func @extern() -> tensor<4xf32> {
  // expected-error @below {{reads @linked, an immutable global without a value of its type in the module: tp-mlir cannot give it one}}
  %v = ml_program.global_load_const @linked : tensor<4xf32>
  return %v : tensor<4xf32>
}
