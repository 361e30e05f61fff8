// RUN: tp-opt %s --tp-strided-copies-to-linalg | FileCheck %s

// A decode step's cache write: the new keys into their position of the
// cache, a strided view. It becomes linalg.copy; copies the LLVM lowering
// makes a memcpy (two buffers, or a contiguous view with an offset) stay,
// as does an unranked one.
// CHECK-LABEL: func.func @cache_write
// CHECK-SAME: (%[[NEW:.*]]: memref<2x1x1x32xf32>, %[[CACHE:.*]]: memref<2x1x8x32xf32>, %[[POS:.*]]: index, %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[U:.*]]: memref<*xf32>, %[[V:.*]]: memref<*xf32>, %[[W:.*]]: memref<16xf32>)
// CHECK: %[[AT:.*]] = memref.subview %[[CACHE]]
// CHECK-NEXT: linalg.copy ins(%[[NEW]] : memref<2x1x1x32xf32>) outs(%[[AT]] : memref<2x1x1x32xf32, strided<[256, 256, 32, 1], offset: ?>>)
// CHECK-NEXT: memref.copy %[[A]], %[[B]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: memref.copy %[[U]], %[[V]] : memref<*xf32> to memref<*xf32>
// CHECK-NEXT: %[[PART:.*]] = memref.subview %[[W]]
// CHECK-NEXT: memref.copy %[[A]], %[[PART]] : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
func.func @cache_write(%new: memref<2x1x1x32xf32>, %cache: memref<2x1x8x32xf32>, %pos: index, %a: memref<4xf32>, %b: memref<4xf32>, %u: memref<*xf32>, %v: memref<*xf32>, %w: memref<16xf32>) {
  %at = memref.subview %cache[0, 0, %pos, 0] [2, 1, 1, 32] [1, 1, 1, 1] : memref<2x1x8x32xf32> to memref<2x1x1x32xf32, strided<[256, 256, 32, 1], offset: ?>>
  memref.copy %new, %at : memref<2x1x1x32xf32> to memref<2x1x1x32xf32, strided<[256, 256, 32, 1], offset: ?>>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  memref.copy %u, %v : memref<*xf32> to memref<*xf32>
  %part = memref.subview %w[%pos] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: ?>>
  memref.copy %a, %part : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
  return
}
