// RUN: tp-opt %s -split-input-file --tp-model-manifest | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-model-manifest="backend=cuda" | FileCheck %s --check-prefix=CUDA

// Token ids, positions and masks as front-ends pass them: integer tensors,
// recorded with their dtype. Without any tp.name the arguments bind by
// position (argument 0 the input, the others weights).

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cpu\22,\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,\22local_shape\22:[1,12],\22name\22:\22ids\22,\22named\22:true,\22shape\22:[1,12],\22shard\22:null},{\22dtype\22:\22i32\22,{{.*}}\22name\22:\22pos\22,{{.*}}},{\22dtype\22:\22i1\22,{{.*}}\22name\22:\22arg2\22,\22named\22:false,\22role\22:\22input\22,{{.*}}},{\22dtype\22:\22f32\22,{{.*}}\22name\22:\22wte\22,
// The cuda backend takes them as they are (copied to the device).
// CUDA-LABEL: module attributes {tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cuda\22,\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,{{.*}}\22name\22:\22ids\22,{{.*}}{\22dtype\22:\22i32\22,{{.*}}{\22dtype\22:\22i1\22,
func.func @forward(%ids: tensor<1x12xi64> {tp.name = "ids"},
                   %pos: tensor<1x12xi32> {tp.name = "pos"},
                   %mask: tensor<1x12xi1>,
                   %wte: tensor<16x8xf32> {tp.name = "wte"}) -> tensor<16x8xf32> {
  return %wte : tensor<16x8xf32>
}

// -----

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:8,\22backend\22:\22cpu\22,\22functions\22:[{\22args\22:[{\22dtype\22:\22i64\22,{{.*}}\22name\22:\22arg0\22,\22named\22:false,\22role\22:\22input\22,{{.*}}},{\22dtype\22:\22i64\22,{{.*}}\22name\22:\22arg1\22,\22named\22:false,\22role\22:\22weight\22,
func.func @forward(%ids: tensor<1x12xi64>, %positions: tensor<1x512xi64>,
                   %wte: tensor<16x8xf32>) -> tensor<16x8xf32> {
  return %wte : tensor<16x8xf32>
}

// -----

// The token ids: the integer input the vocabulary lookup reads (through a
// cast), not the position ids of a smaller table; with the rows of that
// table, the vocabulary a launcher checks ids against.
// CHECK-LABEL: module attributes
// CHECK-SAME: \22name\22:\22ids\22,\22named\22:true,\22shape\22:[1,4],\22shard\22:null,\22tokens\22:true,\22vocab\22:64}
// CHECK-NOT: \22tokens\22
#tid = affine_map<(d0, d1) -> (d0, d1)>
#trow = affine_map<(d0, d1, d2) -> (d0, d1)>
#tout = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @lm(%pos: tensor<1x4xi64> {tp.name = "pos"}, %ids: tensor<1x4xi64> {tp.name = "ids"},
              %wpe: tensor<8x16xf32> {tp.name = "wpe"}, %wte: tensor<64x16xf32> {tp.name = "wte"}) -> tensor<1x4x16xf32> {
  %c = tensor.empty() : tensor<1x4xi32>
  %ids32 = linalg.generic {indexing_maps = [#tid, #tid], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<1x4xi64>) outs(%c : tensor<1x4xi32>) {
  ^bb0(%i: i64, %o: i32):
    %t = arith.trunci %i : i64 to i32
    linalg.yield %t : i32
  } -> tensor<1x4xi32>
  %e = tensor.empty() : tensor<1x4x16xf32>
  %p = linalg.generic {indexing_maps = [#trow, #tout], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos : tensor<1x4xi64>) outs(%e : tensor<1x4x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %r = arith.index_cast %i : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %wpe[%r, %j] : tensor<8x16xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x16xf32>
  %w = linalg.generic {indexing_maps = [#trow, #tout], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids32 : tensor<1x4xi32>) outs(%e : tensor<1x4x16xf32>) {
  ^bb0(%i: i32, %o: f32):
    %r = arith.index_cast %i : i32 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %wte[%r, %j] : tensor<64x16xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x16xf32>
  %s = linalg.add ins(%p, %w : tensor<1x4x16xf32>, tensor<1x4x16xf32>) outs(%e : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %s : tensor<1x4x16xf32>
}

// -----

// Integer results (the next token ids of a greedy argmax), recorded with
// their dtype.
// CHECK-LABEL: module attributes
// CHECK-SAME: \22results\22:[{\22dtype\22:\22i64\22,\22local_shape\22:[1,1],\22name\22:\22result0\22,\22shape\22:[1,1],\22shard\22:null},{\22dtype\22:\22f32\22,
func.func @next_ids(%ids: tensor<1x1xi64> {tp.name = "ids"}, %w: tensor<4xf32> {tp.name = "w"}) -> (tensor<1x1xi64>, tensor<4xf32>) {
  return %ids, %w : tensor<1x1xi64>, tensor<4xf32>
}

// -----

// A padded table (tp.checkpoint_shape, a vocabulary padded so that the
// ranks divide it): the checkpoint holds 60 of its 64 rows, and the ids lie
// in those.
// CHECK-LABEL: module attributes
// CHECK-SAME: \22name\22:\22ids\22,\22named\22:true,\22shape\22:[1,4],\22shard\22:null,\22tokens\22:true,\22vocab\22:60}
// CHECK-SAME: {\22checkpoint_shape\22:[60,16],\22dtype\22:\22f32\22,\22local_shape\22:[64,16],\22name\22:\22wte\22,\22named\22:true,\22shape\22:[64,16],\22shard\22:null}
#prow = affine_map<(d0, d1, d2) -> (d0, d1)>
#pout = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @padded(%ids: tensor<1x4xi64> {tp.name = "ids"},
                  %wte: tensor<64x16xf32> {tp.name = "wte", tp.checkpoint_shape = array<i64: 60, 16>}) -> tensor<1x4x16xf32> {
  %e = tensor.empty() : tensor<1x4x16xf32>
  %w = linalg.generic {indexing_maps = [#prow, #pout], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<1x4xi64>) outs(%e : tensor<1x4x16xf32>) {
  ^bb0(%i: i64, %o: f32):
    %r = arith.index_cast %i : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %wte[%r, %j] : tensor<64x16xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x16xf32>
  return %w : tensor<1x4x16xf32>
}
