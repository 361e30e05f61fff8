// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=4" -verify-diagnostics
// RUN: not tp-opt %s -split-input-file --tp-shard="tp-size=0" 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: tp-size must be at least 1, got 0

// The hidden dimension 6 does not divide into 4 parts.

func.func @ffn_not_divisible(%x: tensor<4x8xf32>, %up: tensor<8x6xf32>, %down: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error @below {{no tensor-parallel cut for 4 ranks of output dimension 1 of 'tensor<4x6xf32>' keeps the values after it local}}
  // expected-note @below {{'linalg.matmul' cannot cut dimension 1 of tensor<4x6xf32> into 4 equal parts}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ye = tensor.empty() : tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x6xf32>, tensor<6x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Two heads of 8 for 4 ranks: the only cut left falls inside each head and
// needs the scores summed before softmax. (The cut that gives each head to 2
// ranks, which split its 8 dimensions, fails at the scores too.)

#q = affine_map<(h, s, t, e) -> (s, h, e)>
#k = affine_map<(h, s, t, e) -> (t, h, e)>
#sc = affine_map<(h, s, t, e) -> (h, s, t)>
#v = affine_map<(h, s, t, e) -> (t, h, e)>
#o = affine_map<(h, s, t, e) -> (s, h, e)>
func.func @heads_not_divisible(%x: tensor<4x16xf32>, %wqkv: tensor<16x48xf32>, %wo: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x48xf32>) -> tensor<4x48xf32>
  %qkv = linalg.matmul ins(%x, %wqkv : tensor<4x16xf32>, tensor<16x48xf32>) outs(%init : tensor<4x48xf32>) -> tensor<4x48xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  %k2 = tensor.extract_slice %qkv[0, 16] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  // expected-note @below {{a cut without it was rejected: 'tensor.extract_slice' takes [32, 48) of a dimension cut in blocks of 48: not whole blocks}}
  %v2 = tensor.extract_slice %qkv[0, 32] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  %q = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %k = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %v = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %se = tensor.empty() : tensor<2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // expected-error @below {{tensor-parallel cut for 4 ranks needs an all-reduce of partial sums of 'tensor<2x4x4xf32>' here (128 bytes per rank per forward pass)}}
  // expected-note @below {{a cut without it was rejected: 'linalg.generic' reduces over loop 3, which the 2 ranks holding each part of loop 0 split among them: no all-reduce over all ranks combines their results}}
  %scores = linalg.generic {indexing_maps = [#q, #k, #sc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%sinit : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %probs = linalg.softmax dimension(2) ins(%scores : tensor<2x4x4xf32>) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<4x2x8xf32>
  %oinit = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %ctx = linalg.generic {indexing_maps = [#sc, #v, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%probs, %v : tensor<2x4x4xf32>, tensor<4x2x8xf32>) outs(%oinit : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8xf32>
  %ctx2 = tensor.collapse_shape %ctx [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %ye = tensor.empty() : tensor<4x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%ctx2, %wo : tensor<4x16xf32>, tensor<16x16xf32>) outs(%yinit : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A weight given as a constant is left whole (only arguments are cut), with a
// warning; tp-externalize-weights would make it an argument.
func.func @constant_weight(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{this weight and 1 more are constants, so they are not cut: every rank holds them and computes with them whole; tp-import (weights=FILE keeps their values; tp-compile --weights-out) makes constants arguments that tp-shard cuts}}
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<8x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w2 = arith.constant dense_resource<w2> : tensor<8x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = linalg.matmul ins(%y, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y2 : tensor<4x8xf32>
}

// -----

func.func @one_constant_weight(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{this weight is a constant, so it is not cut: every rank holds it and computes with it whole; tp-import (weights=FILE keeps their values; tp-compile --weights-out) makes constants arguments that tp-shard cuts}}
  %w = arith.constant dense_resource<w> : tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Splat weights (as in a model whose weights were stripped) are not cut
// either, and said so.
func.func @splat_weights(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{this weight and 1 more are splat constants (one value each, as in weights stripped from a model), so they are not cut: every rank holds them and computes with them whole; tp-import (tp-compile --weights-out) makes the splats read as weights arguments that tp-shard cuts}}
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = linalg.matmul ins(%y, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y2 : tensor<4x8xf32>
}

// -----

// Weights carved out of one packed argument (buddy-mlir's runtime layout)
// are not cut: only whole arguments are.
func.func @packed_weights(%x: tensor<4x8xf32>, %packed: tensor<128xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{this weight and 1 more are slices of an argument that packs several weights, so they are not cut: every rank holds them and computes with them whole; tp-import (tp-compile) makes each static slice of a flat argument an argument of its own, read from the packed checkpoint tensor, which tp-shard cuts}}
  %s1 = tensor.extract_slice %packed[0] [64] [1] : tensor<128xf32> to tensor<64xf32>
  %w1 = tensor.expand_shape %s1 [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %s2 = tensor.extract_slice %packed[64] [64] [1] : tensor<128xf32> to tensor<64xf32>
  %w2 = tensor.expand_shape %s2 [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = linalg.matmul ins(%y, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y2 : tensor<4x8xf32>
}

// -----

// tp-shard works on tensors: an op on buffers passes no value on to follow.

func.func @buffers(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @below {{reads or writes a buffer: tp-shard works on tensors (run it before bufferization)}}
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Already sharded input is refused, not cut a second time: the module's tp
// size, a collective, a shard attribute.

// expected-error @below {{module is already sharded for 2 ranks ('tp.size'); tp-shard takes the unsharded graph}}
module attributes {tp.size = 2 : i64} {
  func.func @sharded(%x: tensor<8x768xf32>) -> tensor<8x1536xf32> {
    %g = tp.all_gather %x dim 1 : tensor<8x768xf32> -> tensor<8x1536xf32>
    return %g : tensor<8x1536xf32>
  }
}

// -----

func.func @collective(%x: tensor<8x768xf32>) -> tensor<8x1536xf32> {
  // expected-error @below {{is a collective of an already sharded program; tp-shard takes the unsharded graph}}
  %g = tp.all_gather %x dim 1 : tensor<8x768xf32> -> tensor<8x1536xf32>
  return %g : tensor<8x1536xf32>
}

// -----

// expected-error @below {{argument 1 is already a shard ('tp.shard'); tp-shard takes the unsharded graph}}
func.func @shard_attr(%x: tensor<4x16xf32>, %w: tensor<16x8xf32> {tp.shard = #tp.shard<dim = 1>}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%i : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A TOSA graph parses but must go through --tp-import first.
func.func @tosa(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @below {{'tosa.sigmoid' op is not linalg: tp-shard takes func, arith, math, tensor and linalg; run --tp-import first}}
  %y = tosa.sigmoid %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// So does torch-mlir's attention.
func.func @tm_tensor(%q: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{'tm_tensor.attention' op is not linalg: tp-shard takes func, arith, math, tensor and linalg; run --tp-import first}}
  %r = tm_tensor.attention ins(%q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
