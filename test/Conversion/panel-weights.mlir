// RUN: tp-opt %s -split-input-file --tp-panel-weights -verify-diagnostics | FileCheck %s

// After tp-linalg-to-runtime: @up and @up2 reach the runtime's GEMM only,
// as b, through the outlined @layer both calls share: laid out in panels,
// and @layer's GEMM reads panels. @head, a GEMM's b read transposed (an LM
// head stored [n, k]), gets the panels of its transpose. @table is read by
// a load as well, @mixed through a callee that another call hands a fresh
// buffer, @x is no GEMM's b, @ids no f32: all stay.

// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,\22name\22:\22ids\22},{\22dtype\22:\22f32\22,\22name\22:\22x\22},{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22up\22},{\22dtype\22:\22f32\22,\22layout\22:\22panels\22,\22name\22:\22up2\22},{\22dtype\22:\22f32\22,\22layout\22:\22transposed_panels\22,\22name\22:\22head\22},{\22dtype\22:\22f32\22,\22name\22:\22table\22},{\22dtype\22:\22f32\22,\22name\22:\22mixed\22}],\22name\22:\22decode\22}]}"}
// CHECK: func.func private @tprt_matmul_panels_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @decode(
// CHECK-COUNT-2: call @layer
// CHECK:         call @tprt_matmul_panels_f32({{.*}}, %c0_i64, %c1_i64, %c0_i64)
// CHECK:         call @tprt_matmul_f32({{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK-COUNT-2: call @scale
// CHECK-LABEL: func.func private @layer(
// CHECK:         %[[B:.*]] = memref.cast %arg1
// CHECK:         call @tprt_matmul_panels_f32(%{{.*}}, %[[B]], %{{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK-NOT:     tprt_matmul_f32
// CHECK-LABEL: func.func private @scale(
// CHECK:         call @tprt_matmul_f32(
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22args\22:[{\22name\22:\22ids\22,\22dtype\22:\22i64\22},{\22name\22:\22x\22,\22dtype\22:\22f32\22},{\22name\22:\22up\22,\22dtype\22:\22f32\22},{\22name\22:\22up2\22,\22dtype\22:\22f32\22},{\22name\22:\22head\22,\22dtype\22:\22f32\22},{\22name\22:\22table\22,\22dtype\22:\22f32\22},{\22name\22:\22mixed\22,\22dtype\22:\22f32\22}]}]}"} {
  func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func @decode(%ids: memref<2x1xi64>, %x: memref<2x8xf32>, %up: memref<8x8xf32>, %up2: memref<8x8xf32>, %head: memref<16x8xf32>, %table: memref<8x16xf32>, %mixed: memref<8x8xf32>, %out: memref<2x16xf32>) {
    %c0 = arith.constant 0 : index
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
    %v = memref.load %table[%c0, %c0] : memref<8x16xf32>
    memref.store %v, %out[%c0, %c0] : memref<2x16xf32>
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
// @decode also by a load. One buffer serves both, so neither lays it out.

// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22dtype\22:\22f32\22,\22name\22:\22w\22}],\22name\22:\22prefill\22},{\22args\22:[{\22dtype\22:\22f32\22,\22name\22:\22w\22}],\22name\22:\22decode\22}]}"}
// CHECK-NOT: tprt_matmul_panels_f32
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

// Entry @a hands its %w, which a load reads too, to entry @b, whose %v
// only a GEMM reads: @b's parameter holds @a's row-major buffer.
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
