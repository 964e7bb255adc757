// `disc-compile --emit=memory` and the predicted peak carried in the model
// (docs/memory.md): padded conv inputs freed early, a reshape that copies
// a slice, a dead op, and a measured peak equal to the prediction at three
// shapes. Program order (--schedule=none): the model, not the scheduler,
// is under test. --library-calls=none: the model describes generated loops;
// oneDNN's temporaries are not in it yet (docs/memory.md).
// RUN: disc-compile %s --schedule=none --library-calls=none --emit=memory --dim H=1:512:16 --dim W=1:512:16 -o - | FileCheck %s
// RUN: disc-compile %s --schedule=none --library-calls=none -o %t.so
// RUN: disc-run %t.so --input x=1x3x16x16:random | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=2x3x5x7:random | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=1x3x1x1:random | FileCheck %s --check-prefix=EXEC
// RUN: disc-run %t.so --input x=2x3x5x7:random --report %t.json > /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// CHECK: bindings: {{.*}}H=16
// CHECK: #1 disc.conv (line [[#]])  alloc=N*H*W*32 + 64  pre-scratch=N*48 + N*H*24 + N*H*W*12 + N*W*24 + 64
// CHECK-NEXT: live=N*48 + N*H*24 + N*H*W*12 + N*W*24 + 64  [3952]
// CHECK-NEXT: live=N*48 + N*H*24 + N*H*W*44 + N*W*24 + 128  [12208]
// CHECK: #2 disc.max (line [[#]])  alloc=N*H*W*32 + 64
// CHECK-NEXT: live=N*H*W*64 + 128  [16512]
// CHECK: #8 disc.slice (line [[#]])  view(operand 0)
// CHECK: #10 disc.dynamic_reshape (line [[#]])  alloc=N*H*W*16 + 64
// CHECK: #11 disc.exp (line [[#]])  external
// CHECK: return (clone)
// CHECK-NEXT: live=N*H*W*64 + 128  [16512]
// CHECK: live at exit: N*H*W*48 + 64  [12352]
// CHECK: peak = max of 1 candidates:
// CHECK-NEXT: #4 N*128 + N*H*64 + N*H*W*96 + N*W*64 + 192  [26944]
// CHECK: peak: 26944 bytes at the bindings above, 7 allocations

// EXEC: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 7

// REPORT: "peak_bytes": 8704,
// REPORT: "predicted_peak_bytes": 8704

func.func @mix(%x: tensor<?x3x?x?xf32> {disc.dims = ["N", 3, "H", "W"], disc.name = "x"}) -> (tensor<?x8x?x?xf32> {disc.name = "y"}, tensor<?xf32> {disc.name = "z"}) {
  %w = disc.constant dense<0.5> : tensor<8x3x3x3xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %r = disc.max %c, %c : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %w2 = disc.constant dense<0.25> : tensor<8x8x3x3xf32>
  %p = disc.conv %r, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<4> : tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %sl = disc.slice %r, %st, %en, %one {axes = array<i64: 1>} : (tensor<?x8x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x?xf32>
  %s = disc.constant dense<[-1]> : tensor<1xi64>
  %z = disc.dynamic_reshape %sl, %s : (tensor<?x4x?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %dead = disc.exp %p : tensor<?x8x?x?xf32>
  return %p, %z : tensor<?x8x?x?xf32>, tensor<?xf32>
}
