// `disc-compile --emit=shapes` and `--dim` on a small attention block
// written as ONNX-exporter-style disc IR.
// RUN: disc-compile %s --emit=shapes -o - | FileCheck %s
// RUN: disc-compile %s --emit=shapes --dim seq=1:64:16 --dim batch=1:8 -o - | FileCheck %s
// RUN: disc-compile %s --emit=shapes --dim batch=2 -o - | FileCheck %s --check-prefix=SPEC
// RUN: not disc-compile %s --emit=shapes --dim foo=1:2 -o - 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: disc-compile %s --emit=shapes --dim foo=1:2 -o /dev/null 2>/dev/null || test $? -eq 2
// RUN: not disc-compile %s --emit=shapes --dim seq=9:2 -o - 2>&1 | FileCheck %s --check-prefix=BADRANGE
// RUN: disc-compile %s --dim seq=1:16 -o %t.so
// RUN: disc-run %t.so --input 'x=2x8x64:random' > /dev/null
// RUN: not disc-run %t.so --input 'x=2x17x64:random' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: disc-compile %s --dim batch=2 -o %t2.so
// RUN: disc-run %t2.so --input 'x=2x8x64:random' > /dev/null
// RUN: not disc-run %t2.so --input 'x=3x8x64:random' 2>&1 | FileCheck %s --check-prefix=SPECEXEC

// CHECK: input x {{ *}}[batch, seq, 64]  bytes=batch*seq*256
// CHECK: disc.dynamic_reshape {{.*}}[batch, seq, 2, 32]  bytes=batch*seq*256
// CHECK: disc.transpose {{.*}}[batch, 2, seq, 32]
// CHECK: disc.dot_general {{.*}}[batch, 2, seq, seq]  bytes=batch*seq*seq*8
// CHECK: disc.dynamic_reshape {{.*}}[batch, seq, 64]
// CHECK: summary: {{[0-9]+}} values, 0 unknown dims, 2 symbols
// CHECK: propagate+simplify: {{.*}} ms

// SPEC: input x {{ *}}[2, seq, 64]  bytes=seq*512
// SPEC: disc.dot_general {{.*}}[2, 2, seq, seq]
// SPEC: summary: {{[0-9]+}} values, 0 unknown dims, 1 symbols

// UNKNOWN: error: unknown dim name 'foo' in --dim; known: batch, seq
// BADRANGE: error: bad --dim 'seq=9:2'
// RANGE: dim 1 ('seq'): got 17, outside the range [1, 16] of 'seq'
// SPECEXEC: dim 0: expected 2 but got 3

func.func @attention(%x: tensor<?x?x64xf32> {disc.dims = ["batch", "seq", 64], disc.name = "x"}) -> (tensor<?x?x64xf32> {disc.name = "y"}) {
  %s = disc.shape_of %x : tensor<?x?x64xf32> -> tensor<3xi64>
  %i0 = disc.constant dense<0> : tensor<i64>
  %i1 = disc.constant dense<1> : tensor<i64>
  %b = disc.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %t = disc.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %bu = disc.dynamic_reshape %b, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %tu = disc.dynamic_reshape %t, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %hd = disc.constant dense<[2, 32]> : tensor<2xi64>
  %shape = disc.concatenate %bu, %tu, %hd {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %q = disc.dynamic_reshape %x, %shape : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x2x32xf32>
  %qt = disc.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x32xf32>) -> tensor<?x2x?x32xf32>
  %kt = disc.transpose %q {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x?x2x32xf32>) -> tensor<?x2x32x?xf32>
  %scores = disc.dot_general %qt, %kt {lhs_batching_dimensions = array<i64: 0, 1>, rhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x2x?x32xf32>, tensor<?x2x32x?xf32>) -> tensor<?x2x?x?xf32>
  %ctx = disc.dot_general %scores, %qt {lhs_batching_dimensions = array<i64: 0, 1>, rhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x2x?x?xf32>, tensor<?x2x?x32xf32>) -> tensor<?x2x?x32xf32>
  %ct = disc.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x32xf32>) -> tensor<?x?x2x32xf32>
  %back = disc.constant dense<[0, 0, -1]> : tensor<3xi64>
  %y = disc.dynamic_reshape %ct, %back : (tensor<?x?x2x32xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
