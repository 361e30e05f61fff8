// RUN: tp-opt %s -split-input-file --tp-roll-repeated-calls | FileCheck %s

// An entry after tp-model-interface: layer i allocates its output, loads its
// two weights from `buffers` (slots 2i+1, 2i+2), calls the outlined block
// and frees the previous layer's output. Layers 1-4 (the first frees
// nothing) become a loop over a table of their slots, the activation
// carried in the header; after it, the last layer's output is the header's.

// CHECK: llvm.mlir.global internal constant @layers_slots0(dense<{{\[}}[3, 4], [5, 6], [7, 8], [9, 10]]> : tensor<4x2xi32>)
// CHECK-LABEL: llvm.func @layers(
// CHECK-SAME:      %[[BUFS:.*]]: !llvm.ptr)
// CHECK:         %[[SIZE:.*]] = llvm.mlir.constant(64 : i64)
// CHECK:         %[[A0:.*]] = llvm.call @malloc(%[[SIZE]])
// CHECK:         llvm.getelementptr %[[BUFS]][1]
// CHECK:         llvm.getelementptr %[[BUFS]][2]
// CHECK:         llvm.call @block(
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0 : i64)
// CHECK:         llvm.br ^[[HEADER:.*]](%[[ZERO]], %[[A0]] : i64, !llvm.ptr)
// CHECK:       ^[[HEADER]](%[[I:.*]]: i64, %[[PREV:.*]]: !llvm.ptr):
// CHECK:         %[[N:.*]] = llvm.mlir.constant(4 : i64)
// CHECK:         %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %[[N]]
// CHECK:         llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK:       ^[[BODY]]:
// CHECK:         %[[TABLE:.*]] = llvm.mlir.addressof @layers_slots0
// CHECK:         %[[A:.*]] = llvm.call @malloc(%[[SIZE]])
// CHECK:         %[[E0:.*]] = llvm.getelementptr %[[TABLE]][0, %[[I]], 0]
// CHECK:         %[[S0:.*]] = llvm.load %[[E0]] : !llvm.ptr -> i32
// CHECK:         %[[P0:.*]] = llvm.getelementptr %[[BUFS]][%[[S0]]] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[W:.*]] = llvm.load %[[P0]]
// CHECK:         %[[E1:.*]] = llvm.getelementptr %[[TABLE]][0, %[[I]], 1]
// CHECK:         %[[S1:.*]] = llvm.load %[[E1]] : !llvm.ptr -> i32
// CHECK:         %[[P1:.*]] = llvm.getelementptr %[[BUFS]][%[[S1]]]
// CHECK:         %[[V:.*]] = llvm.load %[[P1]]
// CHECK:         llvm.call @block(%[[PREV]], %[[W]], %[[V]], %[[A]])
// CHECK:         llvm.call @free(%[[PREV]])
// CHECK:         %[[NEXT:.*]] = llvm.add %[[I]], %{{.*}} : i64
// CHECK:         llvm.br ^[[HEADER]](%[[NEXT]], %[[A]] : i64, !llvm.ptr)
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.call @use(%[[PREV]])
// CHECK-NEXT:    llvm.call @free(%[[PREV]])
// CHECK-NEXT:    llvm.return

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @block(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @use(!llvm.ptr)

llvm.func @layers(%buffers: !llvm.ptr) {
  %size = llvm.mlir.constant(64 : i64) : i64
  %other = llvm.mlir.constant(128 : i64) : i64
  %x = llvm.load %buffers : !llvm.ptr -> !llvm.ptr
  %a0 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp0 = llvm.getelementptr %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w0 = llvm.load %wp0 : !llvm.ptr -> !llvm.ptr
  %vp0 = llvm.getelementptr %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v0 = llvm.load %vp0 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%x, %w0, %v0, %a0) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %a1 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp1 = llvm.getelementptr %buffers[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w1 = llvm.load %wp1 : !llvm.ptr -> !llvm.ptr
  %vp1 = llvm.getelementptr %buffers[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v1 = llvm.load %vp1 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a0, %w1, %v1, %a1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a0) : (!llvm.ptr) -> ()
  %a2 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp2 = llvm.getelementptr %buffers[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w2 = llvm.load %wp2 : !llvm.ptr -> !llvm.ptr
  %vp2 = llvm.getelementptr %buffers[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v2 = llvm.load %vp2 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a1, %w2, %v2, %a2) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a1) : (!llvm.ptr) -> ()
  %a3 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp3 = llvm.getelementptr %buffers[7] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w3 = llvm.load %wp3 : !llvm.ptr -> !llvm.ptr
  %vp3 = llvm.getelementptr %buffers[8] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v3 = llvm.load %vp3 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a2, %w3, %v3, %a3) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a2) : (!llvm.ptr) -> ()
  %a4 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp4 = llvm.getelementptr %buffers[9] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w4 = llvm.load %wp4 : !llvm.ptr -> !llvm.ptr
  %vp4 = llvm.getelementptr %buffers[10] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v4 = llvm.load %vp4 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a3, %w4, %v4, %a4) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a3) : (!llvm.ptr) -> ()
  llvm.call @use(%a4) : (!llvm.ptr) -> ()
  llvm.call @free(%a4) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A value of layer 3 read after the layers: the run ends with it (its
// value is the header's at the exit), and layers 4 and 5 stay as they are.

// CHECK: llvm.mlir.global internal constant @shortened_slots0(dense<{{\[}}[3, 4], [5, 6], [7, 8]]> : tensor<3x2xi32>)
// CHECK-LABEL: llvm.func @shortened(
// CHECK:       ^[[HEADER:.*]](%{{.*}}: i64, %[[PREV:.*]]: !llvm.ptr):
// CHECK:         llvm.mlir.constant(3 : i64)
// CHECK:         llvm.cond_br %{{.*}}, ^{{.*}}, ^[[EXIT:.*]]
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    %[[A4:.*]] = llvm.call @malloc
// CHECK:         llvm.getelementptr %{{.*}}[9]
// CHECK:         llvm.call @block(%[[PREV]], %{{.*}}, %{{.*}}, %[[A4]])
// CHECK-NEXT:    llvm.call @free(%[[PREV]])
// CHECK:         llvm.getelementptr %{{.*}}[11]
// CHECK:         llvm.call @free(%[[A4]])
// CHECK-NEXT:    llvm.call @use(%[[PREV]])

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @block(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @use(!llvm.ptr)

llvm.func @shortened(%buffers: !llvm.ptr) {
  %size = llvm.mlir.constant(64 : i64) : i64
  %other = llvm.mlir.constant(128 : i64) : i64
  %x = llvm.load %buffers : !llvm.ptr -> !llvm.ptr
  %a0 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp0 = llvm.getelementptr %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w0 = llvm.load %wp0 : !llvm.ptr -> !llvm.ptr
  %vp0 = llvm.getelementptr %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v0 = llvm.load %vp0 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%x, %w0, %v0, %a0) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %a1 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp1 = llvm.getelementptr %buffers[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w1 = llvm.load %wp1 : !llvm.ptr -> !llvm.ptr
  %vp1 = llvm.getelementptr %buffers[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v1 = llvm.load %vp1 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a0, %w1, %v1, %a1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a0) : (!llvm.ptr) -> ()
  %a2 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp2 = llvm.getelementptr %buffers[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w2 = llvm.load %wp2 : !llvm.ptr -> !llvm.ptr
  %vp2 = llvm.getelementptr %buffers[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v2 = llvm.load %vp2 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a1, %w2, %v2, %a2) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a1) : (!llvm.ptr) -> ()
  %a3 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp3 = llvm.getelementptr %buffers[7] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w3 = llvm.load %wp3 : !llvm.ptr -> !llvm.ptr
  %vp3 = llvm.getelementptr %buffers[8] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v3 = llvm.load %vp3 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a2, %w3, %v3, %a3) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a2) : (!llvm.ptr) -> ()
  %a4 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp4 = llvm.getelementptr %buffers[9] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w4 = llvm.load %wp4 : !llvm.ptr -> !llvm.ptr
  %vp4 = llvm.getelementptr %buffers[10] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v4 = llvm.load %vp4 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a3, %w4, %v4, %a4) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a3) : (!llvm.ptr) -> ()
  %a5 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp5 = llvm.getelementptr %buffers[11] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w5 = llvm.load %wp5 : !llvm.ptr -> !llvm.ptr
  %vp5 = llvm.getelementptr %buffers[12] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v5 = llvm.load %vp5 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a4, %w5, %v5, %a5) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a4) : (!llvm.ptr) -> ()
  llvm.call @use(%a3) : (!llvm.ptr) -> ()
  llvm.call @use(%a5) : (!llvm.ptr) -> ()
  llvm.call @free(%a5) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Two layers alike are not worth a loop.

// CHECK-LABEL: llvm.func @too_few(
// CHECK-NOT:     llvm.cond_br
// CHECK-COUNT-3: llvm.call @block(
// CHECK-NOT:     llvm.cond_br

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @block(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @use(!llvm.ptr)

llvm.func @too_few(%buffers: !llvm.ptr) {
  %size = llvm.mlir.constant(64 : i64) : i64
  %other = llvm.mlir.constant(128 : i64) : i64
  %x = llvm.load %buffers : !llvm.ptr -> !llvm.ptr
  %a0 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp0 = llvm.getelementptr %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w0 = llvm.load %wp0 : !llvm.ptr -> !llvm.ptr
  %vp0 = llvm.getelementptr %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v0 = llvm.load %vp0 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%x, %w0, %v0, %a0) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %a1 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp1 = llvm.getelementptr %buffers[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w1 = llvm.load %wp1 : !llvm.ptr -> !llvm.ptr
  %vp1 = llvm.getelementptr %buffers[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v1 = llvm.load %vp1 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a0, %w1, %v1, %a1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a0) : (!llvm.ptr) -> ()
  %a2 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp2 = llvm.getelementptr %buffers[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w2 = llvm.load %wp2 : !llvm.ptr -> !llvm.ptr
  %vp2 = llvm.getelementptr %buffers[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v2 = llvm.load %vp2 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a1, %w2, %v2, %a2) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a1) : (!llvm.ptr) -> ()
  llvm.call @use(%a2) : (!llvm.ptr) -> ()
  llvm.call @free(%a2) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Layer 3 allocates another size: no three layers in a row are alike.

// CHECK-NOT: _slots
// CHECK-LABEL: llvm.func @different_value(
// CHECK-NOT:     llvm.cond_br
// CHECK-COUNT-5: llvm.call @block(
// CHECK-NOT:     llvm.cond_br

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @block(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @use(!llvm.ptr)

llvm.func @different_value(%buffers: !llvm.ptr) {
  %size = llvm.mlir.constant(64 : i64) : i64
  %other = llvm.mlir.constant(128 : i64) : i64
  %x = llvm.load %buffers : !llvm.ptr -> !llvm.ptr
  %a0 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp0 = llvm.getelementptr %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w0 = llvm.load %wp0 : !llvm.ptr -> !llvm.ptr
  %vp0 = llvm.getelementptr %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v0 = llvm.load %vp0 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%x, %w0, %v0, %a0) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %a1 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp1 = llvm.getelementptr %buffers[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w1 = llvm.load %wp1 : !llvm.ptr -> !llvm.ptr
  %vp1 = llvm.getelementptr %buffers[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v1 = llvm.load %vp1 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a0, %w1, %v1, %a1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a0) : (!llvm.ptr) -> ()
  %a2 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp2 = llvm.getelementptr %buffers[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w2 = llvm.load %wp2 : !llvm.ptr -> !llvm.ptr
  %vp2 = llvm.getelementptr %buffers[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v2 = llvm.load %vp2 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a1, %w2, %v2, %a2) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a1) : (!llvm.ptr) -> ()
  %a3 = llvm.call @malloc(%other) : (i64) -> !llvm.ptr
  %wp3 = llvm.getelementptr %buffers[7] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w3 = llvm.load %wp3 : !llvm.ptr -> !llvm.ptr
  %vp3 = llvm.getelementptr %buffers[8] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v3 = llvm.load %vp3 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a2, %w3, %v3, %a3) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a2) : (!llvm.ptr) -> ()
  %a4 = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %wp4 = llvm.getelementptr %buffers[9] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w4 = llvm.load %wp4 : !llvm.ptr -> !llvm.ptr
  %vp4 = llvm.getelementptr %buffers[10] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %v4 = llvm.load %vp4 : !llvm.ptr -> !llvm.ptr
  llvm.call @block(%a3, %w4, %v4, %a4) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a3) : (!llvm.ptr) -> ()
  llvm.call @use(%a4) : (!llvm.ptr) -> ()
  llvm.call @free(%a4) : (!llvm.ptr) -> ()
  llvm.return
}
