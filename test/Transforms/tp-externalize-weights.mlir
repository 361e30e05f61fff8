// RUN: tp-opt %s --tp-externalize-weights="file=%t.safetensors" 2>%t.err | FileCheck %s --enable-var-scope
// RUN: FileCheck %s --check-prefix=WARN < %t.err
// RUN: %python %S/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=FILE
// RUN: tp-opt %s --tp-externalize-weights -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHAPES
// RUN: tp-opt %s --tp-externalize-weights="keep-values=true" 2>&1 | FileCheck %s --check-prefix=KEEP --enable-var-scope
// With nothing to move, file= still gets a (empty) checkpoint: a stale one
// from an earlier run must not be taken for this model's.
// RUN: echo 'func.func @f(%%x: tensor<2xf32>) -> tensor<2xf32> { return %%x : tensor<2xf32> }' \
// RUN:   | tp-opt --tp-externalize-weights="file=%t.safetensors" -o /dev/null
// RUN: %python %S/Inputs/read_safetensors.py %t.safetensors | FileCheck %s --check-prefix=EMPTY
// EMPTY-NOT: F32
// EMPTY: data in argument order, header padded to 8 bytes

// Weights in each form front-ends write them become arguments after the
// existing ones: a dense_resource with its blob (torch-mlir's importer;
// named after its key, taken by an argument already: `fc.weight_1`), an
// inline bias written twice (one value, one argument, named after its line),
// two elided resources (no value, each its own argument), the elided integer
// position ids (the program cannot be compiled without them), a splat embedding
// table a gather reads (named by its NameLoc), a splat weight read through a
// transpose, and the zero splat where a matmul reads it as a weight. That
// zero splat's uses as matmul inits stay, as do a splat bias and a scalar
// scale.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {tp.name = "x"}, %[[IDS:[^:]*]]: tensor<2xindex> {tp.name = "ids"}, %{{[^:]*}}: tensor<2xf32> {tp.name = "fc.weight"},
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x2xf32> {tp.name = "fc.weight_1"}, %[[B:[^:]*]]: tensor<2xf32> {tp.name = "const_L{{[0-9]+}}"},
// CHECK-SAME: %[[E:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"}, %[[E2:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"},
// CHECK-SAME: %[[POS:[^:]*]]: tensor<2xi64> {tp.name = "const_L{{[0-9]+}}"},
// CHECK-SAME: %[[TABLE:[^:]*]]: tensor<8x2xf32> {tp.name = "embeddings.word"}, %[[WS:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"},
// CHECK-SAME: %[[WZ:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"})
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<1.250000e-01> : tensor<f32>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ZEROS]] :
// CHECK: linalg.broadcast ins(%[[B]] :
// CHECK: linalg.broadcast ins(%[[B]] :
// CHECK: linalg.broadcast ins(%[[S]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[E]] : {{.*}}) outs(%[[ZEROS]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[E2]] : {{.*}}) outs(%[[ZEROS]] :
// CHECK: linalg.transpose ins(%[[WS]] :
// CHECK: linalg.matmul ins(%{{.*}}, %[[WZ]] : {{.*}}) outs(%[[ZEROS]] :
// CHECK: tensor.extract %[[POS]]
// CHECK: tensor.extract %[[TABLE]]
// CHECK: ins(%{{.*}}, %[[SCALE]] :

// The elided weights have no value to write.
// WARN: warning: 3 weights became arguments without a value: the module holds none for them (elided resources), so '{{.*}}.safetensors' does not either; tp-run needs them from another checkpoint
// WARN-NOT: {{warning|remark}}

// Without file=: shapes only.
// SHAPES: remark: 8 weights became arguments with their shapes only: the values of 5 were dropped (file=FILE writes them to a checkpoint; tp-import: weights=FILE, tp-compile: --weights-out FILE), 3 had none (elided resources)

// keep-values: only the weights without a value become arguments.
// KEEP: remark: 3 weights became arguments with their shapes only: the module holds no value for them (elided resources)
// KEEP-LABEL: func.func @forward(
// KEEP-SAME: %{{[^:]*}}: tensor<2xf32> {tp.name = "fc.weight"}, %[[E:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"}, %[[E2:[^:]*]]: tensor<2x2xf32> {tp.name = "const_L{{[0-9]+}}"},
// KEEP-SAME: %{{[^:]*}}: tensor<2xi64> {tp.name = "const_L{{[0-9]+}}"})
// KEEP-DAG: arith.constant dense_resource<fc.weight> : tensor<4x2xf32>
// KEEP-DAG: arith.constant dense<[-1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// KEEP-DAG: arith.constant dense<2.500000e-01> : tensor<8x2xf32>
// KEEP-DAG: arith.constant dense<1.500000e+00> : tensor<2x2xf32>
// KEEP: linalg.matmul ins(%{{.*}}, %[[E]] :
// KEEP: linalg.matmul ins(%{{.*}}, %[[E2]] :

// FILE: fc.weight_1 F32 [4, 2] [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
module {
  func.func @forward(%x: tensor<2x4xf32> {tp.name = "x"}, %ids: tensor<2xindex> {tp.name = "ids"}, %taken: tensor<2xf32> {tp.name = "fc.weight"}) -> tensor<2x2xf32> {
    %w = arith.constant dense_resource<fc.weight> : tensor<4x2xf32>
    // FILE-NEXT: const_L[[#@LINE+1]] F32 [2] [-1.0, 2.5]
    %b = arith.constant dense<[-1.0, 2.5]> : tensor<2xf32>
    %b2 = arith.constant dense<[-1.0, 2.5]> : tensor<2xf32>
    %e = arith.constant dense_resource<__elided__> : tensor<2x2xf32>
    %e2 = arith.constant dense_resource<__elided__> : tensor<2x2xf32>
    %pos = arith.constant dense_resource<__elided__> : tensor<2xi64>
    // FILE-NEXT: embeddings.word F32 [8, 2] [0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]
    %table = arith.constant dense<0.25> : tensor<8x2xf32> loc("embeddings.word")
    // FILE-NEXT: const_L[[#@LINE+1]] F32 [2, 2] [1.5, 1.5, 1.5, 1.5]
    %ws = arith.constant dense<1.5> : tensor<2x2xf32>
    // FILE-NEXT: const_L[[#@LINE+1]] F32 [2, 2] [0.0, 0.0, 0.0, 0.0]
    %zeros = arith.constant dense<0.0> : tensor<2x2xf32>
    // FILE-NEXT: data in argument order, header padded to 8 bytes
    %s = arith.constant dense<0.5> : tensor<2xf32>
    %scale = arith.constant dense<0.125> : tensor<f32>
    %empty = tensor.empty() : tensor<2x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x2xf32>) outs(%zeros : tensor<2x2xf32>) -> tensor<2x2xf32>
    %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%empty : tensor<2x2xf32>) dimensions = [0]
    %bb2 = linalg.broadcast ins(%b2 : tensor<2xf32>) outs(%empty : tensor<2x2xf32>) dimensions = [0]
    %sb = linalg.broadcast ins(%s : tensor<2xf32>) outs(%empty : tensor<2x2xf32>) dimensions = [0]
    %y1 = linalg.add ins(%y, %bb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y2 = linalg.add ins(%y1, %bb2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y3 = linalg.add ins(%y2, %sb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y4 = linalg.matmul ins(%y3, %e : tensor<2x2xf32>, tensor<2x2xf32>) outs(%zeros : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y5 = linalg.matmul ins(%y4, %e2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%zeros : tensor<2x2xf32>) -> tensor<2x2xf32>
    %wt = linalg.transpose ins(%ws : tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) permutation = [1, 0]
    %y6 = linalg.matmul ins(%y5, %wt : tensor<2x2xf32>, tensor<2x2xf32>) outs(%zeros : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y7 = linalg.matmul ins(%y6, %zeros : tensor<2x2xf32>, tensor<2x2xf32>) outs(%zeros : tensor<2x2xf32>) -> tensor<2x2xf32>
    // An embedding: row ids[i] + pos[i] of the table.
    %emb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xindex>) outs(%empty : tensor<2x2xf32>) {
    ^bb0(%id: index, %out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %p = tensor.extract %pos[%i] : tensor<2xi64>
      %pi = arith.index_cast %p : i64 to index
      %row = arith.addi %id, %pi : index
      %v = tensor.extract %table[%row, %j] : tensor<8x2xf32>
      linalg.yield %v : f32
    } -> tensor<2x2xf32>
    %y8 = linalg.add ins(%y7, %emb : tensor<2x2xf32>, tensor<2x2xf32>) outs(%empty : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y8, %scale : tensor<2x2xf32>, tensor<f32>) outs(%empty : tensor<2x2xf32>) {
    ^bb0(%a: f32, %c: f32, %out: f32):
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
    } -> tensor<2x2xf32>
    return %y9 : tensor<2x2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E040"
    }
  }
#-}
