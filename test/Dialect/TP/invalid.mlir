// RUN: tp-opt %s -split-input-file -verify-diagnostics

func.func @gather_not_multiple(%x: tensor<8x3xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{extent 4 along dim 1 is not a multiple of 3}}
  %0 = tp.all_gather %x dim 1 : tensor<8x3xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gather_other_dim(%x: tensor<8x3xf32>) -> tensor<4x6xf32> {
  // expected-error @below {{dimension 0 differs (8 vs 4) but only dim 1 may change}}
  %0 = tp.all_gather %x dim 1 : tensor<8x3xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @gather_dim_range(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error @below {{dim 2 out of range for rank 2}}
  %0 = tp.all_gather %x dim 2 : tensor<8x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @gather_element_type(%x: tensor<8x3xf32>) -> tensor<8x6xf16> {
  // expected-error @below {{operand and result element types differ}}
  %0 = tp.all_gather %x dim 1 : tensor<8x3xf32> -> tensor<8x6xf16>
  return %0 : tensor<8x6xf16>
}

// -----

module attributes {tp.size = 4 : i64} {
  func.func @gather_group_size(%x: tensor<8x3xf32>) -> tensor<8x6xf32> {
    // expected-error @below {{implies a group of 2 ranks (3 -> 6 along dim 1) but the module is for tp.size = 4}}
    %0 = tp.all_gather %x dim 1 : tensor<8x3xf32> -> tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}

// -----

func.func @scatter_grows(%x: tensor<8x3xf32>) -> tensor<16x3xf32> {
  // expected-error @below {{extent 8 along dim 0 is not a multiple of 16}}
  %0 = tp.reduce_scatter sum %x dim 0 : tensor<8x3xf32> -> tensor<16x3xf32>
  return %0 : tensor<16x3xf32>
}

// -----

func.func @all_reduce_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @below {{requires the same type for all operands and results}}
  %0 = "tp.all_reduce"(%x) {kind = 0 : i32} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @below {{shard blocks ('outer') must be positive, got 0}}
func.func @bad_outer(%x: tensor<8xf32> {tp.shard = #tp.shard<dim = 0, outer = 0>}) {
  return
}

// -----

// expected-error @below {{shard dimension must be non-negative, got -1}}
func.func @negative_dim(%x: tensor<8xf32> {tp.shard = #tp.shard<dim = -1>}) {
  return
}

// -----

// expected-error @below {{argument 0 has no dimension 1 to split}}
func.func @bad_dim(%x: tensor<8xf32> {tp.shard = #tp.shard<dim = 1>}) {
  return
}

// -----

// A rank holds its part of each of 3 blocks: 3 equal parts.
// expected-error @below {{argument 0 holds 8 of dimension 0, which is not a part of each of 3 blocks}}
func.func @not_blocks(%x: tensor<8xf32> {tp.shard = #tp.shard<dim = 0, outer = 3>}) {
  return
}

// -----

// expected-error @below {{'tp.shard' must be a #tp.shard, on argument 0}}
func.func @not_a_shard(%x: tensor<8xf32> {tp.shard = 3 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_shape' must be an array<i64> of positive sizes, on argument 0}}
func.func @checkpoint_shape_not_sizes(%x: tensor<8xf32> {tp.checkpoint_shape = array<i64: 0>}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_shape' must be an array<i64> of positive sizes, on argument 0}}
func.func @checkpoint_shape_empty(%x: tensor<f32> {tp.checkpoint_shape = array<i64>}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_shape' has 1 sizes for argument 0 of rank 2}}
func.func @checkpoint_shape_rank(%x: tensor<8x4xf32> {tp.checkpoint_shape = array<i64: 7>}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_shape' must be an array<i64> of positive sizes, on argument 0}}
func.func @checkpoint_shape_not_array(%x: tensor<8xf32> {tp.checkpoint_shape = 7 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_offset' must be a non-negative integer, on argument 0}}
func.func @checkpoint_offset_negative(%x: tensor<8x4xf32> {tp.name = "w", tp.checkpoint_shape = array<i64: 16, 4>, tp.checkpoint_offset = -1 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_offset' on argument 0 needs the 'tp.checkpoint_shape' of the tensor it reads rows of}}
func.func @checkpoint_offset_alone(%x: tensor<8x4xf32> {tp.checkpoint_offset = 8 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.checkpoint_offset' on argument 0 needs the 'tp.name' of the tensor it reads rows of}}
func.func @checkpoint_offset_unnamed(%x: tensor<8x4xf32> {tp.checkpoint_offset = 8 : i64, tp.checkpoint_shape = array<i64: 16, 4>}) {
  return
}

// -----

// expected-error @below {{'tp.positions' must be a positive integer, on argument 0}}
func.func @positions_not_positive(%c: tensor<1x2x4x8xf32> {tp.positions = 0 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.positions' 3 is on argument 0 of type 'tensor<1x2x4x8xf32>', not a cache [B, kv_heads, W, head_dim] of W <= 3 rows}}
func.func @positions_fewer_than_rows(%c: tensor<1x2x4x8xf32> {tp.positions = 3 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.positions' 32 is on argument 0 of type 'tensor<4x8xf32>', not a cache [B, kv_heads, W, head_dim] of W <= 32 rows}}
func.func @positions_not_a_cache(%c: tensor<4x8xf32> {tp.positions = 32 : i64}) {
  return
}

// -----

// expected-error @below {{unknown tp argument attribute 'tp.bogus'}}
func.func @unknown_arg_attr(%x: tensor<8xf32> {tp.bogus = 1 : i64}) {
  return
}

// -----

// expected-error @below {{'tp.size' must be a positive integer on a module}}
module attributes {tp.size = 0 : i64} {
}

// -----

// expected-error @below {{'tp.eos_token_ids' must be an array<i64> of token ids (>= 0) on a module}}
module attributes {tp.eos_token_ids = array<i64: 2, -1>} {
}

// -----

// expected-error @below {{'tp.eos_token_ids' must be an array<i64> of token ids (>= 0) on a module}}
module attributes {tp.eos_token_ids = array<i64>} {
}

// -----

module {
  // expected-error @below {{'tp.eos_token_ids' must be an array<i64> of token ids (>= 0) on a module}}
  func.func @f() attributes {tp.eos_token_ids = array<i64: 2>} {
    return
  }
}

// -----

// expected-error @below {{expected 'dim'}}
func.func @bad_syntax(%x: tensor<8xf32> {tp.shard = #tp.shard<halved>}) {
  return
}

