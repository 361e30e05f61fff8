// RUN: tp-opt %s -split-input-file -verify-diagnostics

func.func @no_value(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{takes query, key, value and an optional mask, got 2 inputs}}
  %0 = tm_tensor.attention ins(%q, %k : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @two_outputs(%q: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{writes one output, got 2}}
  %0:2 = tm_tensor.attention ins(%q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%o, %o : tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %0#0 : tensor<2x4x8xf32>
}

// -----

func.func @result_type(%q: tensor<2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x?xf32> {
  // expected-error @below {{result must have the output's type 'tensor<2x4x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

func.func @ranks(%q: tensor<2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{operands must be ranked, of one rank, at least 2: key is 'tensor<1x2x4x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %q : tensor<2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @element_type(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf16>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{value must hold 'f32', as the query does, got 'f16'}}
  %0 = tm_tensor.attention ins(%q, %q, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf16>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @mask_type(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xi8>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{mask must hold 'f32' or i1, as the query does, got 'i8'}}
  %0 = tm_tensor.attention ins(%q, %q, %q, %m : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi8>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @integers(%q: tensor<2x4x8xi32>, %o: tensor<2x4x8xi32>) -> tensor<2x4x8xi32> {
  // expected-error @below {{query must hold floats, got 'i32'}}
  %0 = tm_tensor.attention ins(%q, %q, %q : tensor<2x4x8xi32>, tensor<2x4x8xi32>, tensor<2x4x8xi32>) outs(%o : tensor<2x4x8xi32>) -> tensor<2x4x8xi32>
  return %0 : tensor<2x4x8xi32>
}

// -----

func.func @batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{the batch dimension 0 is 2 in the query 'tensor<2x4x8xf32>' but 3 in the key 'tensor<3x4x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %k : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @head_dim(%q: tensor<2x4x8xf32>, %k: tensor<2x4x6xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{the head dimension is 8 in the query 'tensor<2x4x8xf32>' but 6 in the key 'tensor<2x4x6xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %q : tensor<2x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @key_length(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{the key length is 5 in the key 'tensor<2x5x8xf32>' but 4 in the value 'tensor<2x4x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %q : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @output_shape(%q: tensor<2x4x8xf32>, %v: tensor<2x4x6xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{the value width is 6 in the value 'tensor<2x4x6xf32>' but 8 in the output 'tensor<2x4x8xf32>'}}
  %0 = tm_tensor.attention ins(%q, %q, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @mask_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %m: tensor<2x4x4xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{the key length is 5 in the key 'tensor<2x5x8xf32>' but 4 in the mask 'tensor<2x4x4xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %k, %m : tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x4x4xf32>) outs(%o : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Two static sizes of one dimension disagree, the query's being dynamic.
func.func @dynamic_query(%q: tensor<?x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<3x5x6xf32>, %o: tensor<?x4x6xf32>) -> tensor<?x4x6xf32> {
  // expected-error @below {{the batch dimension 0 is 2 in the key 'tensor<2x5x8xf32>' but 3 in the value 'tensor<3x5x6xf32>'}}
  %0 = tm_tensor.attention ins(%q, %k, %v : tensor<?x4x8xf32>, tensor<2x5x8xf32>, tensor<3x5x6xf32>) outs(%o : tensor<?x4x6xf32>) -> tensor<?x4x6xf32>
  return %0 : tensor<?x4x6xf32>
}
