// RUN: tp-opt %s -split-input-file --tp-model-interface -verify-diagnostics | FileCheck %s

// After the lowering: the manifest text becomes a global that
// tp_model_manifest returns, and each entry's symbol (tp_model_forward)
// passes one descriptor per argument and result to its C interface. Arguments the cuda
// lowering stored as bf16 say so in the manifest; both module attributes go.

// CHECK-LABEL: module {
// CHECK: llvm.func @tp_model_forward(%[[BUFS:.*]]: !llvm.ptr) {
// CHECK:   %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0]
// CHECK:   %[[D0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:   %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1]
// CHECK:   %[[D1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:   %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2]
// CHECK:   %[[D2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK:   llvm.call @_mlir_ciface_forward(%[[D0]], %[[D1]], %[[D2]])
// CHECK:   llvm.return
// CHECK: llvm.mlir.global internal constant @tp_manifest_text("{\22functions\22:[{\22args\22:[{\22dtype\22:\22f32\22},{\22dtype\22:\22bf16\22}],\22name\22:\22forward\22,\22results\22:[{\22dtype\22:\22f32\22}],\22symbol\22:\22tp_model_forward\22}]}\00")
// CHECK: llvm.func @tp_model_manifest() -> !llvm.ptr {
// CHECK:   %[[A:.*]] = llvm.mlir.addressof @tp_manifest_text : !llvm.ptr
// CHECK:   llvm.return %[[A]] : !llvm.ptr
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22forward\22,\22symbol\22:\22tp_model_forward\22,\22args\22:[{\22dtype\22:\22f32\22},{\22dtype\22:\22f32\22}],\22results\22:[{\22dtype\22:\22f32\22}]}]}", tpcompile.bf16_args = {forward = array<i64: 1>}} {
  llvm.func @_mlir_ciface_forward(!llvm.ptr, !llvm.ptr, !llvm.ptr)
}

// -----

// The entry's expanded form (one argument per descriptor field) moves into
// its C interface, which branches to it with the unpacked fields; no
// function takes them all as arguments any more.

// CHECK-LABEL: module {
// CHECK-NOT: llvm.func @forward(
// CHECK: llvm.func @_mlir_ciface_forward(%[[P:.*]]: !llvm.ptr) {
// CHECK:   %[[D:.*]] = llvm.load %[[P]]
// CHECK:   %[[F:.*]] = llvm.extractvalue %[[D]][1]
// CHECK:   llvm.br ^[[BODY:.*]](%[[F]] : !llvm.ptr)
// CHECK: ^[[BODY]](%[[A:.*]]: !llvm.ptr):
// CHECK:   llvm.store %{{.*}}, %[[A]]
// CHECK:   llvm.return
// CHECK-NOT: llvm.func @forward(
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22forward\22,\22symbol\22:\22tp_model_forward\22,\22args\22:[{\22dtype\22:\22f32\22}],\22results\22:[]}]}"} {
  llvm.func @forward(%a: !llvm.ptr) {
    %c = llvm.mlir.constant(1.0 : f32) : f32
    llvm.store %c, %a : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @_mlir_ciface_forward(%p: !llvm.ptr) {
    %d = llvm.load %p : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
    %f = llvm.extractvalue %d[1] : !llvm.struct<(ptr, ptr, i64)>
    llvm.call @forward(%f) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// expected-error @+1 {{no 'tp.manifest': run tp-model-manifest before the lowering}}
module {
  llvm.func @_mlir_ciface_forward(!llvm.ptr)
}

// -----

// Several entries, each with its symbol; a result updated in place
// (tp-in-place-results) has a slot the entry does not read: @decode's C
// interface takes argument 0 and result 1 (slots 0 and 2).

// CHECK-LABEL: module {
// CHECK: llvm.func @tp_model_prefill(%[[P:.*]]: !llvm.ptr) {
// CHECK:   llvm.getelementptr %[[P]][0]
// CHECK:   llvm.getelementptr %[[P]][1]
// CHECK:   llvm.call @_mlir_ciface_prefill(
// CHECK: llvm.func @tp_model_decode(%[[D:.*]]: !llvm.ptr) {
// CHECK:   %[[S0:.*]] = llvm.getelementptr %[[D]][0]
// CHECK:   %[[A0:.*]] = llvm.load %[[S0]]
// CHECK-NOT: llvm.getelementptr %[[D]][1]
// CHECK:   %[[S2:.*]] = llvm.getelementptr %[[D]][2]
// CHECK:   %[[R1:.*]] = llvm.load %[[S2]]
// CHECK:   llvm.call @_mlir_ciface_decode(%[[A0]], %[[R1]])
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22prefill\22,\22symbol\22:\22tp_model_prefill\22,\22args\22:[{\22dtype\22:\22f32\22}],\22results\22:[{\22dtype\22:\22f32\22}]},{\22name\22:\22decode\22,\22symbol\22:\22tp_model_decode\22,\22args\22:[{\22dtype\22:\22f32\22}],\22results\22:[{\22dtype\22:\22f32\22,\22in_place\22:0},{\22dtype\22:\22i64\22}]}]}"} {
  llvm.func @_mlir_ciface_prefill(!llvm.ptr, !llvm.ptr)
  llvm.func @_mlir_ciface_decode(!llvm.ptr, !llvm.ptr)
}

// -----

// expected-error @+1 {{'tp.manifest' is not a manifest (JSON with functions)}}
module attributes {tp.manifest = "{\22function\22:\22forward\22"} {
  llvm.func @_mlir_ciface_forward(!llvm.ptr)
}

// -----

// expected-error @+1 {{a function of 'tp.manifest' lacks its name, symbol, args or results}}
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22forward\22,\22args\22:[],\22results\22:[]}]}"} {
  llvm.func @_mlir_ciface_forward(!llvm.ptr)
}

// -----

// expected-error @+1 {{no @_mlir_ciface_forward: the entry was not lowered with llvm.emit_c_interface}}
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22forward\22,\22symbol\22:\22tp_model_forward\22,\22args\22:[],\22results\22:[]}]}"} {
  llvm.func @forward()
}

// -----

// expected-error @+1 {{'tpcompile.bf16_args' names argument 3 of @forward, which the manifest does not have}}
module attributes {tp.manifest = "{\22functions\22:[{\22name\22:\22forward\22,\22symbol\22:\22tp_model_forward\22,\22args\22:[{\22dtype\22:\22f32\22}],\22results\22:[]}]}", tpcompile.bf16_args = {forward = array<i64: 3>}} {
  llvm.func @_mlir_ciface_forward(!llvm.ptr)
}

// -----

// expected-error @+1 {{'tp.manifest' must be a string on a module}}
module attributes {tp.manifest = 3 : i64} {
}
