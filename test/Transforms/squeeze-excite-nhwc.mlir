// disc-squeeze-excite-nhwc: a Conv value read by a global pooling and by a
// per-channel scale whose only readers are Convs is read through one
// transpose to channels-last; the pooling and the scale run on that view,
// the scale's product is transposed back. disc-mark-library-calls makes
// every transpose a view (the Convs write or read NHWC).
// RUN: disc-opt --disc-squeeze-excite-nhwc %s | FileCheck %s
// RUN: disc-opt --disc-squeeze-excite-nhwc --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK

// CHECK-LABEL: func.func @se
// CHECK: %[[C:.+]] = disc.conv %arg0
// CHECK: %[[X:.+]] = disc.mul %{{.+}}, %{{.+}} : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>)
// CHECK: %[[XT:.+]] = disc.transpose %[[X]] {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
// CHECK: %[[R:.+]] = disc.reduce mean, %[[XT]] {dimensions = array<i64: 1, 2>, keep_dims = true} : (tensor<?x?x?x8xf32>) -> tensor<?x1x1x8xf32>
// CHECK: disc.transpose %[[R]] {permutation = array<i64: 0, 3, 1, 2>} : (tensor<?x1x1x8xf32>) -> tensor<?x8x1x1xf32>
// CHECK: %[[S:.+]] = disc.logistic
// CHECK: %[[ST:.+]] = disc.transpose %[[S]] {permutation = array<i64: 0, 2, 3, 1>}
// CHECK: %[[M:.+]] = disc.mul %[[XT]], %[[ST]] : (tensor<?x?x?x8xf32>, tensor<?x1x1x8xf32>) -> tensor<?x?x?x8xf32>
// CHECK: %[[MT:.+]] = disc.transpose %[[M]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK: disc.conv %[[MT]]
// MARK-LABEL: func.func @se
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 577>, disc.post_ops = ["bias", "silu"]
// MARK: disc.transpose {{.*}}disc.nhwc_view
// MARK: disc.transpose {{.*}}disc.nhwc_view
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 209>, disc.post_ops = ["bias", "sigmoid"]
// MARK: disc.transpose {{.*}}disc.nhwc_view
// MARK: disc.transpose {{.*}}disc.nhwc_view
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 128>
func.func @se(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x1x3x3xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %w1 = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %b1 = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %w2 = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %cb = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %sg = disc.logistic %cb : tensor<?x8x?x?xf32>
  %a = disc.mul %cb, %sg : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %r = disc.reduce mean, %a {dimensions = array<i64: 2, 3>, keep_dims = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x1x1xf32>
  %e = disc.conv %r, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x1x1xf32>
  %eb = disc.add %e, %b1 : (tensor<?x8x1x1xf32>, tensor<8x1x1xf32>) -> tensor<?x8x1x1xf32>
  %s = disc.logistic %eb : tensor<?x8x1x1xf32>
  %m = disc.mul %s, %a : (tensor<?x8x1x1xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %o = disc.conv %m, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  return %o : tensor<?x8x?x?xf32>
}

// Unchanged: the scale is also returned, the pooling keeps a spatial dim,
// the value is read by another loop nest.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: disc.transpose
// CHECK: return
func.func @kept(%x: tensor<?x8x?x?xf32>, %s: tensor<?x8x1x1xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x1xf32>, tensor<?x8x?x?xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %m1 = disc.mul %c1, %s : (tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %o1 = disc.conv %m1, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r2 = disc.reduce mean, %c2 {dimensions = array<i64: 3>, keep_dims = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x1xf32>
  %m2 = disc.mul %c2, %s : (tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %o2 = disc.conv %m2, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %c3 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %m3 = disc.mul %c3, %s : (tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %o3 = disc.conv %m3, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %n3 = disc.add %c3, %c3 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %o1, %m1, %r2, %n3 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x1xf32>, tensor<?x8x?x?xf32>
}

// A classifier's last Conv, read only by its global pooling (no keep-dims).
// CHECK-LABEL: func.func @classifier
// CHECK: %[[T:.+]] = disc.transpose %{{.+}} {permutation = array<i64: 0, 2, 3, 1>}
// CHECK: disc.reduce mean, %[[T]] {dimensions = array<i64: 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return
func.func @classifier(%x: tensor<?x8x?x?xf32>) -> tensor<?x8xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r = disc.reduce mean, %c {dimensions = array<i64: 2, 3>} : (tensor<?x8x?x?xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// Left alone: a 1x1 map (its scale has the value's own type), and a value
// that reaches the pooling through an op that is no post-op (Exp: the
// transpose would be a copy).
// CHECK-LABEL: func.func @left
// CHECK-NOT: disc.transpose
// CHECK: return
func.func @left(%x: tensor<1x8x1x1xf32>, %y: tensor<?x8x?x?xf32>) -> (tensor<1x8x1x1xf32>, tensor<?x8x1x1xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %r = disc.reduce mean, %c {dimensions = array<i64: 2, 3>, keep_dims = true} : (tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %e = disc.conv %r, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %s = disc.logistic %e : tensor<1x8x1x1xf32>
  %m = disc.mul %c, %s : (tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %o = disc.conv %m, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x1x1xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %c2 = disc.conv %y, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %x2 = disc.exp %c2 : tensor<?x8x?x?xf32>
  %r2 = disc.reduce mean, %x2 {dimensions = array<i64: 2, 3>, keep_dims = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x1x1xf32>
  return %o, %r2 : tensor<1x8x1x1xf32>, tensor<?x8x1x1xf32>
}
