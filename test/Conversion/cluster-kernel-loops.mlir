// RUN: tp-opt %s --tp-cluster-kernel-loops --split-input-file | FileCheck %s

// Static allocations move to the start of the run of loops they are in
// (the GEMM's output too), deallocations to its end: the loops become
// adjacent. A call ends a run; the run after it ends with an allocation,
// and its deallocations still go after its loop, before the call.
// CHECK-LABEL: func.func @runs(
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-COUNT-3: arith.constant
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: memref.dealloc %[[A]]
// CHECK-NEXT: call @gemm(%[[B]], %[[C]])
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[E:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK: memref.dealloc %[[B]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: call @use(%[[D]], %[[E]])
func.func private @gemm(memref<8xf32>, memref<8xf32>)
func.func private @use(memref<8xf32>, memref<8xf32>)
func.func @runs(%x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %a[%i] : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  memref.dealloc %a : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  call @gemm(%b, %c) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.dealloc %b : memref<8xf32>
  %d = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %c[%i] : memref<8xf32>
    memref.store %v, %d[%i] : memref<8xf32>
  }
  memref.dealloc %c : memref<8xf32>
  %e = memref.alloc() : memref<8xf32>
  call @use(%d, %e) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// A load outside the loops (the host reads memory) ends a run, and so does
// an allocation of a dynamic size (computed just before it); a loop's body
// is a kernel's, left as it is.
// CHECK-LABEL: func.func @barriers(
// CHECK: scf.parallel
// CHECK-NEXT: memref.store
// CHECK-NEXT: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.dealloc %[[S]]
// CHECK-NEXT: scf.reduce
// CHECK: memref.dealloc
// CHECK-NEXT: %[[N:.*]] = memref.load
// CHECK-NEXT: %[[D:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
func.func @barriers(%x: memref<8xf32>, %n: memref<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %f, %a[%i] : memref<8xf32>
    %s = memref.alloc() : memref<4xf32>
    memref.store %f, %s[%c0] : memref<4xf32>
    memref.dealloc %s : memref<4xf32>
  }
  memref.dealloc %a : memref<8xf32>
  %size = memref.load %n[] : memref<index>
  %d = memref.alloc(%size) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  return
}
