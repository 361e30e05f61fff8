// RUN: tp-opt %s --tp-gemm-bf16 --split-input-file | FileCheck %s

// A weight only GEMMs read (directly, and through a reshape) becomes a bf16
// argument, listed for tp-compile's manifest; the activation is rounded into
// a fresh buffer by a kernel, once for the three GEMMs that read it before a
// call (which might write it: rounded again for the fourth; the GEMMs write
// a buffer of the function's own, which cannot alias it); a weight also read
// by another op (a bias-like use), and one whose view cuBLAS could not take
// as it is, stay f32 and are rounded per call (these GEMMs' outputs have 64
// rows and columns: bound by their arithmetic, where bf16 pays).
// CHECK: module attributes {tpcompile.bf16_args = {forward = array<i64: 1, 2>}}
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: memref<64x8xf32>, %[[W:[^:]*]]: memref<8x64xbf16>,
// CHECK-SAME: %[[WR:[^:]*]]: memref<2x4x64xbf16>,
// CHECK-SAME: %[[WB:[^:]*]]: memref<8x64xf32>, %[[WS:[^:]*]]: memref<8x128xf32>
// CHECK: %[[W16:.*]] = memref.cast %[[W]] : memref<8x64xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK: %[[XR:.*]] = memref.alloc() : memref<64x8xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<64x8xf32>) outs(%[[XR]] : memref<64x8xbf16>)
// CHECK: arith.truncf
// CHECK: %[[XR0:.*]] = memref.cast %[[XR]] :
// CHECK: call @tprt_matmul_bf16(%[[XR0]], %[[W16]],
// CHECK: memref.collapse_shape %[[WR]] {{.*}} : memref<2x4x64xbf16> into memref<8x64xbf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[XR1:.*]] = memref.cast %[[XR]] :
// CHECK: call @tprt_matmul_bf16(%[[XR1]],
// CHECK: %[[XR2:.*]] = memref.cast %[[XR]] :
// CHECK: linalg.generic {{.*}} ins(%[[WB]] : memref<8x64xf32>)
// CHECK: call @tprt_matmul_bf16(%[[XR2]],
// CHECK: call @use(%[[WB]])
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<64x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<8x64xf32, strided<[128, 2]>>)
// CHECK: call @tprt_matmul_bf16(
// CHECK-NOT: tprt_matmul_f32
// CHECK: {{^}}// -----
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @use(memref<8x64xf32>)
  func.func @forward(%x: memref<64x8xf32>, %w: memref<8x64xf32>, %wr: memref<2x4x64xf32>,
                     %wb: memref<8x64xf32>, %ws: memref<8x128xf32>, %out: memref<64x64xf32>)
      attributes {llvm.emit_c_interface} {
    %f = arith.constant 0 : i64
    %t = arith.constant 1 : i64
    %o = memref.alloc() : memref<64x64xf32>
    %c = memref.cast %o : memref<64x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %a = memref.cast %x : memref<64x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b0 = memref.cast %w : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b0, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    %r = memref.collapse_shape %wr [[0, 1], [2]] : memref<2x4x64xf32> into memref<8x64xf32>
    %b1 = memref.cast %r : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b1, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    %b2 = memref.cast %wb : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b2, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @use(%wb) : (memref<8x64xf32>) -> ()
    %s = memref.subview %ws[0, 0] [8, 64] [1, 2] : memref<8x128xf32> to memref<8x64xf32, strided<[128, 2]>>
    %b3 = memref.cast %s : memref<8x64xf32, strided<[128, 2]>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b3, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    memref.copy %o, %out : memref<64x64xf32> to memref<64x64xf32>
    return
  }
}

// -----

// A decode step's GEMMs (one row): one with a stored weight runs on bf16,
// its activation rounded; one whose operands are neither stored in bf16
// (attention over the KV cache, a weight other ops read) stays f32, since
// rounding would read and write more than the f32 GEMM reads. An operand
// written between two GEMMs is rounded again for the second.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x8xf32>, %[[W:[^:]*]]: memref<8x16xbf16>, %[[CACHE:[^:]*]]: memref<8x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<1x8xf32>)
// CHECK: call @tprt_matmul_bf16(
// CHECK: call @tprt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, 
// CHECK: call @overwrite(%[[X]])
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<1x8xf32>)
// CHECK: call @tprt_matmul_bf16(
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @overwrite(memref<1x8xf32>)
  func.func private @read(memref<8x16xf32>)
  func.func @decode(%x: memref<1x8xf32>, %w: memref<8x16xf32>, %cache: memref<8x16xf32>, %out: memref<1x16xf32>)
      attributes {llvm.emit_c_interface} {
    %f = arith.constant 0 : i64
    %t = arith.constant 1 : i64
    %c = memref.cast %out : memref<1x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %a = memref.cast %x : memref<1x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %k = memref.cast %cache : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %f, %f, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @tprt_matmul_f32(%a, %k, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @overwrite(%x) : (memref<1x8xf32>) -> ()
    call @read(%cache) : (memref<8x16xf32>) -> ()
    call @tprt_matmul_f32(%a, %b, %c, %f, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// The input (argument 0) is never converted, even when only a GEMM reads it:
// the launcher passes it as it is. (The weight beside it is.)
// CHECK: module attributes {tpcompile.bf16_args = {input_only = array<i64: 1>}}
// CHECK-LABEL: func.func @input_only(
// CHECK-SAME: %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xbf16>, %{{.*}}: memref<8x8xf32>
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @input_only(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %out: memref<8x8xf32>)
      attributes {llvm.emit_c_interface} {
    %f = arith.constant 0 : i64
    %t = arith.constant 1 : i64
    %a = memref.cast %x : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %y : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %t, %f, %t) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// A call in a nested module finds its callee in that module's symbol table:
// the bf16 entry point is declared there, and the f32 one goes from there.
// CHECK-LABEL: module @outer {
// CHECK-NEXT: module @inner {
// CHECK-NEXT: func.func private @tprt_matmul_bf16(
// CHECK-NOT: tprt_matmul_f32
// CHECK: call @tprt_matmul_bf16(
module @outer {
  module @inner {
    func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
    func.func @nested(%x: memref<64x8xf32>, %w: memref<8x64xf32>, %out: memref<64x64xf32>)
        attributes {llvm.emit_c_interface} {
      %f = arith.constant 0 : i64
      %a = memref.cast %x : memref<64x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
      %b = memref.cast %w : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
      %c = memref.cast %out : memref<64x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
      call @tprt_matmul_f32(%a, %b, %c, %f, %f, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
      return
    }
  }
}

// -----

// Outlined layers (tp-outline-repeated-blocks): the layer's weight argument
// only feeds a GEMM, and every call passes a weight there, so the weights
// and that argument are bf16; the layer's input is rounded per call.
// CHECK: module attributes {tpcompile.bf16_args = {layers = array<i64: 1, 2>}}
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x8xf32>, %[[W0:[^:]*]]: memref<8x8xbf16>, %[[W1:[^:]*]]: memref<8x8xbf16>,
// CHECK: call @layers_block0(%[[X]], %[[W0]], %{{.*}}) : (memref<4x8xf32>, memref<8x8xbf16>, memref<4x8xf32>) -> ()
// CHECK: call @layers_block0(%{{.*}}, %[[W1]], %{{.*}}) : (memref<4x8xf32>, memref<8x8xbf16>, memref<4x8xf32>) -> ()
// CHECK-LABEL: func.func private @layers_block0(
// CHECK-SAME: %{{.*}}: memref<4x8xf32>, %[[BW:[^:]*]]: memref<8x8xbf16>, %{{.*}}: memref<4x8xf32>)
// CHECK: %[[BW16:.*]] = memref.cast %[[BW]] : memref<8x8xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CHECK: call @tprt_matmul_bf16(%{{.*}}, %[[BW16]],
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @layers(%x: memref<4x8xf32>, %w0: memref<8x8xf32>, %w1: memref<8x8xf32>, %out: memref<4x8xf32>)
      attributes {llvm.emit_c_interface} {
    %h = memref.alloc() : memref<4x8xf32>
    call @layers_block0(%x, %w0, %h) : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>) -> ()
    call @layers_block0(%h, %w1, %out) : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>) -> ()
    memref.dealloc %h : memref<4x8xf32>
    return
  }
  func.func private @layers_block0(%x: memref<4x8xf32>, %w: memref<8x8xf32>, %out: memref<4x8xf32>) {
    %f = arith.constant 0 : i64
    %a = memref.cast %x : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %f, %f, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// One call passes an activation where the other passes a weight: that
// argument of the layer stays f32, and so does the weight passed there
// (rounded per call); the other weight is bf16 on both sides.
// CHECK: module attributes {tpcompile.bf16_args = {mixed = array<i64: 2>}}
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8x8xf32>, %{{.*}}: memref<8x8xbf16>,
// CHECK-LABEL: func.func private @mixed_block0(
// CHECK-SAME: %[[BX:[^:]*]]: memref<8x8xf32>, %{{.*}}: memref<8x8xbf16>, %{{.*}}: memref<8x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[BX]] : memref<8x8xf32>)
// CHECK: call @tprt_matmul_bf16(
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @mixed(%x: memref<4x8xf32>, %w0: memref<8x8xf32>, %w1: memref<8x8xf32>, %out: memref<8x8xf32>)
      attributes {llvm.emit_c_interface} {
    %h = memref.alloc() : memref<8x8xf32>
    call @mixed_block0(%w0, %w1, %h) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    call @mixed_block0(%h, %w1, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    memref.dealloc %h : memref<8x8xf32>
    return
  }
  func.func private @mixed_block0(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %f = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%b, %a, %c, %f, %f, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// Both operands one activation (x x^T, 64 x 64 out): rounded once, for
// both.
// CHECK-LABEL: func.func @gram(
// CHECK-SAME: %[[X:[^:]*]]: memref<64x8xf32>
// CHECK: %[[XR:.*]] = memref.alloc() : memref<64x8xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<64x8xf32>) outs(%[[XR]] : memref<64x8xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: %[[A:.*]] = memref.cast %[[XR]] :
// CHECK: %[[B:.*]] = memref.cast %[[XR]] :
// CHECK: call @tprt_matmul_bf16(%[[A]], %[[B]],
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @gram(%x: memref<64x8xf32>, %out: memref<64x64xf32>) attributes {llvm.emit_c_interface} {
    %f = arith.constant 0 : i64
    %t = arith.constant 1 : i64
    %a = memref.cast %x : memref<64x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<64x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %a, %c, %f, %t, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// An activation read through a collapsed view is rounded in its own shape
// (the loops of the op that wrote it, whose kernel the rounding can join)
// and the bf16 copy collapsed the same way.
// CHECK-LABEL: func.func @collapsed(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x64x8xf32>
// CHECK: %[[XR:.*]] = memref.alloc() : memref<1x64x8xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<1x64x8xf32>) outs(%[[XR]] : memref<1x64x8xbf16>)
// CHECK: %[[C:.*]] = memref.collapse_shape %[[XR]] {{\[}}[0, 1], [2]] : memref<1x64x8xbf16> into memref<64x8xbf16>
// CHECK: %[[A:.*]] = memref.cast %[[C]]
// CHECK: call @tprt_matmul_bf16(%[[A]],
module {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @collapsed(%x: memref<1x64x8xf32>, %w: memref<8x64xf32>) attributes {llvm.emit_c_interface} {
    %f = arith.constant 0 : i64
    %o = memref.alloc() : memref<64x64xf32>
    %c = memref.cast %o : memref<64x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %x2 = memref.collapse_shape %x [[0, 1], [2]] : memref<1x64x8xf32> into memref<64x8xf32>
    %a = memref.cast %x2 : memref<64x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %f, %f, %f) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    memref.dealloc %o : memref<64x64xf32>
    return
  }
}
