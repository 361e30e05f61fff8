// RUN: tp-opt %s -split-input-file --tp-model-manifest -verify-diagnostics | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-model-manifest="backend=cuda" -verify-diagnostics | FileCheck %s --check-prefix=CUDA

// The manifest of a rank's program at tp 2: the full shape of a cut weight
// is its local shape times the tp size along the cut; the argument
// attributes move into it, and the entry gets a C interface. A named
// argument gets no role (the launcher reads it from the checkpoint if one
// holds it), an unnamed one beside it is an input.

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cpu\22,\22functions\22:[{\22args\22:[{\22dtype\22:\22f32\22,\22local_shape\22:[4,8],\22name\22:\22arg0\22,\22named\22:false,\22role\22:\22input\22,\22shape\22:[4,8],\22shard\22:null},{\22dtype\22:\22f32\22,\22local_shape\22:[8,6],\22name\22:\22qkv\22,\22named\22:true,\22shape\22:[8,12],\22shard\22:{\22dim\22:1,\22outer\22:3}}],\22name\22:\22forward\22,\22results\22:[{\22dtype\22:\22f32\22,\22local_shape\22:[4,6],\22name\22:\22result0\22,\22shape\22:[4,6],\22shard\22:null}],\22symbol\22:\22tp_model_forward\22}],\22tp_size\22:2}", tp.size = 2 : i64}
// CHECK: func.func private @helper(tensor<4x6xf32>)
// CHECK: func.func @forward(%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<8x6xf32> {bufferization.writable = false}) -> tensor<4x6xf32> attributes {llvm.emit_c_interface}
// CUDA: \22backend\22:\22cuda\22
module attributes {tp.size = 2 : i64} {
  func.func private @helper(tensor<4x6xf32>)
  func.func @forward(%x: tensor<4x8xf32>,
                     %w: tensor<8x6xf32> {tp.name = "qkv", tp.shard = #tp.shard<dim = 1, outer = 3>})
      -> tensor<4x6xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x6xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
    %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
    return %h : tensor<4x6xf32>
  }
}

// -----

// Without tp.size (not sharded): one rank.
// CHECK-LABEL: module attributes {tp.manifest = "{{.*}}\22tp_size\22:1}"}
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// Arguments are f32 or integers (model-manifest-integers.mlir), not f16.
// expected-error @+1 {{argument 0 must be a static tensor of f32, i64, i32 or i1, got 'tensor<1x12xf16>'}}
func.func @half(%x: tensor<1x12xf16>) -> tensor<1x12xf32> {
  %e = tensor.empty() : tensor<1x12xf32>
  return %e : tensor<1x12xf32>
}

// -----

// expected-error @+1 {{result 0 must be a static tensor of f32, i64, i32 or i1, got 'tensor<?xf32>'}}
func.func @dynamic(%x: tensor<2xf32>) -> tensor<?xf32> {
  %d = tensor.cast %x : tensor<2xf32> to tensor<?xf32>
  return %d : tensor<?xf32>
}

// -----

// A sliding layer's cache, a ring of 4 rows serving positions [0, 32).
// CHECK-LABEL: module attributes {tp.manifest =
// CHECK-SAME: \22name\22:\22cache.0.k\22,\22named\22:true,\22positions\22:32,\22shape\22:[1,2,4,8]
func.func @decode(%c: tensor<1x2x4x8xf32> {tp.name = "cache.0.k", tp.positions = 32 : i64}) -> tensor<1x2x4x8xf32> {
  return %c : tensor<1x2x4x8xf32>
}

// -----

// A checkpoint shape larger than the argument's: nothing to pad.
// expected-error @+1 {{argument 0 is held in the checkpoint as [9, 8], which [8, 8] does not pad}}
func.func @bad_padding(%w: tensor<8x8xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 9, 8>}) -> tensor<8x8xf32> {
  return %w : tensor<8x8xf32>
}

// -----

// Three weights packed as rows of one tensor [8 + 2 + 2, 4], q cut at tp 2,
// k and v whole: the same name, each at its own rows.
// CHECK-LABEL: module attributes {tp.manifest =
// CHECK-SAME: \22checkpoint_offset\22:0,\22checkpoint_shape\22:[12,4],{{.*}}\22local_shape\22:[4,4],\22name\22:\22qkv\22,\22named\22:true,\22role\22:\22weight\22,\22shape\22:[8,4],\22shard\22:{\22dim\22:0,\22outer\22:1}
// CHECK-SAME: \22checkpoint_offset\22:8,\22checkpoint_shape\22:[12,4],\22dtype\22:\22f32\22,\22local_shape\22:[2,4]
// CHECK-SAME: \22checkpoint_offset\22:10,\22checkpoint_shape\22:[12,4],\22dtype\22:\22f32\22,\22local_shape\22:[2,4]
module attributes {tp.size = 2 : i64} {
  func.func @forward(
      %q: tensor<4x4xf32> {tp.name = "qkv", tp.checkpoint_shape = array<i64: 12, 4>, tp.checkpoint_offset = 0 : i64, tp.shard = #tp.shard<dim = 0, outer = 1>},
      %k: tensor<2x4xf32> {tp.name = "qkv", tp.checkpoint_shape = array<i64: 12, 4>, tp.checkpoint_offset = 8 : i64},
      %v: tensor<2x4xf32> {tp.name = "qkv", tp.checkpoint_shape = array<i64: 12, 4>, tp.checkpoint_offset = 10 : i64}) -> tensor<2x4xf32> {
    return %v : tensor<2x4xf32>
  }
}

// -----

// Rows of a packed tensor beside the whole tensor of the same name.
// expected-error @+1 {{arguments 0 and 1 are both named 'w' but read rows of [12, 4] and the whole tensor}}
func.func @rows_and_whole(%a: tensor<4x4xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 12, 4>, tp.checkpoint_offset = 0 : i64},
                          %b: tensor<12x4xf32> {tp.name = "w"}) -> tensor<4x4xf32> {
  return %a : tensor<4x4xf32>
}

// -----

// Rows past the packed tensor's end.
// expected-error @+1 {{argument 0 of shape [4, 4] is not whole rows from 10 of [12, 4], as it is held in the checkpoint}}
func.func @rows_past_the_end(%w: tensor<4x4xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 12, 4>, tp.checkpoint_offset = 10 : i64}) -> tensor<4x4xf32> {
  return %w : tensor<4x4xf32>
}

// -----

// Rows of a wider tensor.
// expected-error @+1 {{argument 0 of shape [4, 4] is not whole rows from 0 of [12, 8], as it is held in the checkpoint}}
func.func @rows_of_a_wider(%w: tensor<4x4xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 12, 8>, tp.checkpoint_offset = 0 : i64}) -> tensor<4x4xf32> {
  return %w : tensor<4x4xf32>
}

// -----

// Weights packed in one flat tensor (buddy-mlir's parameters, tp-unpack-weights):
// a [2, 4] matrix cut at tp 2 from element 4 of a [12].
// CHECK-LABEL: module attributes {tp.manifest =
// CHECK-SAME: \22checkpoint_offset\22:4,\22checkpoint_shape\22:[12],{{.*}}\22local_shape\22:[2,2],{{.*}}\22shape\22:[2,4],\22shard\22:{\22dim\22:1,\22outer\22:1}
module attributes {tp.size = 2 : i64} {
  func.func @flat(%w: tensor<2x2xf32> {tp.name = "params", tp.checkpoint_shape = array<i64: 12>, tp.checkpoint_offset = 4 : i64, tp.shard = #tp.shard<dim = 1, outer = 1>}) -> tensor<2x2xf32> {
    return %w : tensor<2x2xf32>
  }
}

// -----

// Elements of a packed matrix that are not whole rows of it.
// expected-error @+1 {{argument 0 of shape [3] is not whole rows from 2 of [6, 2], as it is held in the checkpoint}}
func.func @part_of_a_row(%w: tensor<3xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 6, 2>, tp.checkpoint_offset = 2 : i64}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// -----

// expected-error @+1 {{arguments 1 and 2 are both named 'w' but take different shapes: [8, 16] and [8, 8]}}
func.func @same_name(%x: tensor<4x8xf32>, %a: tensor<8x16xf32> {tp.name = "w"},
                     %b: tensor<8x8xf32> {tp.name = "w"}) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}

// -----

// Every public function with a body is an entry (a generating model's
// @prefill and @decode), exported as tp_model_<name>. A result keeps its
// name, and a cut one (a KV cache) its shard and full shape; the result
// attributes go with the argument attributes.

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cpu\22,\22functions\22:[{{{.*}}\22name\22:\22prefill\22,{{.*}}\22symbol\22:\22tp_model_prefill\22},{\22args\22:[{{{.*}}},{\22dtype\22:\22f32\22,\22local_shape\22:[1,1,8,4],\22name\22:\22cache.0.k\22,\22named\22:true,\22shape\22:[1,2,8,4],\22shard\22:{\22dim\22:1,\22outer\22:1}}],\22name\22:\22decode\22,\22results\22:[{\22dtype\22:\22f32\22,\22local_shape\22:[1,1,8,4],\22name\22:\22cache.0.k\22,\22shape\22:[1,2,8,4],\22shard\22:{\22dim\22:1,\22outer\22:1}}],\22symbol\22:\22tp_model_decode\22}],\22tp_size\22:2}", tp.size = 2 : i64}
// CHECK: func.func @prefill(%{{.*}}: tensor<2xf32> {bufferization.writable = false}) -> tensor<2xf32> attributes {llvm.emit_c_interface}
// The cache, returned under its name, may be updated in its buffer; the ids
// may not (the launcher passes the same inputs and weights to every call).
// CHECK: func.func @decode(%{{.*}}: tensor<1x1xi64> {bufferization.writable = false}, %{{.*}}: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> attributes {llvm.emit_c_interface}
module attributes {tp.size = 2 : i64} {
  func.func @prefill(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
  func.func @decode(%ids: tensor<1x1xi64> {tp.name = "ids"},
                    %k: tensor<1x1x8x4xf32> {tp.name = "cache.0.k", tp.shard = #tp.shard<dim = 1>})
      -> (tensor<1x1x8x4xf32> {tp.name = "cache.0.k", tp.shard = #tp.shard<dim = 1>}) {
    return %k : tensor<1x1x8x4xf32>
  }
}

// -----

// A generating model's end ids (its config's eos_token_id) go into the
// manifest, for the launcher to stop at.
// CHECK-LABEL: module attributes {tp.eos_token_ids = array<i64: 5, 7>, tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cpu\22,\22eos_token_ids\22:[5,7],
module attributes {tp.eos_token_ids = array<i64: 5, 7>} {
  func.func @prefill(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// Two entries whose names map to one C symbol.
func.func @"step.1"(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
// expected-error @+1 {{exported as tp_model_step_1 like @step.1: rename one of them}}
func.func @step_1(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{no function with a body to compile}}
module {
  func.func private @external(tensor<2xf32>)
}

