// attn-approximate-exp: math.exp becomes MLIR's polynomial approximation, which stays in
// vector registers; other math functions are left alone.
// RUN: attnc-opt %s --attn-approximate-exp | FileCheck %s

// CHECK-LABEL: func.func @softmax_piece
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: math.tanh %{{.*}} : vector<16xf32>
// CHECK: return
func.func @softmax_piece(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
  %e = math.exp %x : vector<16xf32>
  %t = math.tanh %x : vector<16xf32>
  return %e, %t : vector<16xf32>, vector<16xf32>
}
