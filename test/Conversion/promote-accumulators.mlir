// RUN: tp-opt %s --split-input-file --tp-promote-accumulators | FileCheck %s

// An argmax over a buffer of the function's own (the LM head's logits): its
// two accumulators, another such buffer and an argument, ride the reduction
// loop as iter_args: one load each before it, one store after.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME: (%{{.*}}: memref<8x50xf32>, %[[IDX:.*]]: memref<8xi64>)
// CHECK: %[[IN:.*]] = memref.alloc() : memref<8x50xf32>
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<8xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[M0:.*]] = memref.load %[[MAX]][%[[I]]]
// CHECK-NEXT: %[[I0:.*]] = memref.load %[[IDX]][%[[I]]]
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %[[J:.*]] = {{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[K:.*]] = %[[I0]]) -> (f32, i64)
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK-NOT: memref.
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]]#0, %[[MAX]][%[[I]]]
// CHECK-NEXT: memref.store %[[R]]#1, %[[IDX]][%[[I]]]
func.func @argmax(%logits: memref<8x50xf32>, %idx: memref<8xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c50 = arith.constant 50 : index
  %in = memref.alloc() : memref<8x50xf32>
  memref.copy %logits, %in : memref<8x50xf32> to memref<8x50xf32>
  %max = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c50 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x50xf32>
      %m = memref.load %max[%i] : memref<8xf32>
      %k = memref.load %idx[%i] : memref<8xi64>
      %jj = arith.index_cast %j : index to i64
      %m2 = arith.maximumf %x, %m : f32
      %gt = arith.cmpf ogt, %x, %m : f32
      %k2 = arith.select %gt, %jj, %k : i64
      memref.store %m2, %max[%i] : memref<8xf32>
      memref.store %k2, %idx[%i] : memref<8xi64>
    }
  }
  memref.dealloc %max : memref<8xf32>
  memref.dealloc %in : memref<8x50xf32>
  return
}

// -----

// A sum over both loops into one element moves out of both, inner first.
// CHECK-LABEL: func.func @total
// CHECK: %[[S:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: %[[S0:.*]] = memref.load %[[S]][]
// CHECK-NEXT: %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[S0]]) -> (f32)
// CHECK-NEXT: %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32)
// CHECK: scf.yield %[[INNER]]
// CHECK: memref.store %[[OUTER]], %[[S]][]
func.func @total(%in: memref<4x16xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %s = memref.alloc() : memref<f32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<4x16xf32>
      %a = memref.load %s[] : memref<f32>
      %b = arith.addf %x, %a : f32
      memref.store %b, %s[] : memref<f32>
    }
  }
  memref.copy %s, %out : memref<f32> to memref<f32>
  memref.dealloc %s : memref<f32>
  return
}

// -----

// With a trip count the IR does not know, the load before the loop must not
// run when the loop would not: the loop goes in an scf.if.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[IN:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[C0:.*]], %[[N]] : index
// CHECK-NEXT: scf.if %[[RUNS]] {
// CHECK-NEXT: %[[M0:.*]] = memref.load
// CHECK-NEXT: %[[R:.*]] = scf.for {{.*}} = %[[C0]] to %[[N]] {{.*}} iter_args(%{{.*}} = %[[M0]]) -> (f32)
// CHECK: memref.store %[[R]]
// CHECK-NEXT: }
func.func @dynamic(%in: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %n step %c1 {
    %x = memref.load %in[%j] : memref<?xf32>
    %a = memref.load %m[] : memref<f32>
    %b = arith.maximumf %x, %a : f32
    memref.store %b, %m[] : memref<f32>
  }
  %r = memref.load %m[] : memref<f32>
  memref.dealloc %m : memref<f32>
  return %r : f32
}

// -----

// Two arguments may be the same buffer: the store could write what a later
// iteration reads.
// CHECK-LABEL: func.func @may_alias
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.store
// CHECK-NEXT: }
func.func @may_alias(%in: memref<16xf32>, %acc: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %a = memref.load %acc[%c0] : memref<1xf32>
    %b = arith.addf %x, %a : f32
    memref.store %b, %acc[%c0] : memref<1xf32>
  }
  return
}

// -----

func.func private @opaque(memref<f32>)

// A call may read or write any buffer; a view of the accumulator's buffer
// is the buffer; a load after the store would read this iteration's value;
// a place that moves with the loop is no accumulator; a linalg op writes
// the accumulator's buffer (an op with regions has effects of its own).
// None is promoted.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: iter_args
// CHECK: return
func.func @kept(%in: memref<16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %s[] : memref<f32>
    memref.store %a, %s[] : memref<f32>
    func.call @opaque(%s) : (memref<f32>) -> ()
  }
  %t = memref.alloc() : memref<4xf32>
  %v = memref.subview %t[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %a = memref.load %t[%c1] : memref<4xf32>
    %b = arith.addf %x, %a : f32
    memref.store %b, %t[%c1] : memref<4xf32>
    %w = memref.load %v[%c0] : memref<2xf32, strided<[1], offset: 1>>
    memref.store %w, %out[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %a = memref.load %s[] : memref<f32>
    %b = arith.addf %x, %a : f32
    memref.store %b, %s[] : memref<f32>
    %c = memref.load %s[] : memref<f32>
    memref.store %c, %out[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %a = memref.load %out[%j] : memref<16xf32>
    %b = arith.addf %x, %a : f32
    memref.store %b, %out[%j] : memref<16xf32>
  }
  %zero = arith.constant 0.0 : f32
  scf.for %j = %c0 to %c16 step %c1 {
    linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
    %x = memref.load %in[%j] : memref<16xf32>
    %a = memref.load %s[] : memref<f32>
    %b = arith.addf %x, %a : f32
    memref.store %b, %s[] : memref<f32>
  }
  memref.dealloc %t : memref<4xf32>
  memref.dealloc %s : memref<f32>
  return
}
