// A depthwise convolution's bias add written into its buffer (disc-fusion's
// `depthwise`, disc.in_place_operand) and returned: the buffer escapes
// through the in-place chain, so it is no stack buffer, and the memory
// model counts the returned buffer itself (no clone). Small and static, the
// case where a stack buffer would be chosen (the CPU pipeline promotes
// small buffers; it runs the padded form, no fusion, as a control).
// RUN: rm -rf %t && %python %S/Inputs/depthwise_returned_ref.py %t
// RUN: disc-compile %s --library-calls=none -o %t/loops.so
// RUN: disc-run %t/loops.so --input x=%t/x.pb --input w=%t/w.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: disc-compile %s --target=cuda-emulate -o %t/emulate.so
// RUN: disc-run %t/emulate.so --input x=%t/x.pb --input w=%t/w.pb --compare '#0=%t/y.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s

// CHECK: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 1
// CHECK: PASSED

func.func @f(%x: tensor<1x4x4x4xf32> {disc.name = "x"}, %w: tensor<4x1x3x3xf32> {disc.name = "w"}) -> (tensor<1x4x4x4xf32> {disc.name = "y"}) {
  %b = disc.constant dense<0.5> : tensor<4x1x1xf32>
  %dw = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 4 : i64} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %y = disc.add %dw, %b : (tensor<1x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
