// RUN: tp-opt %s --tp-fuse-kernel-loops --split-input-file | FileCheck %s

// A loop that reads at each point what the one before wrote there: one loop,
// the first body first.
// CHECK-LABEL: func.func @same_point(
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %{{.*}} : memref<8x8xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[B:.*]][
// CHECK-NEXT: memref.load %[[B]][
// CHECK-NOT: scf.parallel
func.func @same_point(%x: memref<8x8xf32>) -> memref<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %b = memref.alloc() : memref<8x8xf32>
  %out = memref.alloc() : memref<8x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %v, %b[%i, %j] : memref<8x8xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %b[%i, %j] : memref<8x8xf32>
    memref.store %v, %out[%i, %j] : memref<8x8xf32>
  }
  return %out : memref<8x8xf32>
}

// -----

// Two loops writing one buffer at different points (a fill, then a
// transposed write): fused, a thread's fill could land after another
// thread's write. Two loops, as upstream's fusion would not leave them.
// CHECK-LABEL: func.func @write_after_write(
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @write_after_write() -> memref<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<8x8xf32>
  %b = memref.alloc() : memref<8x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    memref.store %z, %b[%i, %j] : memref<8x8xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %v, %b[%j, %i] : memref<8x8xf32>
  }
  return %b : memref<8x8xf32>
}

// -----

// A read of another point than the first loop wrote stays apart; so do
// loops with a call between them.
// CHECK-LABEL: func.func @apart(
// CHECK-COUNT-3: scf.parallel
func.func private @touch(memref<8x8xf32>)
func.func @apart(%x: memref<8x8xf32>, %out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %b = memref.alloc() : memref<8x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %v, %b[%i, %j] : memref<8x8xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %b[%j, %i] : memref<8x8xf32>
    memref.store %v, %out[%i, %j] : memref<8x8xf32>
  }
  call @touch(%x) : (memref<8x8xf32>) -> ()
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %v, %out[%i, %j] : memref<8x8xf32>
  }
  return
}

// -----

// A concat's halves: writes through disjoint subviews of one buffer are
// independent, and so are writes to two arguments (distinct buffers). (A
// loop reading an argument and one writing another stay apart, as
// upstream's: arguments may alias; here the loops read buffers of the
// function's own.)
// CHECK-LABEL: func.func @disjoint(
// CHECK-COUNT-1: scf.parallel
// CHECK-NOT: scf.parallel
func.func @disjoint(%b: memref<8x8xf32>, %u: memref<8x4xf32>, %w: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %x = memref.alloc() : memref<8x4xf32>
  %y = memref.alloc() : memref<8x4xf32>
  %lo = memref.subview %b[0, 0] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1]>>
  %hi = memref.subview %b[0, 4] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1], offset: 4>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x4xf32>
    memref.store %v, %lo[%i, %j] : memref<8x4xf32, strided<[8, 1]>>
    memref.store %v, %u[%i, %j] : memref<8x4xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %y[%i, %j] : memref<8x4xf32>
    memref.store %v, %hi[%i, %j] : memref<8x4xf32, strided<[8, 1], offset: 4>>
    memref.store %v, %w[%i, %j] : memref<8x4xf32>
  }
  return
}

// -----

// RoPE's shape: q's rotation (8), q's product (16) reading it, k's
// rotation (8), k's product (16). k's rotation, with the view it reads,
// moves up to q's (q's product touches nothing it does), and the products
// meet: two loops. A loop that reads what a loop between writes stays.
// CHECK-LABEL: func.func @move_up(
// CHECK: %[[KV:.*]] = memref.subview %[[K:.*]][0, 0] [8, 4]
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c4)
// CHECK: memref.store %{{.*}}, %[[RQ:.*]][
// CHECK: memref.load %[[KV]][
// CHECK: memref.store %{{.*}}, %[[RK:.*]][
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c8)
// CHECK-NEXT: memref.load %[[RQ]]
// CHECK-NEXT: memref.store %{{.*}}, %[[QO:[a-z0-9_]*]][
// CHECK-NEXT: memref.load %[[RK]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c4)
// CHECK-NEXT: memref.load %[[QO]][
// CHECK-NOT: scf.parallel
func.func @move_up(%q: memref<8x4xf32>, %k: memref<8x8xf32>) -> (memref<8x8xf32>, memref<8x8xf32>, memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %rq = memref.alloc() : memref<8x4xf32>
  %rk = memref.alloc() : memref<8x4xf32>
  %qo = memref.alloc() : memref<8x8xf32>
  %ko = memref.alloc() : memref<8x8xf32>
  %late = memref.alloc() : memref<8x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %q[%i, %j] : memref<8x4xf32>
    %n = arith.negf %v : f32
    memref.store %n, %rq[%i, %j] : memref<8x4xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %rq[%i, %c0] : memref<8x4xf32>
    memref.store %v, %qo[%i, %j] : memref<8x8xf32>
  }
  %kv = memref.subview %k[0, 0] [8, 4] [1, 1] : memref<8x8xf32> to memref<8x4xf32, strided<[8, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %kv[%i, %j] : memref<8x4xf32, strided<[8, 1]>>
    %n = arith.negf %v : f32
    memref.store %n, %rk[%i, %j] : memref<8x4xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %rk[%i, %c0] : memref<8x4xf32>
    memref.store %v, %ko[%i, %j] : memref<8x8xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %qo[%i, %j] : memref<8x8xf32>
    memref.store %v, %late[%i, %j] : memref<8x4xf32>
  }
  return %qo, %ko, %late : memref<8x8xf32>, memref<8x8xf32>, memref<8x4xf32>
}
