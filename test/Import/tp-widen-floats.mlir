// RUN: tp-opt %s --split-input-file --tp-widen-floats --verify-diagnostics | FileCheck %s --enable-var-scope --implicit-check-not=bf16

// A bf16 graph (what torch-mlir writes for a model in bfloat16) computes in
// f32: arguments, results, constants (values exact), a generic's block
// arguments; its upcast for the tanh (extf, truncf) goes.
// CHECK-LABEL: func.func @bf16(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %{{[^:]*}}: tensor<8x16xf32> {tp.name = "up"}) -> tensor<4x16xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant dense<[5.000000e-01, -2.500000e-01, 1.000000e+00, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<1.250000e-01> : tensor<16xf32>
// CHECK: linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %[[S:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[IN]], %[[S]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// expected-remark @below {{computes in f32: its bf16 and f16 values, arguments and results included, were widened}}
func.func @bf16(%x: tensor<4x8xbf16>, %up: tensor<8x16xbf16> {tp.name = "up"}) -> tensor<4x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %bias = arith.constant dense<[0.5, -0.25, 1.0, 3.0]> : tensor<4xbf16>
  %scale = arith.constant dense<0.125> : tensor<16xbf16>
  %e = tensor.empty() : tensor<4x16xbf16>
  %i = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%i : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %scale : tensor<4x16xbf16>, tensor<16xbf16>) outs(%e : tensor<4x16xbf16>) {
  ^bb0(%in: bf16, %s: bf16, %out: bf16):
    %m = arith.mulf %in, %s : bf16
    %w = arith.extf %m : bf16 to f32
    %t = math.tanh %w : f32
    %n = arith.truncf %t : f32 to bf16
    linalg.yield %n : bf16
  } -> tensor<4x16xbf16>
  return %a : tensor<4x16xbf16>
}

// -----

// f16 resources keep their keys (tp-externalize-weights names weights after
// them): the blob the module holds is rewritten in f32 (1.0 and 2.0) once
// for its two readers, an elided one stays elided. A cast to f64 stays a
// cast, from f32.
// CHECK-LABEL: func.func @resources(
// CHECK: arith.constant dense_resource<w> : tensor<2xf32>
// CHECK: arith.constant dense_resource<w> : tensor<2xf32>
// CHECK: arith.constant dense_resource<__elided__> : tensor<3xf32>
// CHECK-NOT: arith.extf
// CHECK-LABEL: func.func @wider(
// CHECK-SAME: %[[X:[^:]*]]: f32) -> f64
// CHECK: arith.extf %[[X]] : f32 to f64
// CHECK: w: "0x040000000000803F00000040"
// expected-remark @below {{computes in f32}}
func.func @resources() -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf16>) {
  %w = arith.constant dense_resource<w> : tensor<2xf16>
  %again = arith.constant dense_resource<w> : tensor<2xf16>
  %e = arith.constant dense_resource<__elided__> : tensor<3xbf16>
  %wf = arith.extf %w : tensor<2xf16> to tensor<2xf32>
  %ef = arith.extf %e : tensor<3xbf16> to tensor<3xf32>
  return %wf, %ef, %again : tensor<2xf32>, tensor<3xf32>, tensor<2xf16>
}
// expected-remark @below {{computes in f32}}
func.func @wider(%x: f16) -> f64 {
  %y = arith.extf %x : f16 to f64
  return %y : f64
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x02000000003C0040"
    }
  }
#-}

// -----

// An f32 graph is left as it is, without a remark.
// CHECK-LABEL: func.func @f32(
// CHECK-NEXT: return %{{.*}} : tensor<4xf32>
func.func @f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Bits of a 16-bit float reinterpreted cannot be widened: an error, and
// nothing changes.
func.func @bitcast(%x: tensor<4xf16>) -> tensor<4xi16> {
  // expected-error @below {{'arith.bitcast' op reinterprets the bits of a 16-bit float: the graph cannot be computed in f32}}
  %y = arith.bitcast %x : tensor<4xf16> to tensor<4xi16>
  return %y : tensor<4xi16>
}

// -----

// Nor can a function defined outside the module be called with f32.
// expected-error @below {{'func.func' op is defined outside the module and takes or returns 16-bit floats: widening its calls to f32 would break them}}
func.func private @kernel(tensor<4xf16>) -> tensor<4xf16>
func.func @calls(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = func.call @kernel(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// A blob read as two types cannot be rewritten for both.
func.func @shared() -> (tensor<2xf16>, tensor<2xbf16>) {
  // expected-note @below {{also read as 'f16'}}
  %a = arith.constant dense_resource<w> : tensor<2xf16>
  // expected-error @below {{'arith.constant' op reads resource 'w' as 'bf16': its blob cannot be widened for all its readers}}
  %b = arith.constant dense_resource<w> : tensor<2xbf16>
  return %a, %b : tensor<2xf16>, tensor<2xbf16>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x02000000003C0040"
    }
  }
#-}

// -----

// Nor a blob whose size its type does not give.
func.func @short() -> tensor<4xbf16> {
  // expected-error @below {{'arith.constant' op reads resource 'w' as 'tensor<4xbf16>', but it holds 4 bytes}}
  %a = arith.constant dense_resource<w> : tensor<4xbf16>
  return %a : tensor<4xbf16>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x02000000803F0040"
    }
  }
#-}

// -----

// Complex values of bf16 are not widened.
func.func @complex() -> tensor<1xcomplex<bf16>> {
  // expected-error @below {{narrow floats that tp-mlir cannot widen to f32}}
  %a = arith.constant dense<(1.0, 2.0)> : tensor<1xcomplex<bf16>>
  return %a : tensor<1xcomplex<bf16>>
}

// -----

// A vector bitcast reinterprets bits too.
func.func @vector_bitcast(%x: vector<2xbf16>) -> vector<2xf16> {
  // expected-error @below {{'vector.bitcast' op reinterprets the bits of a 16-bit float: the graph cannot be computed in f32}}
  %y = vector.bitcast %x : vector<2xbf16> to vector<2xf16>
  return %y : vector<2xf16>
}
