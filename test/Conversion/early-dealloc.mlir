// RUN: tp-opt %s --tp-early-dealloc | FileCheck %s

func.func private @use(memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func private @opaque(memref<4x4xf32>) -> memref<4x4xf32>

// The dealloc follows the last use of the buffer or of a view of it.
// CHECK-LABEL: func.func @moved
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: %[[C:.*]] = memref.cast %[[V]]
// CHECK-NEXT: call @use(%[[C]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @moved(%f: f32) {
  %a = memref.alloc() : memref<4x4xf32>
  %v = memref.subview %a[0, 0] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1]>>
  linalg.fill ins(%f : f32) outs(%a : memref<4x4xf32>)
  %c = memref.cast %v : memref<2x2xf32, strided<[4, 1]>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @use(%c) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  %b = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%f : f32) outs(%b : memref<4x4xf32>)
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<4x4xf32>
  return
}

// A use that may alias without being a view keeps the dealloc in place.
// CHECK-LABEL: func.func @kept
// CHECK: call @opaque
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @kept(%f: f32) {
  %a = memref.alloc() : memref<4x4xf32>
  %r = call @opaque(%a) : (memref<4x4xf32>) -> memref<4x4xf32>
  linalg.fill ins(%f : f32) outs(%r : memref<4x4xf32>)
  memref.dealloc %a : memref<4x4xf32>
  return
}
