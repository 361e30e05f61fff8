// Split reductions run (test/Conversion/split-reductions.mlir): 3000
// elements per row are 94 lanes of 32 (padded by 8 to 3008), merged 32 at
// a time into 3 lanes (the 94 padded by 2 to 96), then into the init.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @main() {
  %e = tensor.empty() : tensor<3x3000xf32>
  // Row 0: -((p mod 1000) - 2)^2, largest (0) at 2, 1002 and 2002, in
  // lanes 2, 62 and 28 (position p is lane p mod 94), merged into lanes 2,
  // 2 and 1 (lane l into l mod 3): the last merge meets 2002 before 2, so
  // only the index breaking the tie gives 2. Row 1: -inf everywhere. Row 2:
  // p, largest last (2999).
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<3x3000xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %p = linalg.index 1 : index
    %c1000 = arith.constant 1000 : index
    %c2 = arith.constant 2 : index
    %m = arith.remui %p, %c1000 : index
    %d = arith.subi %m, %c2 : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %sq = arith.mulf %df, %df : f32
    %neg = arith.negf %sq : f32
    %pi = arith.index_cast %p : index to i64
    %pf = arith.sitofp %pi : i64 to f32
    %ninf = arith.constant 0xFF800000 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %is0 = arith.cmpi eq, %r, %c0 : index
    %is1 = arith.cmpi eq, %r, %c1 : index
    %v12 = arith.select %is1, %ninf, %pf : f32
    %v = arith.select %is0, %neg, %v12 : f32
    linalg.yield %v : f32
  } -> tensor<3x3000xf32>

  // argmax, the init's index 5: kept where nothing beats the init's -inf.
  %ninf = arith.constant 0xFF800000 : f32
  %five = arith.constant 5 : i64
  %ev = tensor.empty() : tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi64>
  %v0 = linalg.fill ins(%ninf : f32) outs(%ev : tensor<3xf32>) -> tensor<3xf32>
  %i0 = linalg.fill ins(%five : i64) outs(%ei : tensor<3xi64>) -> tensor<3xi64>
  %am:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x3000xf32>) outs(%v0, %i0 : tensor<3xf32>, tensor<3xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %p = linalg.index 1 : index
    %pi = arith.index_cast %p : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %i = arith.select %gt, %pi, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<3xf32>, tensor<3xi64>)

  // Row 2's sum, 0 + 1 + ... + 2999 = 4498500 (exact in f32).
  %zero = arith.constant 0.0 : f32
  %s0 = linalg.fill ins(%zero : f32) outs(%ev : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x3000xf32>) outs(%s0 : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>

  // Row by row: the argmax's value and index, the sum.
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  scf.for %r = %c0 to %c3 step %c1 {
    %mv = tensor.extract %am#0[%r] : tensor<3xf32>
    %mi = tensor.extract %am#1[%r] : tensor<3xi64>
    %sv = tensor.extract %sum[%r] : tensor<3xf32>
    vector.print %mv : f32
    vector.print %mi : i64
    vector.print %sv : f32
  }
  return
}
