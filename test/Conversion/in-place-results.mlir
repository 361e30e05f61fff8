// RUN: tp-opt %s -split-input-file --tp-in-place-results -verify-diagnostics | FileCheck %s

// A decode step after one-shot bufferization: the cache comes back in its
// argument's buffer (the row written in place), the next ids in a fresh
// one. The cache result goes, and the manifest says which argument holds
// it; the fresh result stays, for an out-parameter.

// CHECK-LABEL: module attributes {tp.manifest = "{\22functions\22:[{\22args\22:[{\22name\22:\22ids\22},{\22name\22:\22cache.0.k\22}],\22name\22:\22decode\22,\22results\22:[{\22name\22:\22next_ids\22},{\22in_place\22:1,\22name\22:\22cache.0.k\22}],\22symbol\22:\22tp_model_decode\22}]}"}
// CHECK: func.func @decode(%[[IDS:.*]]: memref<1x1xi64>, %[[K:.*]]: memref<1x2x8x4xf32>) -> memref<1x1xi64>
// CHECK:   memref.store %{{.*}}, %[[K]]
// CHECK:   return %[[NEXT:.*]] : memref<1x1xi64>
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22symbol\22:\22tp_model_decode\22,\22args\22:[{\22name\22:\22ids\22},{\22name\22:\22cache.0.k\22}],\22results\22:[{\22name\22:\22next_ids\22},{\22name\22:\22cache.0.k\22}]}]}"} {
  func.func @decode(%ids: memref<1x1xi64>, %k: memref<1x2x8x4xf32>) -> (memref<1x1xi64>, memref<1x2x8x4xf32>) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %k[%c0, %c0, %c0, %c0] : memref<1x2x8x4xf32>
    %next = memref.alloc() : memref<1x1xi64>
    memref.copy %ids, %next : memref<1x1xi64> to memref<1x1xi64>
    return %next, %k : memref<1x1xi64>, memref<1x2x8x4xf32>
  }
}

// -----

// Without a manifest (not a model's lowering) nothing changes.
// CHECK-LABEL: func.func @plain(%{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK:   return %{{.*}} : memref<4xf32>
func.func @plain(%m: memref<4xf32>) -> memref<4xf32> {
  return %m : memref<4xf32>
}

// -----

// expected-error @+1 {{the manifest's function @decode is not in the module}}
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22results\22:[]}]}"} {
}

// -----

module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22decode\22,\22results\22:[]}]}"} {
  // expected-error @+1 {{does not match its manifest entry (run tp-model-manifest before the lowering)}}
  func.func @decode(%m: memref<4xf32>) -> memref<4xf32> {
    return %m : memref<4xf32>
  }
}
