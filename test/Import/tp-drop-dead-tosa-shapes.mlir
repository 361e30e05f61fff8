// RUN: tp-opt %s --split-input-file --tp-drop-dead-tosa-shapes --verify-diagnostics | FileCheck %s --enable-var-scope

// The shape of a reshape tosa-to-tensor has already rewritten goes; the
// rest stays.
// CHECK-LABEL: func.func @converted(
// CHECK-NOT: tosa.
// CHECK: %[[R:.*]] = tensor.collapse_shape
// CHECK-NEXT: return %[[R]]
func.func @converted(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %shape = tosa.const_shape {values = dense<6> : tensor<1xindex>} : () -> !tosa.shape<1>
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// A reshape left in TOSA still reads its shape.
func.func @unconverted(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-note @below {{the shape}}
  %shape = tosa.const_shape {values = dense<6> : tensor<1xindex>} : () -> !tosa.shape<1>
  // expected-error @below {{'tosa.reshape' op was not converted from TOSA: it still reads a tosa.const_shape}}
  %r = tosa.reshape %x, %shape : (tensor<2x3xf32>, !tosa.shape<1>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}
