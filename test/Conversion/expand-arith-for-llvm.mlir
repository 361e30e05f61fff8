// RUN: tp-opt %s --tp-expand-arith-for-llvm | FileCheck %s

// The float min and max ops stay for ArithToLLVM (LLVM's intrinsics, whose
// reductions LLVM vectorizes); the rounding divisions and bf16 conversions,
// which it cannot lower, are expanded.
// CHECK-LABEL: func.func @kept_and_expanded
// CHECK: arith.maximumf
// CHECK: arith.maxnumf
// CHECK: arith.minimumf
// CHECK: arith.minnumf
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.floordivsi
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @kept_and_expanded(%a: f32, %b: f32, %i: i64, %j: i64, %h: bf16) -> (f32, f32, f32, f32, i64, i64, f32, bf16) {
  %0 = arith.maximumf %a, %b : f32
  %1 = arith.maxnumf %a, %b : f32
  %2 = arith.minimumf %a, %b : f32
  %3 = arith.minnumf %a, %b : f32
  %4 = arith.ceildivsi %i, %j : i64
  %5 = arith.floordivsi %i, %j : i64
  %6 = arith.extf %h : bf16 to f32
  %7 = arith.truncf %a : f32 to bf16
  return %0, %1, %2, %3, %4, %5, %6, %7 : f32, f32, f32, f32, i64, i64, f32, bf16
}
