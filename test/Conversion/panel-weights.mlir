// RUN: tp-opt %s -split-input-file --tp-panel-weights -verify-diagnostics | FileCheck %s

// After tp-linalg-to-runtime: @up and @up2 reach the runtime's GEMM only,
// as b, through the outlined @layer both calls share: laid out in panels,
// and @layer's GEMM reads panels. @head, a GEMM's b read transposed (an LM
// head stored [n, k]), gets the panels of its transpose. @table is read by
// a load as well: panels, and the load reads element [r, c] where they put
// it, in the panel of its column (16 columns: one panel, narrower than 32).
// @sliced is read by a view, @mixed through a callee that another call
// hands a fresh buffer, @x is no GEMM's b, @ids no f32: all stay.

// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,\22name\22:\22ids\22},{\22dtype\22:\22f32\22,\22name\22:\22x\22},{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22up\22},{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22up2\22},{\22dtype\22:\22f32\22,\22layout\22:\22transposed_panels\22,\22name\22:\22head\22},{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22table\22},{\22dtype\22:\22f32\22,\22name\22:\22sliced\22},{\22dtype\22:\22f32\22,\22name\22:\22mixed\22}],\22name\22:\22decode\22}]}"}
// CHECK: func.func private @tprt_matmul_panels_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @decode(
// CHECK-COUNT-2: call @layer
// CHECK:         call @tprt_matmul_panels_f32({{.*}}, %c0_i64, %c1_i64, %c0_i64)
// CHECK:         call @tprt_matmul_panels_f32({{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK:         %[[R:.*]] = arith.index_cast
// CHECK:         scf.for %[[C:.*]] =
// CHECK:           %[[FIRST:.*]] = arith.andi %[[C]], %{{c-32(_[0-9]+)?}}
// CHECK:           %[[LEFT:.*]] = arith.subi %{{c16(_[0-9]+)?}}, %[[FIRST]]
// CHECK:           %[[WIDTH:.*]] = arith.minsi %{{c32(_[0-9]+)?}}, %[[LEFT]]
// CHECK:           %[[BASE:.*]] = arith.muli %[[FIRST]], %{{c8(_[0-9]+)?}}
// CHECK:           %[[ROW:.*]] = arith.muli %[[R]], %[[WIDTH]]
// CHECK:           %[[SUM:.*]] = arith.addi %[[BASE]], %[[ROW]]
// CHECK:           %[[COL:.*]] = arith.subi %[[C]], %[[FIRST]]
// CHECK:           %[[AT:.*]] = arith.addi %[[SUM]], %[[COL]]
// CHECK:           %[[FLAT:.*]] = memref.reinterpret_cast %arg5 to offset: [0], sizes: [128], strides: [1] : memref<8x16xf32> to memref<128xf32>
// CHECK-NEXT:      memref.load %[[FLAT]][%[[AT]]] : memref<128xf32>
// CHECK:         call @tprt_matmul_f32({{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK-COUNT-2: call @scale
// CHECK-LABEL: func.func private @layer(
// CHECK:         %[[B:.*]] = memref.cast %arg1
// CHECK:         call @tprt_matmul_panels_f32(%{{.*}}, %[[B]], %{{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK-NOT:     tprt_matmul_f32
// CHECK-LABEL: func.func private @scale(
// CHECK:         call @tprt_matmul_f32(
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22ids\22,\22dtype\22:\22i64\22},{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22up\22,\22dtype\22:\22f32\22},{\22name\22:\22up2\22,\22dtype\22:\22f32\22},{\22name\22:\22head\22,\22dtype\22:\22f32\22},{\22name\22:\22table\22,\22dtype\22:\22f32\22},{\22name\22:\22sliced\22,\22dtype\22:\22f32\22},{\22name\22:\22mixed\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%ids: memref<2x1xi64>, %x: memref<2x8xf32>, %up: memref<8x8xf32>, %up2: memref<8x8xf32>, %head: memref<16x8xf32>, %table: memref<8x16xf32>, %sliced: memref<8x16xf32>, %mixed: memref<8x8xf32>, %out: memref<2x16xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %h = memref.alloc() : memref<2x8xf32>
    call @layer(%x, %up, %h) : (memref<2x8xf32>, memref<8x8xf32>, memref<2x8xf32>) -> ()
    call @layer(%h, %up2, %h) : (memref<2x8xf32>, memref<8x8xf32>, memref<2x8xf32>) -> ()
    %a = memref.cast %h : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %bh = memref.cast %head : memref<16x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<2x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %bh, %c, %c0_i64, %c1_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    %bt = memref.cast %table : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %bt, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    %id = memref.load %ids[%c0, %c0] : memref<2x1xi64>
    %r = arith.index_cast %id : i64 to index
    scf.for %col = %c0 to %c16 step %c1 {
      %v = memref.load %table[%r, %col] : memref<8x16xf32>
      memref.store %v, %out[%c0, %col] : memref<2x16xf32>
    }
    %bs = memref.cast %sliced : memref<8x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %bs, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    %row = memref.subview %sliced[0, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<1x16xf32, strided<[16, 1]>>
    %fresh = memref.alloc() : memref<8x8xf32>
    call @scale(%h, %mixed, %h) : (memref<2x8xf32>, memref<8x8xf32>, memref<2x8xf32>) -> ()
    call @scale(%h, %fresh, %h) : (memref<2x8xf32>, memref<8x8xf32>, memref<2x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<2x8xf32>, %w: memref<8x8xf32>, %y: memref<2x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
  func.func private @scale(%x: memref<2x8xf32>, %w: memref<8x8xf32>, %y: memref<2x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// Two entries read one weight under its name: @prefill as a GEMM's b only,
// @decode by a load. One buffer serves both: laid out, and the load reads
// the panels.

// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22w\22}],\22name\22:\22prefill\22},{\22args\22:[{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22w\22}],\22name\22:\22decode\22}]}"}
// CHECK-LABEL: func.func @prefill(
// CHECK: call @tprt_matmul_panels_f32(
// CHECK-LABEL: func.func @decode(
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [64], strides: [1]
// CHECK: memref.load %[[FLAT]][
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22prefill\22,\22args\22:[{\22name\22:\22w\22,\22dtype\22:\22f32\22}]},{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22w\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @prefill(%w: memref<8x8xf32>, %out: memref<2x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %out : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %a, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
  func.func @decode(%w: memref<8x8xf32>, %out: memref<2x8xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %w[%c0, %c0] : memref<8x8xf32>
    memref.store %v, %out[%c0, %c0] : memref<2x8xf32>
    return
  }
}

// -----

// @layer's weight parameter also takes an out-parameter (not in the
// manifest's arguments) from a second call: nothing is laid out.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22w\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %h = memref.alloc() : memref<8x8xf32>
    call @layer(%x, %w, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    call @layer(%x, %out, %h) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %y: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// @layer is also reached through func.constant, with a fresh buffer.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22w\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %h = memref.alloc() : memref<8x8xf32>
    call @layer(%x, %w, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    %f = func.constant @layer : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    func.call_indirect %f(%x, %h, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %y: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// A public function the manifest does not name passes its own argument.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22w\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    call @layer(%x, %w, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func @other(%x: memref<8x8xf32>, %v: memref<8x8xf32>, %out: memref<8x8xf32>) {
    call @layer(%x, %v, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %y: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// Entry @a hands its %w, which a load reads, to entry @b, whose %v only a
// GEMM reads: @b's parameter holds @a's row-major buffer.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22a\22,\22args\22:[{\22name\22:\22w\22,\22dtype\22:\22f32\22}]},{\22name\22:\22b\22,\22args\22:[{\22name\22:\22v\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @a(%w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %w[%c0, %c0] : memref<8x8xf32>
    memref.store %v, %out[%c0, %c0] : memref<8x8xf32>
    call @b(%w, %out) : (memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func @b(%v: memref<8x8xf32>, %out: memref<8x8xf32>) {
    call @layer(%out, %v, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %y: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// A result read back from the weight's buffer (`in_place`) would read
// the panels.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22w\22,\22dtype\22:\22f32\22}],\22results\22:[{\22in_place\22:1,\22name\22:\22w\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    call @layer(%x, %w, %out) : (memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) -> ()
    return
  }
  func.func private @layer(%x: memref<8x8xf32>, %w: memref<8x8xf32>, %y: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %a = memref.cast %x : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %y : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// One weight read both as stored and transposed has no one layout.
// CHECK-NOT: layout
// CHECK-NOT: tprt_matmul_panels_f32
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22w\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%w: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %a = memref.cast %out : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %a, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @tprt_matmul_f32(%a, %b, %a, %c0_i64, %c1_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    return
  }
}

// -----

// A tied LM head: the lookup reads the table [64, 8] that the LM head reads
// transposed. The loader lays out its transpose (8 x 64: two panels of 32),
// so the lookup's element [id, j] is in the panel of id, at row j.
// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,\22name\22:\22ids\22},{\22dtype\22:\22f32\22,\22layout\22:\22transposed_panels\22,\22name\22:\22wte\22}],\22name\22:\22decode\22}]}"}
// CHECK:      %[[ID:.*]] = arith.index_cast
// CHECK:      scf.for %[[J:.*]] =
// CHECK:        %[[FIRST:.*]] = arith.andi %[[ID]], %{{c-32(_[0-9]+)?}}
// CHECK:        %[[BASE:.*]] = arith.muli %[[FIRST]], %{{c8(_[0-9]+)?}}
// CHECK:        %[[ROW:.*]] = arith.muli %[[J]], %{{c32(_[0-9]+)?}}
// CHECK:        %[[SUM:.*]] = arith.addi %[[BASE]], %[[ROW]]
// CHECK:        %[[COL:.*]] = arith.subi %[[ID]], %[[FIRST]]
// CHECK:        %[[AT:.*]] = arith.addi %[[SUM]], %[[COL]]
// CHECK:        %[[FLAT:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [512], strides: [1] : memref<64x8xf32> to memref<512xf32>
// CHECK-NEXT:   memref.load %[[FLAT]][%[[AT]]] : memref<512xf32>
// CHECK:      call @tprt_matmul_panels_f32({{.*}}, %c0_i64, %c1_i64, %c0_i64)
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22ids\22,\22dtype\22:\22i64\22},{\22name\22:\22wte\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%ids: memref<1xi64>, %wte: memref<64x8xf32>, %out: memref<1x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %x = memref.alloc() : memref<1x8xf32>
    %id = memref.load %ids[%c0] : memref<1xi64>
    %i = arith.index_cast %id : i64 to index
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %wte[%i, %j] : memref<64x8xf32>
      memref.store %v, %x[%c0, %j] : memref<1x8xf32>
    }
    %a = memref.cast %x : memref<1x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %b = memref.cast %wte : memref<64x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    %c = memref.cast %out : memref<1x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    call @tprt_matmul_f32(%a, %b, %c, %c0_i64, %c1_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    memref.dealloc %x : memref<1x8xf32>
    return
  }
}

// -----

// Without a manifest (not a model's lowering) nothing changes.
// CHECK-LABEL: func.func @plain(
// CHECK:         call @tprt_matmul_f32(
func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @plain(%w: memref<8x8xf32>, %out: memref<2x8xf32>) {
  %c0_i64 = arith.constant 0 : i64
  %a = memref.cast %out : memref<2x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %b = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @tprt_matmul_f32(%a, %b, %a, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
  return
}

// -----

// expected-error @+1 {{the manifest's function @decode does not match the module}}
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[]}]}"} {
}
