// RUN: tp-opt %s --tp-unpack-weights --split-input-file --verify-diagnostics | FileCheck %s

// buddy-mlir's layout: each weight a static slice of one flat argument,
// most reshaped. Each part becomes an argument in the packed one's place, in
// the order they are packed in, named after its position with the packed
// shape and the part's offset, in the shape its reads reshape it to. Two
// reads of one part share its argument; where they differ (offset 0, read
// flat and as [8, 4]; offset 32, as [2, 4] and [4, 2]) it stays flat and
// the reshapes stay.

// CHECK-LABEL: func.func @packed
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>,
// CHECK-SAME:     %[[W1:.*]]: tensor<32xf32> {bufferization.writable = false, tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 52>, tp.name = "arg1"},
// CHECK-SAME:     %[[W2:.*]]: tensor<8xf32> {bufferization.writable = false, tp.checkpoint_offset = 32 : i64, tp.checkpoint_shape = array<i64: 52>, tp.name = "arg1"},
// CHECK-SAME:     %[[B:.*]]: tensor<4xf32> {bufferization.writable = false, tp.checkpoint_offset = 40 : i64, tp.checkpoint_shape = array<i64: 52>, tp.name = "arg1"},
// CHECK-SAME:     %[[G:.*]]: tensor<2x4xf32> {bufferization.writable = false, tp.checkpoint_offset = 44 : i64, tp.checkpoint_shape = array<i64: 52>, tp.name = "arg1"},
// CHECK-SAME:     %[[Y:.*]]: tensor<4xf32>)
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[W:.*]] = tensor.expand_shape %[[W1]] {{\[\[}}0, 1]] output_shape [8, 4]
// CHECK:         tensor.expand_shape %[[W2]] {{\[\[}}0, 1]] output_shape [2, 4]
// CHECK:         tensor.expand_shape %[[W2]] {{\[\[}}0, 1]] output_shape [4, 2]
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.matmul ins(%[[X]], %[[W]] :
// CHECK:         return %{{.*}}, %[[W1]], %[[B]], %[[B]], %[[G]], %[[G]], %[[Y]]
// expected-remark @below {{took 4 weights out of 1 packed argument}}
func.func @packed(%x: tensor<4x8xf32>, %params: tensor<52xf32> {bufferization.writable = false}, %y: tensor<4xf32>)
    -> (tensor<4x4xf32>, tensor<32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4x2xf32>) {
  %b = tensor.extract_slice %params[40] [4] [1] : tensor<52xf32> to tensor<4xf32>
  %s = tensor.extract_slice %params[0] [32] [1] : tensor<52xf32> to tensor<32xf32>
  %w = tensor.expand_shape %s [[0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
  %flat = tensor.extract_slice %params[0] [32] [1] : tensor<52xf32> to tensor<32xf32>
  %b2 = tensor.extract_slice %params[40] [4] [1] : tensor<52xf32> to tensor<4xf32>
  %s3 = tensor.extract_slice %params[32] [8] [1] : tensor<52xf32> to tensor<8xf32>
  %u = tensor.expand_shape %s3 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %s4 = tensor.extract_slice %params[32] [8] [1] : tensor<52xf32> to tensor<8xf32>
  %v = tensor.expand_shape %s4 [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
  %s5 = tensor.extract_slice %params[44] [8] [1] : tensor<52xf32> to tensor<8xf32>
  %g = tensor.expand_shape %s5 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %s6 = tensor.extract_slice %params[44] [8] [1] : tensor<52xf32> to tensor<8xf32>
  %g2 = tensor.expand_shape %s6 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m, %flat, %b, %b2, %g, %g2, %y, %u, %v
      : tensor<4x4xf32>, tensor<32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4x2xf32>
}

// -----

// A named packed argument lends its weights its name.

// CHECK-LABEL: func.func @named
// CHECK-SAME:    tensor<4xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 8>, tp.name = "params"}
// CHECK-SAME:    tensor<4xf32> {tp.checkpoint_offset = 4 : i64, tp.checkpoint_shape = array<i64: 8>, tp.name = "params"}
// expected-remark @below {{took 2 weights out of 1 packed argument}}
func.func @named(%params: tensor<8xf32> {tp.name = "params"}) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = tensor.extract_slice %params[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %b = tensor.extract_slice %params[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Slices inside a region read the parts too.

// CHECK-LABEL: func.func @nested
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 8>, tp.name = "arg0"},
// CHECK-SAME:     %[[B:.*]]: tensor<4xf32> {tp.checkpoint_offset = 4 : i64, tp.checkpoint_shape = array<i64: 8>, tp.name = "arg0"},
// CHECK-SAME:     %{{.*}}: i1)
// CHECK:         scf.yield %[[A]]
// CHECK:         scf.yield %[[B]]
// expected-remark @below {{took 2 weights out of 1 packed argument}}
func.func @nested(%params: tensor<8xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %a = tensor.extract_slice %params[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    %b = tensor.extract_slice %params[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Left as they are: one slice (a table read in part), a slice with a
// stride, one at a dynamic offset, an argument something else reads too,
// one of two dimensions, two sizes at one offset, and the arguments of a
// function that is called.

// CHECK-LABEL: func.func @kept
// CHECK-SAME:    (%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: index)
// CHECK-COUNT-11: tensor.extract_slice
func.func @kept(%one: tensor<8xf32>, %strided: tensor<8xf32>, %dynamic: tensor<8xf32>, %read: tensor<8xf32>,
                %matrix: tensor<4x4xf32>, %sizes: tensor<8xf32>, %i: index)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %a = tensor.extract_slice %one[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %b = tensor.extract_slice %strided[0] [4] [2] : tensor<8xf32> to tensor<4xf32>
  %c = tensor.extract_slice %strided[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %d = tensor.extract_slice %dynamic[%i] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e = tensor.extract_slice %dynamic[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %f = tensor.extract_slice %read[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %g = tensor.extract_slice %read[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %h = tensor.extract_slice %matrix[0, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %k = tensor.extract_slice %matrix[2, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %l = tensor.extract_slice %sizes[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %n = tensor.extract_slice %sizes[0] [2] [1] : tensor<8xf32> to tensor<2xf32>
  return %a, %b, %c, %d, %e, %f, %g, %read, %h, %k, %l, %n
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<2xf32>
}

// An element read as a 0-D tensor, and an argument that already says how
// it is cut: left packed.

// CHECK-LABEL: func.func @kept_too
// CHECK-SAME:    (%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32> {tp.shard = #tp.shard<dim = 0>})
// CHECK-COUNT-4: tensor.extract_slice
func.func @kept_too(%scalar: tensor<8xf32>, %cut: tensor<8xf32> {tp.shard = #tp.shard<dim = 0>})
    -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = tensor.extract_slice %scalar[0] [1] [1] : tensor<8xf32> to tensor<f32>
  %b = tensor.extract_slice %scalar[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %c = tensor.extract_slice %cut[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %d = tensor.extract_slice %cut[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %a, %b, %c, %d : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func private @callee
// CHECK-SAME:    (%{{.*}}: tensor<8xf32>)
func.func private @callee(%params: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = tensor.extract_slice %params[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %b = tensor.extract_slice %params[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

func.func @caller(%params: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = call @callee(%params) : (tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
