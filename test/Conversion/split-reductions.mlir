// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-split-reductions))' | FileCheck %s
// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-split-reductions{min-size=2048}))' | FileCheck %s --check-prefix=MIN2048
// The numbers: an argmax with ties and a sum over 3000, split (and merged
// twice) and whole, lowered for the CPU and run.
// RUN: tp-opt %S/Inputs/split-reductions-run.mlir --pass-pipeline='builtin.module(func.func(tp-split-reductions))' | %tp-lower | %mlir-run | FileCheck %s --check-prefix=EXEC
// RUN: tp-opt %S/Inputs/split-reductions-run.mlir --pass-pipeline='builtin.module(func.func(tp-split-reductions{min-size=4096}))' | %tp-lower | %mlir-run | FileCheck %s --check-prefix=EXEC
// Row 0: the first of three equal maxima; row 1: nothing beats the init,
// whose index (5) stays; row 2: the last element, and the exact sum.
// EXEC: -0
// EXEC-NEXT: 2
// EXEC-NEXT: {{-[0-9.e+]+$}}
// EXEC-NEXT: -inf
// EXEC-NEXT: 5
// EXEC-NEXT: -inf
// EXEC-NEXT: 2999
// EXEC-NEXT: 2999
// EXEC-NEXT: 4.4985e+06
// A larger min-size leaves the static lengths below it; a dynamic length is
// split whatever the option, since it may reach any size.
// MIN2048-LABEL: func.func @sum_of_squares(
// MIN2048-NOT: tensor.expand_shape
// MIN2048-LABEL: func.func @dynamic_sum_of_exp(
// MIN2048: tensor.expand_shape
// MIN2048-LABEL: func.func @odd_max(
// MIN2048-NOT: tensor.expand_shape
// MIN2048-LABEL: func.func @to_scalar(
// MIN2048-LABEL: func.func @argmax(
// MIN2048-NOT: tensor.expand_shape

// RMSNorm's sum of squares over d = 1024: 32 interleaved partial sums of 32
// elements per row (the inner factor is the parallel one: lane j reads j,
// j + 32, ...), every parallel loop first, then the partials' sum.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ROW3:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 32, 32]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x32x32xf32>) outs(%[[ZERO]] : tensor<8x32xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<8x32xf32>) outs(%{{.*}} : tensor<8xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_of_squares(%x: tensor<8x1024xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Short reductions (softmax over 128 keys) stay as they are.
// CHECK-LABEL: func.func @short(
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x128xf32>)
func.func @short(%x: tensor<8x128xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x128xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Decode attention's softmax sum over the pos + 1 positions written so far
// (a dynamic length): the scores are padded to a multiple of 32 (with NaN,
// which would show in the result if the padding were ever counted) and split
// [32, lanes]; each partial leaves its accumulator as it is past the
// length (position iteration * lanes + lane); the row max is read whole;
// the lanes, a number seen only at run time, are summed at once.
// CHECK-LABEL: func.func @dynamic_sum_of_exp(
// CHECK-SAME: %[[S:.*]]: tensor<4x?xf32>, %[[M:.*]]: tensor<4xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<4x?xf32>
// CHECK: %[[LANES:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK: %[[HIGH:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[S]] low[0, 0] high[0, %[[HIGH]]]
// CHECK: tensor.yield %[[NAN]]
// CHECK: %[[X:.*]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2]] output_shape [4, 32, %[[LANES]]] : tensor<4x?xf32> into tensor<4x32x?xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ROW3]], #[[PART]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[M]] : tensor<4x32x?xf32>, tensor<4xf32>) outs(%[[ZERO]] : tensor<4x?xf32>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[ACC]] : f32
// CHECK: %[[ITERATION:.*]] = linalg.index 2
// CHECK: %[[FIRST:.*]] = arith.muli %[[ITERATION]], %[[LANES]]
// CHECK: %[[LANE:.*]] = linalg.index 1
// CHECK: %[[POS:.*]] = arith.addi %[[FIRST]], %[[LANE]]
// CHECK: %[[IN_RANGE:.*]] = arith.cmpi ult, %[[POS]], %[[N]]
// CHECK: arith.select %[[IN_RANGE]], %[[SUM]], %[[ACC]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<4x?xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[IN]], %[[OUT]]
func.func @dynamic_sum_of_exp(%s: tensor<4x?xf32>, %m: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s, %m : tensor<4x?xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %x = math.exp %d : f32
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A static length that 32 does not divide: padded by 24 to 32 lanes; the
// partial maxima start from -inf (the combiner's neutral element) and are
// combined into the original init.
// CHECK-LABEL: func.func @odd_max(
// CHECK-SAME: %{{.*}}: tensor<8x1000xf32>, %[[INIT:.*]]: tensor<8xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 24]
// CHECK: tensor.expand_shape %{{.*}} output_shape [8, 32, 32]
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: arith.cmpi ult, %{{.*}}, %c1000
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<8xf32>)
// CHECK: arith.maximumf
func.func @odd_max(%x: tensor<8x1000xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x1000xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// Down to a scalar (a 0-d init): 64 partials, more than 32, merged 32 at a
// time into 2 (maxnumf's neutral element is NaN), then into the init.
// CHECK-LABEL: func.func @to_scalar(
// CHECK-SAME: %{{.*}}: tensor<2048xf32>, %[[INIT:.*]]: tensor<f32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [32, 64]
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<32x64xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK: %[[P2:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1]] output_shape [32, 2]
// CHECK: %[[NAN:.*]] = arith.constant 0xFFC00000 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[NAN]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P2]] : tensor<32x2xf32>) outs(%[[FILL]] : tensor<2xf32>)
// CHECK: arith.maxnumf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[Q]] : tensor<2xf32>) outs(%[[INIT]] : tensor<f32>)
func.func @to_scalar(%x: tensor<2048xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<2048xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maxnumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Two inputs, the length static in the first and dynamic in the second: the
// second, padded by the same 24, is cast to the static 1024 before its split.
// CHECK-LABEL: func.func @static_and_dynamic(
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 24]
// CHECK: %[[PAD2:.*]] = tensor.pad %{{.*}} low[0, 0] high[0, 24]
// CHECK: %[[CAST:.*]] = tensor.cast %[[PAD2]] : tensor<4x?xf32> to tensor<4x1024xf32>
// CHECK: tensor.expand_shape %[[CAST]] {{\[}}[0], [1, 2]] output_shape [4, 32, 32]
func.func @static_and_dynamic(%x: tensor<4x1000xf32>, %y: tensor<4x?xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<4x1000xf32>, tensor<4x?xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Integers are padded with one: a division in the body, computed on the
// padding before the select drops it, cannot divide by zero.
// CHECK-LABEL: func.func @integer_quotients(
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: tensor.pad
// CHECK: tensor.yield %[[ONE]]
func.func @integer_quotients(%x: tensor<4x?xi32>, %init: tensor<4xi32>) -> tensor<4xi32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x?xi32>) outs(%init : tensor<4xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %c = arith.constant 100 : i32
    %q = arith.divsi %c, %a : i32
    %s = arith.addi %q, %acc : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// A decode step's argmax over the vocabulary shard (its global index is the
// rank's offset plus the position): 1024 = 32 lanes of 32, linalg.index of
// the reduced dimension becoming the position, the index of each lane's
// maximum starting from the largest i64 (any real index wins a tie against
// it). The lanes merge into fresh accumulators, a strictly greater value or
// an equal one at a smaller index winning (the lanes are not in the
// elements' order); the init's index is then kept unless the maximum beats
// its value strictly, as the loop it replaces does.
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME: %{{.*}}: tensor<2x1024xf32>, %[[V0:.*]]: tensor<2xf32>, %[[I0:.*]]: tensor<2xi64>, %[[OFFSET:.*]]: index
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 32, 32]
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[VP:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x32xf32>)
// CHECK: %[[MAXI:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: %[[IP:.*]] = linalg.fill ins(%[[MAXI]] : i64) outs(%{{.*}} : tensor<2x32xi64>)
// CHECK: %[[P:.*]]:2 = linalg.generic {{.*}}outs(%[[VP]], %[[IP]] : tensor<2x32xf32>, tensor<2x32xi64>)
// CHECK: %[[IT:.*]] = linalg.index 2
// CHECK: %[[FIRST:.*]] = arith.muli %[[IT]], %c32
// CHECK: %[[LANE:.*]] = linalg.index 1
// CHECK: %[[POS:.*]] = arith.addi %[[FIRST]], %[[LANE]]
// CHECK: arith.addi %[[POS]], %[[OFFSET]]
// CHECK: %[[M:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]]#0, %[[P]]#1 : tensor<2x32xf32>, tensor<2x32xi64>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[I:.*]]: i64, %[[AV:.*]]: f32, %[[AI:.*]]: i64):
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[V]], %[[AV]]
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[AV]]
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[V]], %[[AV]]
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[AI]]
// CHECK-NEXT: %[[TIE:.*]] = arith.andi %[[EQ]], %[[LT]]
// CHECK-NEXT: %[[TAKE:.*]] = arith.ori %[[GT]], %[[TIE]]
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[TAKE]], %[[I]], %[[AI]]
// CHECK-NEXT: linalg.yield %[[MAX]], %[[SEL]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[M]]#0, %[[M]]#1 : tensor<2xf32>, tensor<2xi64>) outs(%[[V0]], %[[I0]] : tensor<2xf32>, tensor<2xi64>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[I:.*]]: i64, %[[AV:.*]]: f32, %[[AI:.*]]: i64):
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[V]], %[[AV]]
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[AV]]
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[GT]], %[[I]], %[[AI]]
// CHECK-NEXT: linalg.yield %[[MAX]], %[[SEL]]
func.func @argmax(%x: tensor<2x1024xf32>, %v0: tensor<2xf32>, %i0: tensor<2xi64>, %offset: index) -> (tensor<2xf32>, tensor<2xi64>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x1024xf32>) outs(%v0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%a: f32, %acc: f32, %idx: i64):
    %p = linalg.index 1 : index
    %g = arith.addi %p, %offset : index
    %gi = arith.index_cast %g : index to i64
    %m = arith.maximumf %a, %acc : f32
    %gt = arith.cmpf ogt, %a, %acc : f32
    %i = arith.select %gt, %gi, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xi64>
}

// Not argmaxes this pass knows how to merge, left whole: an index taken
// where the element is greater or equal (the last occurrence); one that
// falls as the position grows (a tie would go to the later element); a
// maxnumf one (its partials would start from NaN, which nothing beats, and
// lose their index).
// CHECK-LABEL: func.func @last_argmax(
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @last_argmax(%x: tensor<2x1024xf32>, %v0: tensor<2xf32>, %i0: tensor<2xi64>) -> (tensor<2xf32>, tensor<2xi64>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x1024xf32>) outs(%v0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%a: f32, %acc: f32, %idx: i64):
    %p = linalg.index 1 : index
    %gi = arith.index_cast %p : index to i64
    %m = arith.maximumf %a, %acc : f32
    %ge = arith.cmpf oge, %a, %acc : f32
    %i = arith.select %ge, %gi, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @reversed_argmax(
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @reversed_argmax(%x: tensor<2x1024xf32>, %v0: tensor<2xf32>, %i0: tensor<2xi64>) -> (tensor<2xf32>, tensor<2xi64>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x1024xf32>) outs(%v0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%a: f32, %acc: f32, %idx: i64):
    %p = linalg.index 1 : index
    %last = arith.constant 1023 : index
    %q = arith.subi %last, %p : index
    %gi = arith.index_cast %q : index to i64
    %m = arith.maximumf %a, %acc : f32
    %gt = arith.cmpf ogt, %a, %acc : f32
    %i = arith.select %gt, %gi, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @maxnumf_argmax(
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @maxnumf_argmax(%x: tensor<2x1024xf32>, %v0: tensor<2xf32>, %i0: tensor<2xi64>) -> (tensor<2xf32>, tensor<2xi64>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x1024xf32>) outs(%v0, %i0 : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%a: f32, %acc: f32, %idx: i64):
    %p = linalg.index 1 : index
    %gi = arith.index_cast %p : index to i64
    %m = arith.maxnumf %a, %acc : f32
    %gt = arith.cmpf ogt, %a, %acc : f32
    %i = arith.select %gt, %gi, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xi64>
}
