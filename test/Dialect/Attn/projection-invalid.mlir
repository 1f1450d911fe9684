// Every projection spec the compiler does not take is a diagnostic that says why.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @no_out {
  // expected-error @below {{projection parameter 'out_features' is required}}
  attn.projection {in_features = 64, dtype = f32}
}

// -----

attn.kernel @unknown {
  // expected-error @below {{unknown projection parameter 'bias'; expected one of in_features, out_features, dtype, weights}}
  attn.projection {in_features = 64, out_features = 64, dtype = f32, bias = true}
}

// -----

attn.kernel @weights {
  // expected-error @below {{unknown weights 'keras'; expected pytorch ([out, in], y = x W^T) or onnx ([in, out], y = x W)}}
  attn.projection {in_features = 64, out_features = 64, dtype = f32, weights = keras}
}

// -----

attn.kernel @twice {
  // expected-error @below {{projection parameter 'dtype' is given twice}}
  attn.projection {in_features = 64, out_features = 64, dtype = f32, dtype = f16}
}

// -----

attn.kernel @wide {
  // expected-error @below {{in_features must be in 1 to 2048, got 4096}}
  attn.projection {in_features = 4096, out_features = 64, dtype = f32}
}

// -----

attn.kernel @empty {
  // expected-error @below {{out_features must be in 1 to 1048576, got 0}}
  attn.projection {in_features = 64, out_features = 0, dtype = f32}
}

// -----

attn.kernel @f64 {
  // expected-error @below {{dtype must be f32, f16 or bf16, got 'f64'}}
  attn.projection {in_features = 64, out_features = 64, dtype = f64}
}
