// RUN: tp-opt %s --tp-device-constants --split-input-file --verify-diagnostics | FileCheck %s

// Every read of a constant (a weight given inline, a splat, a scalar) goes
// through its device copy, viewed with the global's shape again; the host
// array is only read by the runtime.
// CHECK: func.func private @tprt_device_constant_f32(memref<?xf32>) -> memref<?xf32> attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @forward(
// CHECK: %[[G:.*]] = memref.get_global @w : memref<8x16xf32>
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[G]] to offset: [0], sizes: [128], strides: [1] : memref<8x16xf32> to memref<128xf32>
// CHECK: %[[DYN:.*]] = memref.cast %[[FLAT]] : memref<128xf32> to memref<?xf32>
// CHECK: %[[DEV:.*]] = call @tprt_device_constant_f32(%[[DYN]]) : (memref<?xf32>) -> memref<?xf32>
// CHECK: %[[W:.*]] = memref.reinterpret_cast %[[DEV]] to offset: [0], sizes: [8, 16], strides: [16, 1] : memref<?xf32> to memref<8x16xf32>
// CHECK: %[[S:.*]] = memref.get_global @s : memref<f32>
// CHECK: memref.reinterpret_cast %[[S]] to offset: [0], sizes: [1], strides: [1] : memref<f32> to memref<1xf32>
// CHECK: %[[SD:.*]] = call @tprt_device_constant_f32(
// CHECK: %[[SV:.*]] = memref.reinterpret_cast %[[SD]] to offset: [0], sizes: [], strides: [] : memref<?xf32> to memref<f32>
// CHECK: call @use(%[[W]], %[[SV]], %[[W]])
// CHECK-NOT: @tprt_device_constant_f32
module {
  memref.global "private" constant @w : memref<8x16xf32> = dense<0.5>
  memref.global "private" constant @s : memref<f32> = dense<2.0>
  func.func private @use(memref<8x16xf32>, memref<f32>, memref<8x16xf32>)
  func.func @forward() {
    %w = memref.get_global @w : memref<8x16xf32>
    %s = memref.get_global @s : memref<f32>
    func.call @use(%w, %s, %w) : (memref<8x16xf32>, memref<f32>, memref<8x16xf32>) -> ()
    return
  }
}

// -----

// Integer constants (position ids, masks) too, by their own entry point.
// CHECK-LABEL: module
// CHECK-DAG: func.func private @tprt_device_constant_i64(memref<?xi64>) -> memref<?xi64> attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @tprt_device_constant_i1(memref<?xi1>) -> memref<?xi1> attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @forward(
// CHECK: %[[P:.*]] = memref.get_global @positions : memref<1x4xi64>
// CHECK: %[[PF:.*]] = memref.reinterpret_cast %[[P]] to offset: [0], sizes: [4], strides: [1] : memref<1x4xi64> to memref<4xi64>
// CHECK: %[[PD:.*]] = memref.cast %[[PF]] : memref<4xi64> to memref<?xi64>
// CHECK: %[[PC:.*]] = call @tprt_device_constant_i64(%[[PD]]) : (memref<?xi64>) -> memref<?xi64>
// CHECK: %[[PV:.*]] = memref.reinterpret_cast %[[PC]] to offset: [0], sizes: [1, 4], strides: [4, 1] : memref<?xi64> to memref<1x4xi64>
// CHECK: %[[MC:.*]] = call @tprt_device_constant_i1(
// CHECK: %[[MV:.*]] = memref.reinterpret_cast %[[MC]] to offset: [0], sizes: [4], strides: [1] : memref<?xi1> to memref<4xi1>
// CHECK: call @use(%[[PV]], %[[MV]])
module {
  memref.global "private" constant @positions : memref<1x4xi64> = dense<[[0, 1, 2, 3]]>
  memref.global "private" constant @mask : memref<4xi1> = dense<[true, false, true, true]>
  func.func private @use(memref<1x4xi64>, memref<4xi1>)
  func.func @forward() {
    %p = memref.get_global @positions : memref<1x4xi64>
    %m = memref.get_global @mask : memref<4xi1>
    func.call @use(%p, %m) : (memref<1x4xi64>, memref<4xi1>) -> ()
    return
  }
}

// -----

// An element type the runtime has no entry point for.
module {
  memref.global "private" constant @sizes : memref<2xindex> = dense<[4, 8]>
  func.func private @use(memref<2xindex>)
  func.func @forward() {
    // expected-error @below {{the cuda backend keeps constants of f32, f64, f16, bf16, i64, i32, i16, i8 and i1 in device memory; this one is 'memref<2xindex>'}}
    %m = memref.get_global @sizes : memref<2xindex>
    func.call @use(%m) : (memref<2xindex>) -> ()
    return
  }
}

// -----

// A writable global would diverge from its device copy.
module {
  memref.global "private" @state : memref<4xf32> = dense<0.0>
  func.func private @use(memref<4xf32>)
  func.func @forward() {
    // expected-error @below {{the cuda backend copies constant globals to device memory once; @state is not constant}}
    %m = memref.get_global @state : memref<4xf32>
    func.call @use(%m) : (memref<4xf32>) -> ()
    return
  }
}
