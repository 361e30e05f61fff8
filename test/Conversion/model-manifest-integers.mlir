// RUN: tp-opt %s -split-input-file --tp-model-manifest | FileCheck %s
// RUN: not tp-opt %s -split-input-file --tp-model-manifest="backend=cuda" 2>&1 | FileCheck %s --check-prefix=CUDA

// Token ids, positions and masks as front-ends pass them: integer tensors,
// recorded with their dtype. Without any tp.name the arguments bind by
// position (argument 0 the input, the others weights).

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:4,\22args\22:[{\22dtype\22:\22i64\22,\22local_shape\22:[1,12],\22name\22:\22ids\22,\22named\22:true,\22shape\22:[1,12],\22shard\22:null},{\22dtype\22:\22i32\22,{{.*}}\22name\22:\22pos\22,{{.*}}},{\22dtype\22:\22i1\22,{{.*}}\22name\22:\22arg2\22,\22named\22:false,\22role\22:\22input\22,{{.*}}},{\22dtype\22:\22f32\22,{{.*}}\22name\22:\22wte\22,
// CUDA: error: argument 0 must be a static tensor of f32, got 'tensor<1x12xi64>'
// CUDA: note: integer inputs run on the cpu backend only
func.func @forward(%ids: tensor<1x12xi64> {tp.name = "ids"},
                   %pos: tensor<1x12xi32> {tp.name = "pos"},
                   %mask: tensor<1x12xi1>,
                   %wte: tensor<16x8xf32> {tp.name = "wte"}) -> tensor<16x8xf32> {
  return %wte : tensor<16x8xf32>
}

// -----

// CHECK-LABEL: module attributes {tp.manifest = "{\22abi_version\22:4,\22args\22:[{\22dtype\22:\22i64\22,{{.*}}\22name\22:\22arg0\22,\22named\22:false,\22role\22:\22input\22,{{.*}}},{\22dtype\22:\22i64\22,{{.*}}\22name\22:\22arg1\22,\22named\22:false,\22role\22:\22weight\22,
func.func @forward(%ids: tensor<1x12xi64>, %positions: tensor<1x512xi64>,
                   %wte: tensor<16x8xf32>) -> tensor<16x8xf32> {
  return %wte : tensor<16x8xf32>
}
