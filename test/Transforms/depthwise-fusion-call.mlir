// disc-fusion{depthwise=cuda} leaves a depthwise convolution to cuDNN when
// the call would take everything around it (a ShuffleNet unit: the ReLU
// before it and the bias after it are post-ops of the calls): as loops it
// would add a kernel. Without library calls (`all`) it is loops anyway.
// RUN: disc-opt %s --disc-fusion="depthwise=cuda" | FileCheck %s --check-prefix=CUDA
// RUN: disc-opt %s --disc-fusion="depthwise=all" | FileCheck %s --check-prefix=ALL

// CUDA-NOT: disc.depthwise_loops
// CUDA-NOT: disc.in_place_operand
// ALL: disc.max {{.*}}disc.fused
// ALL-NEXT: disc.conv {{.*}}disc.depthwise_loops
// ALL-NEXT: disc.add {{.*}}disc.in_place_operand = 0

func.func @f(%x: tensor<?x8x?x?xf32> {disc.dims = ["N", 8, "H", "W"], disc.name = "x"},
             %w1: tensor<8x8x1x1xf32> {disc.name = "w1"},
             %w2: tensor<8x1x3x3xf32> {disc.name = "w2"},
             %w3: tensor<8x8x1x1xf32> {disc.name = "w3"}) -> (tensor<?x8x?x?xf32> {disc.name = "y"}) {
  %b = disc.constant dense<0.5> : tensor<8x1x1xf32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %c1 = disc.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r1 = disc.max %c1, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %dw = disc.conv %r1, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %a = disc.add %dw, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %y = disc.conv %a, %w3 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}
