// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=2" -verify-diagnostics

// Each reason of the sharding analysis not to cut, once. The column matmul
// would cut dimension 1 of %h; the op after it cannot carry that cut at any
// tp size, so the matmul is left whole on every rank, and the remark there
// names the op in a note (where an all-gather would do inside a pair, it is
// an error at the op that needs it instead).

//===----------------------------------------------------------------------===//
// linalg ops
//===----------------------------------------------------------------------===//

// A 1-D convolution over the hidden dimension reads it at d1 + d2: a window
// straddles two ranks' parts.

#x = affine_map<(d0, d1, d2) -> (d0, d1 + d2)>
#k = affine_map<(d0, d1, d2) -> (d2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @conv_over_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %k: tensor<2xf32>) -> tensor<4x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ce = tensor.empty() : tensor<4x7xf32>
  %cinit = linalg.fill ins(%zero : f32) outs(%ce : tensor<4x7xf32>) -> tensor<4x7xf32>
  // expected-note @+1 {{'linalg.generic' indexes cut dimension 1 by d1 + d2, not by a single loop}}
  %c = linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %k : tensor<4x8xf32>, tensor<2xf32>) outs(%cinit : tensor<4x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x7xf32>
  return %c : tensor<4x7xf32>
}

// -----

// An outer sum h[i, j] + h[i, k] reads the cut dimension through two loops.

#j = affine_map<(d0, d1, d2) -> (d0, d1)>
#k = affine_map<(d0, d1, d2) -> (d0, d2)>
#o = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @two_loops(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %oe = tensor.empty() : tensor<4x8x8xf32>
  // expected-note @+1 {{'linalg.generic' receives two different cuts (loop 1 and loop 2)}}
  %s = linalg.generic {indexing_maps = [#j, #k, #o], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%oe : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  return %s : tensor<4x8x8xf32>
}

// -----

// A max along a "reduction" loop that its output map also names, whose
// result the add after it needs cut: a max over a rank's part is not a part
// of the max. (Valid linalg; only an output map that names the reduction
// loop lets a reduction's result be cut. Named ops never write one.)

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @max_needed_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %me = tensor.empty() : tensor<4x8xf32>
  // expected-note @+1 {{'linalg.generic' reduces over the cut loop but its result is needed cut}}
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%me : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  %a = linalg.add ins(%h, %m : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ae : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// The same with a sum of products of two cut values: each rank would hold
// partial sums, not a part.

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @sum_needed_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %se = tensor.empty() : tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%se : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'linalg.generic' sums over the cut loop but its result is needed cut}}
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "reduction"]}
      ins(%h, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%sinit : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  %a = linalg.add ins(%h, %s : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ae : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// Sum and sum of squares of each row in one op (a norm's statistics): each
// would need an all-reduce, but only single result reductions get one.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @two_sums(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %re = tensor.empty() : tensor<4xf32>
  %rinit = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  // expected-note @+1 {{'linalg.generic' sums several results over the cut loop; only single result reductions get an all-reduce}}
  %s:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%rinit, %rinit : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %sq = arith.mulf %a, %a : f32
    %r0 = arith.addf %a, %o0 : f32
    %r1 = arith.addf %sq, %o1 : f32
    linalg.yield %r0, %r1 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %s#0, %s#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A bias read at d0 + d1 (a relative position) mixes the cut loop with
// another: a rank's part of it is not one block.

#id = affine_map<(d0, d1) -> (d0, d1)>
#rel = affine_map<(d0, d1) -> (d0 + d1)>
func.func @mixed_index(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %b: tensor<11xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  // expected-note @+1 {{'linalg.generic' indexes an operand by d0 + d1, which mixes the cut loop with others}}
  %a = linalg.generic {indexing_maps = [#id, #rel, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b : tensor<4x8xf32>, tensor<11xf32>) outs(%ae : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// Softmax over the cut dimension whose result the add after it needs cut.

func.func @softmax_needed_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %pe = tensor.empty() : tensor<4x8xf32>
  // expected-note @+1 {{'linalg.softmax' normalises over the cut dimension but its result is needed cut}}
  %p = linalg.softmax dimension(1) ins(%h : tensor<4x8xf32>) outs(%pe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  %a = linalg.add ins(%h, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ae : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// A row max over the cut dimension next to a column -> row pair: the pair
// is clean, the max is combined from the ranks' partial maxima, one
// all-reduce more than the pair costs.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %me = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{tensor-parallel cut for 2 ranks needs an all-reduce (max) of partial results of 'tensor<4xf32>' here (16 bytes per rank per forward pass): 'linalg.generic' reduces over the cut dimension: each rank reduces its part; accept it with allow-fallback=true (tp-compile: --allow-fallback)}}
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %m : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// The same with a softmax over the cut dimension.

func.func @softmax_over_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %pe = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{tensor-parallel cut for 2 ranks needs an all-gather of 'tensor<4x8xf32>' here (128 bytes per rank per forward pass): 'linalg.softmax' normalises over the cut dimension; accept it with allow-fallback=true (tp-compile: --allow-fallback)}}
  %p = linalg.softmax dimension(1) ins(%h : tensor<4x8xf32>) outs(%pe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %p : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// tensor ops
//===----------------------------------------------------------------------===//

// Every other column: a stride on the cut dimension.

func.func @strided_slice(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.extract_slice' slices a cut dimension with a dynamic offset or a stride}}
  %s = tensor.extract_slice %h[0, 0] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// One column, dropped from the result: it lives on one rank only.

func.func @single_column(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.extract_slice' takes a single index of a cut dimension}}
  %s = tensor.extract_slice %h[0, 3] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A slice of an argument added to %h must be cut like it: its columns
// [1, 9) of 10 are not whole blocks of the argument.

func.func @slice_not_blocks(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %t: tensor<4x10xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.extract_slice' takes [1, 9), which is not made of whole blocks of 8}}
  %s = tensor.extract_slice %t[0, 1] [4, 8] [1, 1] : tensor<4x10xf32> to tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  %a = linalg.add ins(%h, %s : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ae : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// A column inserted into %h.

func.func @rank_reducing_insert(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %col: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.insert_slice' rank-reducing inserts into a cut tensor are not supported}}
  %i = tensor.insert_slice %col into %h[0, 3] [4, 1] [1, 1] : tensor<4xf32> into tensor<4x8xf32>
  return %i : tensor<4x8xf32>
}

// -----

// Four columns inserted into %h: they land on one rank.

func.func @partial_insert(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %cols: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.insert_slice' inserts a part of a cut dimension}}
  %i = tensor.insert_slice %cols into %h[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
  return %i : tensor<4x8xf32>
}

// -----

// %h twice side by side: each rank's part would be two pieces.

func.func @concat_along_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.concat' concatenates along the cut dimension}}
  %c = tensor.concat dim(1) %h, %h : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// The size of the cut dimension: 8 in the full program, 4 on a rank.

func.func @dim_of_cut(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> index {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'tensor.dim' reads the size of a cut dimension, which differs between the full tensor and a rank's part}}
  %d = tensor.dim %h, %c1 : tensor<4x8xf32>
  return %d : index
}

// -----

//===----------------------------------------------------------------------===//
// attention heads
//===----------------------------------------------------------------------===//

// 3 heads of 3 for 2 ranks: no cut between heads, and none inside one. The
// error names the head split, found after the bias add.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @heads_indivisible(%x: tensor<4x8xf32>, %wq: tensor<8x9xf32>, %bq: tensor<9xf32>) -> tensor<4x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x9xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x9xf32>) -> tensor<4x9xf32>
  // expected-error-re @+2 {{no tensor-parallel cut for 2 ranks of output dimension 1 of 'tensor<4x9xf32>' keeps the values after it local; 3 heads of 3 (tensor.expand_shape at {{.*}}tp-shard-refusals.mlir:{{[0-9]+}}:{{[0-9]+}}) do not divide among 2 ranks; each cut tried fails (see notes)}}
  // expected-note @+1 {{'linalg.matmul' cannot cut dimension 1 of tensor<4x9xf32> into 2 equal parts}}
  %q = linalg.matmul ins(%x, %wq : tensor<4x8xf32>, tensor<8x9xf32>) outs(%init : tensor<4x9xf32>) -> tensor<4x9xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %bq : tensor<4x9xf32>, tensor<9xf32>) outs(%e : tensor<4x9xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x9xf32>
  %h = tensor.expand_shape %b [[0], [1, 2]] output_shape [4, 3, 3] : tensor<4x9xf32> into tensor<4x3x3xf32>
  return %h : tensor<4x3x3xf32>
}

// -----

// The same in a fused q|k|v projection, sliced before the head split.

func.func @fused_heads_indivisible(%x: tensor<4x8xf32>, %wqkv: tensor<8x27xf32>) -> (tensor<4x3x3xf32>, tensor<4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x27xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x27xf32>) -> tensor<4x27xf32>
  // expected-error-re @+3 {{no tensor-parallel cut for 2 ranks of output dimension 1 of 'tensor<4x27xf32>' keeps the values after it local; 3 heads of 3 (tensor.expand_shape at {{.*}}) do not divide among 2 ranks; each cut tried fails (see notes)}}
  // expected-note @+2 {{its result is read in sections: where the weight is stored [out, in], tp-import computes each section from its rows of the weight, a projection of its own (tp-split-fused-projections)}}
  // expected-note @+1 {{'linalg.matmul' cannot cut dimension 1 of tensor<4x27xf32> into 2 equal parts}}
  %qkv = linalg.matmul ins(%x, %wqkv : tensor<4x8xf32>, tensor<8x27xf32>) outs(%init : tensor<4x27xf32>) -> tensor<4x27xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [4, 9] [1, 1] : tensor<4x27xf32> to tensor<4x9xf32>
  %k2 = tensor.extract_slice %qkv[0, 9] [4, 9] [1, 1] : tensor<4x27xf32> to tensor<4x9xf32>
  %q = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [4, 3, 3] : tensor<4x9xf32> into tensor<4x3x3xf32>
  %k = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [4, 3, 3] : tensor<4x9xf32> into tensor<4x3x3xf32>
  return %q, %k : tensor<4x3x3xf32>, tensor<4x3x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// constants, unknown ops, and the cut of a value itself
//===----------------------------------------------------------------------===//

// A constant added to %h would need a different part on each rank.

func.func @constant_operand(%x: tensor<2x4xf32>, %up: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<2x4xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<2x4xf32>, tensor<4x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-note @+1 {{'arith.constant' a non-uniform constant cannot be cut without knowing the rank; pass it as a function argument instead (tp-externalize-weights does)}}
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %ae = tensor.empty() : tensor<2x4xf32>
  %a = linalg.add ins(%h, %c : tensor<2x4xf32>, tensor<2x4xf32>) outs(%ae : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %a : tensor<2x4xf32>
}

// -----

// A call result added to %h: the analysis cannot make the callee compute a
// part.

func.func private @opaque(tensor<4x8xf32>) -> tensor<4x8xf32>

func.func @call_result(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'func.call' cannot produce a cut value: the analysis does not know how this op moves elements}}
  %o = func.call @opaque(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  %a = linalg.add ins(%h, %o : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ae : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// h + b + transpose(b): %b would be cut on dimension 1 and on dimension 0.

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @two_cuts_of_one_value(%x: tensor<8x8xf32>, %up: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<8x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %ae = tensor.empty() : tensor<8x8xf32>
  // expected-note @+1 {{'linalg.generic' needs dimension 0 of a value cut in 1 block, which is already cut on dimension 1 in 1 block}}
  %a = linalg.generic {indexing_maps = [#id, #id, #t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b, %b : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%ae : tensor<8x8xf32>) {
  ^bb0(%v: f32, %p: f32, %q: f32, %o: f32):
    %s = arith.addf %v, %p : f32
    %r = arith.addf %s, %q : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}

// -----

// y = h @ down + x @ up2: the pair h -> down is placed first and cuts %down
// on dimension 0; the second column matmul accumulates into down's output
// and would need %down cut on dimension 1.

func.func @cut_by_another_pair(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>, %up2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ginit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %g = linalg.matmul ins(%x, %up2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%ginit : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'linalg.matmul' needs a cut of a value that another pair already cuts differently}}
  %y = linalg.matmul ins(%h, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%g : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// An operand whose hidden dimension is dynamic: the analysis cannot check
// that it divides into equal parts.

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic_cut_dim(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %b: tensor<4x?xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>'}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ae = tensor.empty() : tensor<4x8xf32>
  // expected-note @+1 {{'linalg.generic' can only cut a static dimension, got dimension 1 of tensor<4x?xf32>}}
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b : tensor<4x8xf32>, tensor<4x?xf32>) outs(%ae : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// An op the analysis cannot place sits between the two matmuls: the first
// is left whole rather than gathered; the second, whose output leaves the
// function, is cut and gathered there (as an LM head).

func.func private @opaque(tensor<4x8xf32>) -> tensor<4x8xf32>

func.func @unplaceable(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{left whole on every rank: its cut output dimension 1 of 'tensor<4x8xf32>' is never summed over by a contraction with a weight, and gathering it would cost 128 bytes per rank per forward pass (allow-fallback=true accepts that)}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @below {{'func.call' needs the full value: the analysis cannot place it on a part}}
  %a = func.call @opaque(%h) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The glue reads a table from outside at the index of the cut loop: made
// global, the index could read a table another region cuts (a parallel
// loop's index alone is made global, tp-shard.mlir).

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_of_cut_loop(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>,
                             %table: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x8xf32>' keeps the values after it local}}
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @below {{'linalg.generic' reads the index of cut loop 1, which differs between ranks}}
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %j = linalg.index 1 : index
    %t = tensor.extract %table[%j] : tensor<8xf32>
    %r = arith.addf %v, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}


// -----

// A pair on one row (a pooler) next to a pair on 64: it does 1/256 of the
// work for the same all-reduce, and stays whole.

#pid = affine_map<(d0, d1) -> (d0, d1)>
func.func @pooler(%x: tensor<64x16xf32>, %up: tensor<16x64xf32>, %down: tensor<64x16xf32>, %p1: tensor<16x16xf32>, %p2: tensor<16x16xf32>) -> tensor<1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %he = tensor.empty() : tensor<64x64xf32>
  %hinit = linalg.fill ins(%zero : f32) outs(%he : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.matmul ins(%x, %up : tensor<64x16xf32>, tensor<16x64xf32>) outs(%hinit : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ye = tensor.empty() : tensor<64x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.matmul ins(%h, %down : tensor<64x64xf32>, tensor<64x16xf32>) outs(%yinit : tensor<64x16xf32>) -> tensor<64x16xf32>
  %first = tensor.extract_slice %y[0, 0] [1, 16] [1, 1] : tensor<64x16xf32> to tensor<1x16xf32>
  %pe = tensor.empty() : tensor<1x16xf32>
  %pinit = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x16xf32>) -> tensor<1x16xf32>
  // expected-remark @+1 {{left whole on every rank: its cut would divide 512 multiply-adds per pair, under 1/16 of the largest pair's 131072: not worth its collectives}}
  %p = linalg.matmul ins(%first, %p1 : tensor<1x16xf32>, tensor<16x16xf32>) outs(%pinit : tensor<1x16xf32>) -> tensor<1x16xf32>
  %t = linalg.generic {indexing_maps = [#pid, #pid], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<1x16xf32>) outs(%pe : tensor<1x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<1x16xf32>
  %qinit = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x16xf32>) -> tensor<1x16xf32>
  %q = linalg.matmul ins(%t, %p2 : tensor<1x16xf32>, tensor<16x16xf32>) outs(%qinit : tensor<1x16xf32>) -> tensor<1x16xf32>
  return %q : tensor<1x16xf32>
}

// -----

// An LM head whose table is also read at a loop index (positions, not ids):
// a rank could not know which rows the loop reaches, so the head is left
// whole.

#rid = affine_map<(d0, d1) -> (d0, d1)>
func.func @table_read_at_index(%x: tensor<4x16xf32>, %table: tensor<1024x16xf32>) -> (tensor<4x1024xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<4x16xf32>
  %rows = linalg.generic {indexing_maps = [#rid], iterator_types = ["parallel", "parallel"]}
      outs(%re : tensor<4x16xf32>) {
  ^bb0(%o: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    // expected-note @+1 {{'tensor.extract' reads cut dimension 0 at a loop index or a constant, not at a position its input holds}}
    %v = tensor.extract %table[%r, %c] : tensor<1024x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %te = tensor.empty() : tensor<16x1024xf32>
  %head = linalg.transpose ins(%table : tensor<1024x16xf32>) outs(%te : tensor<16x1024xf32>) permutation = [1, 0]
  %le = tensor.empty() : tensor<4x1024xf32>
  %linit = linalg.fill ins(%zero : f32) outs(%le : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x1024xf32>' keeps the values after it local}}
  %logits = linalg.matmul ins(%x, %head : tensor<4x16xf32>, tensor<16x1024xf32>) outs(%linit : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %logits, %rows : tensor<4x1024xf32>, tensor<4x16xf32>
}

// -----

// An argmax over more positions than f32 counts exactly (2^24): the ranks'
// first indices would be combined as f32 and rounded.

#io = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d0)>
func.func @argmax_too_wide(%x: tensor<1x4xf32>, %head: tensor<4x16777218xf32>) -> tensor<1xi64> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16777218xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16777218xf32>) -> tensor<1x16777218xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<1x16777218xf32>'}}
  %logits = linalg.matmul ins(%x, %head : tensor<1x4xf32>, tensor<4x16777218xf32>) outs(%init : tensor<1x16777218xf32>) -> tensor<1x16777218xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %me = tensor.empty() : tensor<1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%me : tensor<1xf32>) -> tensor<1xf32>
  %ie = tensor.empty() : tensor<1xi64>
  %ii = linalg.fill ins(%c0 : i64) outs(%ie : tensor<1xi64>) -> tensor<1xi64>
  // expected-note @+1 {{'linalg.generic' takes the index of an extreme over more than 2^24 positions, which the combine of indices as f32 would round}}
  %r:2 = linalg.generic {indexing_maps = [#io, #o, #o], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<1x16777218xf32>) outs(%mi, %ii : tensor<1xf32>, tensor<1xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %i64, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<1xf32>, tensor<1xi64>)
  return %r#1 : tensor<1xi64>
}

// -----

// An LM head over a vocabulary of 9 (GPT-2's 50257 at tp 2) after a block:
// the tp size does not divide it, but no other contraction with a weight
// reads what it computes, so it is left whole on every rank (a widening
// matmul the tp size does not
// divide whose values reach another cut op is refused,
// tp-shard-invalid.mlir).

func.func @head_indivisible(%x: tensor<4x8xf32>, %up: tensor<8x16xf32>, %down: tensor<16x8xf32>,
                            %head: tensor<8x9xf32>) -> tensor<4x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x16xf32>
  %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e9 = tensor.empty() : tensor<4x9xf32>
  %z9 = linalg.fill ins(%zero : f32) outs(%e9 : tensor<4x9xf32>) -> tensor<4x9xf32>
  // expected-remark @+2 {{left whole on every rank: output dimension 1 of 'tensor<4x9xf32>' does not divide among 2 ranks, and no other contraction with a weight reads what it computes (padded to a multiple of 2, as Megatron-LM pads a vocabulary, it is cut)}}
  // expected-note @+1 {{'linalg.matmul' cannot cut dimension 1 of tensor<4x9xf32> into 2 equal parts}}
  %logits = linalg.matmul ins(%y, %head : tensor<4x8xf32>, tensor<8x9xf32>) outs(%z9 : tensor<4x9xf32>) -> tensor<4x9xf32>
  return %logits : tensor<4x9xf32>
}

// -----

// A classifier of one label after a block: its output dimension is smaller
// than the tp size, so no tp size cuts it, and it is left whole on every
// rank rather than refused (unlike a dimension the tp size does not
// divide where another cut op reads it, tp-shard-invalid.mlir).

func.func @narrower_than_tp_size(%x: tensor<4x8xf32>, %w: tensor<8x1xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  // expected-remark @+2 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x1xf32>' keeps the values after it local; each cut tried fails (see notes)}}
  // expected-note @+1 {{'linalg.matmul' cannot cut dimension 1 of tensor<4x1xf32> into 2 equal parts}}
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x1xf32>) outs(%init : tensor<4x1xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// A weight two functions read, cut on different dimensions: @rows cuts `w`
// by rows (its pair's narrowing half) first, and no cut of @columns gives it
// rows (its input is a softmax over that dimension), so each keeps its own
// cut and each rank holds `w` twice.

func.func @rows(%x: tensor<4x16xf32>, %v: tensor<16x32xf32> {tp.name = "v"},
                // expected-note @+1 {{cut #tp.shard<dim = 0> here}}
                %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %v : tensor<4x16xf32>, tensor<16x32xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @columns(%z: tensor<4x32xf32>,
                   // expected-remark @+1 {{weight 'w' is cut #tp.shard<dim = 1> by @columns and #tp.shard<dim = 0> by @rows, which no cut of @columns gives it: each rank holds it once per cut}}
                   %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x32xf32>
  %s = linalg.softmax dimension(1) ins(%z : tensor<4x32xf32>) outs(%es : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%s, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The same in a private function: its arguments are its callers' values, not
// buffers a runtime holds, so no cut is decided for it jointly, and nothing
// is said.

func.func @rows(%x: tensor<4x16xf32>, %v: tensor<16x32xf32> {tp.name = "v"},
                %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %v : tensor<4x16xf32>, tensor<16x32xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func private @columns(%z: tensor<4x32xf32>,
                           %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x32xf32>
  %s = linalg.softmax dimension(1) ins(%z : tensor<4x32xf32>) outs(%es : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%s, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// calls
//===----------------------------------------------------------------------===//

// A function the module calls keeps its signature: its callers pass whole
// values and tp-shard does not rewrite calls, so its pair is left whole.

func.func private @mlp(%x: tensor<4x16xf32>, %v: tensor<16x32xf32>,
                       %w: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @+2 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x32xf32>'}}
  // expected-note @+1 {{'linalg.matmul' needs a cut of argument #1, which the callers of its function in this module pass whole (tp-shard does not cut across calls: inline them first)}}
  %h = linalg.matmul ins(%x, %v : tensor<4x16xf32>, tensor<16x32xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-remark @+2 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x16xf32>'}}
  // expected-note @+1 {{'linalg.matmul' needs a cut of argument #2, which the callers}}
  %y = linalg.matmul ins(%h, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @forward(%x: tensor<4x16xf32>, %v: tensor<16x32xf32> {tp.name = "v"},
                   %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %y = func.call @mlp(%x, %v, %w) : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
