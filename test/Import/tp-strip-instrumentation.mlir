// RUN: tp-opt %s --split-input-file --tp-strip-instrumentation --verify-diagnostics | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --split-input-file --tp-strip-instrumentation="functions=tick" 2>/dev/null | FileCheck %s --check-prefix=OPTION

// buddy-mlir's timing: a clock reading before and after an operator, their
// difference recorded under the operator's name. The calls, the
// subtraction, the name's address, the name and the declarations go; the
// model stays.
// CHECK-LABEL: module {
// CHECK-NOT: rtclock
// CHECK-NOT: record_timing
// CHECK-NOT: llvm.
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty
// CHECK-NEXT: %[[Y:.*]] = linalg.exp ins(%[[X]] : {{.*}}) outs(%[[E]] : {{.*}})
// CHECK-NEXT: return %[[Y]]
module {
  func.func private @rtclock() -> f64
  func.func private @record_timing(!llvm.ptr, f64) -> ()
  llvm.mlir.global private constant @op_name_exp("exp\00") {addr_space = 0 : i32}

  // expected-remark @below {{removed 3 calls of instrumentation functions (@rtclock, @record_timing): their results feed only each other, not the model}}
  func.func @layer(%x: tensor<4xf32>) -> tensor<4xf32> {
    %t0 = call @rtclock() : () -> f64
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %t1 = call @rtclock() : () -> f64
    %d = arith.subf %t1, %t0 : f64
    %name = llvm.mlir.addressof @op_name_exp : !llvm.ptr
    call @record_timing(%name, %d) : (!llvm.ptr, f64) -> ()
    return %y : tensor<4xf32>
  }
}

// -----

// A clock reading the model computes with stays, with its declaration
// (the note is at the first op that is not a side-effect-free link); the
// other reading and the record still go.
// CHECK-LABEL: module {
// CHECK: func.func private @rtclock() -> f64
// CHECK-NOT: record_timing
// CHECK-LABEL: func.func @seeded(
// CHECK-NEXT: %[[T:.*]] = call @rtclock()
// CHECK-NEXT: %[[S:.*]] = arith.truncf %[[T]]
// CHECK-NEXT: return %[[S]]
module {
  func.func private @rtclock() -> f64
  func.func private @record_timing(!llvm.ptr, f64) -> ()

  // expected-remark @below {{removed 2 calls of instrumentation functions (@rtclock, @record_timing)}}
  func.func @seeded(%p: !llvm.ptr) -> f32 {
    %t0 = call @rtclock() : () -> f64
    // expected-warning @below {{kept this call of the instrumentation function @rtclock: something other than instrumentation reads its result}}
    %t1 = call @rtclock() : () -> f64
    %s = arith.truncf %t1 : f64 to f32
    %d = arith.subf %t1, %t0 : f64
    call @record_timing(%p, %d) : (!llvm.ptr, f64) -> ()
    // expected-note @below {{read here}}
    return %s : f32
  }
}

// -----

// Not instrumentation: a function with a body, a declaration that takes
// model data, and a name the pass does not know (unless given with
// `functions`).
// CHECK-LABEL: module {
// CHECK: call @rtclock()
// CHECK: call @record_timing(%{{.*}}, %{{.*}}) : (tensor<4xf32>, f64) -> ()
// CHECK: call @tick()
// OPTION-NOT: @tick
module {
  func.func private @rtclock() -> f64 {
    %c = arith.constant 0.0 : f64
    return %c : f64
  }
  func.func private @record_timing(tensor<4xf32>, f64) -> ()
  func.func private @tick() -> ()

  func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
    %t = call @rtclock() : () -> f64
    call @record_timing(%x, %t) : (tensor<4xf32>, f64) -> ()
    call @tick() : () -> ()
    return %x : tensor<4xf32>
  }
}
