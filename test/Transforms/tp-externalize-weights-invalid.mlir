// RUN: tp-opt %s --split-input-file --tp-externalize-weights="file=%t.safetensors" --verify-diagnostics
// RUN: not tp-opt %S/tp-externalize-weights.mlir --tp-externalize-weights="file=%t.missing/w.safetensors" 2>&1 | FileCheck %s --check-prefix=BADFILE
// RUN: not tp-opt %S/tp-externalize-weights.mlir --tp-externalize-weights="file=%t.safetensors keep-values=true" 2>&1 | FileCheck %s --check-prefix=BOTH
// BADFILE: error: cannot write the weights to '{{.*}}missing/w.safetensors':
// BADFILE-NOT: func.func
// BOTH: error: tp-externalize-weights: keep-values leaves the values in the module, file= would not get them

// A function that is called cannot take more arguments: it keeps its
// constants (correct, only not cut).
module {
  // expected-warning @below {{keeps its 1 constant weights: the function is called, so it cannot take them as arguments}}
  func.func @layer(%x: tensor<2xf32>) -> tensor<2xf32> {
    %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %y = linalg.add ins(%x, %b : tensor<2xf32>, tensor<2xf32>) outs(%x : tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = func.call @layer(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}

// -----

// A resource whose blob does not hold its type's bytes.
module {
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error @below {{dense_resource<short> holds 4 bytes, 'tensor<2xf32>' takes 8}}
    %b = arith.constant dense_resource<short> : tensor<2xf32>
    %y = linalg.add ins(%x, %b : tensor<2xf32>, tensor<2xf32>) outs(%x : tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F"
    }
  }
#-}
