// RUN: tp-opt %s --split-input-file --tp-externalize-weights="file=%t.safetensors" --verify-diagnostics
// RUN: not tp-opt %S/tp-externalize-weights.mlir --tp-externalize-weights 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not tp-opt %S/tp-externalize-weights.mlir --tp-externalize-weights="file=%t.missing/w.safetensors" 2>&1 | FileCheck %s --check-prefix=BADFILE
// NOFILE: error: tp-externalize-weights: 2 constant weights became arguments but no file= was given for their values
// BADFILE: error: cannot write the weights to '{{.*}}missing/w.safetensors':
// BADFILE-NOT: func.func

// A function that is called cannot take more arguments.
module {
  // expected-error @below {{cannot take its 1 constant weights as arguments: the function is called}}
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

// A resource whose value the module does not hold (printed elided).
module {
  func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error @below {{the value of dense_resource<__elided__> is not in the module (elided?): nothing to write}}
    %b = arith.constant dense_resource<__elided__> : tensor<2xf32>
    %y = linalg.add ins(%x, %b : tensor<2xf32>, tensor<2xf32>) outs(%x : tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
