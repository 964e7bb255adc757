// RUN: disc-opt %s --disc-shape-propagate | FileCheck %s
// RUN: disc-opt %s --disc-shape-propagate --cse --canonicalize | disc-opt | FileCheck %s --check-prefix=ROUND

// Root symbols: one per distinct input dim name; fresh ones for
// data-dependent sizes (range with a run-time limit, slice with run-time
// bounds).
// CHECK-DAG: disc_shape.symbolic_dim @batch {knownNonNegative, min = 1 : i64, name = "batch"}
// CHECK-DAG: disc_shape.symbolic_dim @seq {knownNonNegative, min = 1 : i64, name = "seq"}
// CHECK-DAG: disc_shape.symbolic_dim @[[FRESH:S[0-9]+]] {knownNonNegative, name = "range{{[0-9]+}}"}
// CHECK-DAG: disc_shape.symbolic_dim @[[SLICE:S[0-9]+]] {knownNonNegative, name = "slice{{[0-9]+}}"}
// ROUND: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq, 4, 32]]

// Shape -> Gather -> Unsqueeze (reshape to [1]) -> Concat -> Reshape.
// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME: disc_shape.dims = [@batch, @seq, 128]
// CHECK: disc.dynamic_reshape %arg0, %{{.*}} {disc_shape.dims = {{\[\[}}@batch, @seq, 4, 32]]}
func.func @shape_chain(%x: tensor<?x?x128xf32> {disc.dims = ["batch", "seq", 128]}) -> tensor<?x?x4x32xf32> {
  %s = disc.shape_of %x : tensor<?x?x128xf32> -> tensor<3xi64>
  %i0 = disc.constant dense<0> : tensor<i64>
  %i1 = disc.constant dense<1> : tensor<i64>
  %b = disc.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %t = disc.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %bu = disc.dynamic_reshape %b, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %tu = disc.dynamic_reshape %t, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %c = disc.constant dense<[4, 32]> : tensor<2xi64>
  %shape = disc.concatenate %bu, %tu, %c {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = disc.dynamic_reshape %x, %shape : (tensor<?x?x128xf32>, tensor<4xi64>) -> tensor<?x?x4x32xf32>
  return %r : tensor<?x?x4x32xf32>
}

// Reshape with 0 and -1: [batch, seq, 128] -> [0, -1] = [batch, seq*128].
// CHECK-LABEL: func.func @reshape_zero_minus_one
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@batch, #disc_shape.expr<()[s0] -> (s0 * 128), [@seq]>]]
func.func @reshape_zero_minus_one(%x: tensor<?x?x128xf32> {disc.dims = ["batch", "seq", 128]}) -> tensor<?x?xf32> {
  %shape = disc.constant dense<[0, -1]> : tensor<2xi64>
  %r = disc.dynamic_reshape %x, %shape : (tensor<?x?x128xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Reshape with -1 only: [batch, seq, 128] -> [-1, 64] = [batch*seq*2, 64].
// CHECK-LABEL: func.func @reshape_minus_one
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}#disc_shape.expr<()[s0, s1] -> ((s0 * s1) * 2), [@batch, @seq]>, 64]]
func.func @reshape_minus_one(%x: tensor<?x?x128xf32> {disc.dims = ["batch", "seq", 128]}) -> tensor<?x64xf32> {
  %shape = disc.constant dense<[-1, 64]> : tensor<2xi64>
  %r = disc.dynamic_reshape %x, %shape : (tensor<?x?x128xf32>, tensor<2xi64>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// Reshape with -1 when the other dims are sums (the channel shuffle of
// ShuffleNet after pooling): the divisor has several terms and still
// divides the element count exactly, so the -1 is 116, not a fresh symbol
// that only Z3 could relate to it (minutes of non-linear queries).
// CHECK-LABEL: func.func @reshape_minus_one_sum_dims
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@N, 116, #disc_shape.expr<()[s0, s1] -> (s0 + s1), [@H, @K]>, @W]]
func.func @reshape_minus_one_sum_dims(%x: tensor<?x2x58x?x?xf32> {disc.dims = ["N", 2, 58, "H", "W"]}, %y: tensor<?x2x58x?x?xf32> {disc.dims = ["N", 2, 58, "K", "W"]}) -> tensor<?x?x?x?xf32> {
  %t = disc.concatenate %x, %y {dimension = 3 : i64} : (tensor<?x2x58x?x?xf32>, tensor<?x2x58x?x?xf32>) -> tensor<?x2x58x?x?xf32>
  %s = disc.shape_of %t : tensor<?x2x58x?x?xf32> -> tensor<5xi64>
  %i0 = disc.constant dense<[0]> : tensor<1xi64>
  %i3 = disc.constant dense<[3, 4]> : tensor<2xi64>
  %n = disc.gather %s, %i0 {axis = 0 : i64} : (tensor<5xi64>, tensor<1xi64>) -> tensor<1xi64>
  %hw = disc.gather %s, %i3 {axis = 0 : i64} : (tensor<5xi64>, tensor<2xi64>) -> tensor<2xi64>
  %m1 = disc.constant dense<-1> : tensor<1xi64>
  %shape = disc.concatenate %n, %m1, %hw {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %r = disc.dynamic_reshape %t, %shape : (tensor<?x2x58x?x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// Shape -> Slice -> Concat -> Reshape (flatten the trailing dims).
// CHECK-LABEL: func.func @shape_slice
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}1]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@batch, #disc_shape.expr<()[s0] -> (s0 * 8), [@seq]>]]
func.func @shape_slice(%x: tensor<?x?x8xf32> {disc.dims = ["batch", "seq", 8]}) -> tensor<?x?xf32> {
  %s = disc.shape_of %x : tensor<?x?x8xf32> -> tensor<3xi64>
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<1> : tensor<1xi64>
  %sp = disc.constant dense<1> : tensor<1xi64>
  %head = disc.slice %s, %st, %en, %sp {axes = array<i64: 0>} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = disc.constant dense<-1> : tensor<1xi64>
  %shape = disc.concatenate %head, %m1 {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = disc.dynamic_reshape %x, %shape : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// ConstantOfShape (expand of a 0-d tensor) and Expand with a symbolic shape.
// CHECK-LABEL: func.func @constant_of_shape_expand
// CHECK: disc.expand {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
// CHECK: disc.expand {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
func.func @constant_of_shape_expand(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}, %y: tensor<?x1xf32> {disc.dims = ["batch", 1]}) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %s = disc.shape_of %x : tensor<?x?xf32> -> tensor<2xi64>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %c = disc.expand %zero, %s : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  %e = disc.expand %y, %s : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %c, %e : tensor<?x?xf32>, tensor<?x?xf32>
}

// Range over a dim, a causal mask from compare, and Where over the scores.
// CHECK-LABEL: func.func @range_where
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@seq]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@seq, 1]]
// CHECK: disc.compare {{.*}}disc_shape.dims = {{\[\[}}@seq, @seq]]
// CHECK: disc.select {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq, @seq]]
func.func @range_where(%x: tensor<?x?x?xf32> {disc.dims = ["batch", "seq", "seq"]}) -> tensor<?x?x?xf32> {
  %s = disc.shape_of %x : tensor<?x?x?xf32> -> tensor<3xi64>
  %i1 = disc.constant dense<1> : tensor<i64>
  %n = disc.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %zero = disc.constant dense<0> : tensor<i64>
  %one = disc.constant dense<1> : tensor<i64>
  %r = disc.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %rows = disc.constant dense<[-1, 1]> : tensor<2xi64>
  %col = disc.dynamic_reshape %r, %rows : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1xi64>
  %mask = disc.compare le, %r, %col : (tensor<?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %ninf = disc.constant dense<-1.0e9> : tensor<f32>
  %w = disc.select %mask, %x, %ninf : (tensor<?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  return %w : tensor<?x?x?xf32>
}

// Range with a symbolic start and step 2, and a data-dependent range.
// CHECK-LABEL: func.func @range_count
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}#disc_shape.expr<()[s0] -> ((s0 * 2 - 3) ceildiv 2), [@n]>]]
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@[[FRESH]]]]
func.func @range_count(%x: tensor<?xf32> {disc.dims = ["n"]}, %lim: tensor<i64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %s = disc.shape_of %x : tensor<?xf32> -> tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %scalar = disc.constant dense<> : tensor<0xi64>
  %n = disc.dynamic_reshape %s, %scalar : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
  %c3 = disc.constant dense<3> : tensor<i64>
  %lo = disc.add %n, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %hi = disc.mul %n, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %two = disc.constant dense<2> : tensor<i64>
  %r = disc.range %lo, %hi, %two : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %d = disc.range %lo, %lim, %two : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r, %d : tensor<?xi64>, tensor<?xi64>
}

// Broadcasting two different dynamic dims records nothing: either may be 1
// at run time (k2 = 1 against k = 5 is valid), so the result dim is a fresh
// symbol and k2 stays its own symbol. A static 1 gives way, and equal dims
// keep their symbol.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: disc_shape.dims = [@k2]
// CHECK: disc.add {{.*}}disc_shape.dims = {{\[\[}}@m, @[[B:S[0-9]+]]]]
// CHECK: disc.mul {{.*}}disc_shape.dims = {{\[\[}}@m, @[[B]]]]
// CHECK: disc.sub {{.*}}disc_shape.dims = {{\[\[}}@m, @k]]
// CHECK-NOT: disc_shape.constraint
func.func @broadcast(%a: tensor<?x?xf32> {disc.dims = ["m", "k"]}, %b: tensor<?xf32> {disc.dims = ["k2"]}, %c: tensor<?x1xf32> {disc.dims = ["m", 1]}) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = disc.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %1 = disc.mul %0, %c : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %2 = disc.sub %a, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1, %2 : tensor<?x?xf32>, tensor<?x?xf32>
}

// Conv and pool output sizes; concatenation sums.
// CHECK-LABEL: func.func @conv_pool
// CHECK: disc.conv {{.*}}disc_shape.dims = {{\[\[}}@N, 8, #disc_shape.expr<()[s0] -> ((s0 - 1) floordiv 2 + 1), [@H]>, #disc_shape.expr<()[s0] -> ((s0 - 1) floordiv 2 + 1), [@W]>]]
// CHECK: disc.pool {{.*}}disc_shape.dims = {{\[\[}}@N, 8, #disc_shape.expr<()[s0] -> (((s0 - 1) floordiv 2) ceildiv 2 + 1), [@H]>
// CHECK: disc.concatenate {{.*}}disc_shape.dims = {{\[\[}}@N, 16,
func.func @conv_pool(%x: tensor<?x3x?x?xf32> {disc.dims = ["N", 3, "H", "W"]}, %w: tensor<8x3x7x7xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x16x?x?xf32>) {
  %0 = disc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 3, 3, 3, 3>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x7x7xf32>) -> tensor<?x8x?x?xf32>
  %1 = disc.pool max, %0 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %2 = disc.concatenate %1, %1 {dimension = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x16x?x?xf32>
  return %1, %2 : tensor<?x8x?x?xf32>, tensor<?x16x?x?xf32>
}

// Slices: constant bounds, to-the-end, negative start, unknown bounds.
// CHECK-LABEL: func.func @slices
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, #disc_shape.expr<()[s0] -> (s0 - 1), [@seq]>]]
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, 1]]
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, @[[SLICE]]]]
func.func @slices(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}, %e: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %c1 = disc.constant dense<1> : tensor<1xi64>
  %big = disc.constant dense<9223372036854775807> : tensor<1xi64>
  %m1 = disc.constant dense<-1> : tensor<1xi64>
  %a = disc.slice %x, %c1, %big, %c1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %b = disc.slice %x, %m1, %big, %c1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %c = disc.slice %x, %c1, %e, %c1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %a, %b, %c : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// Negative steps: a full reverse (start -1 or INT64_MAX, end INT64_MIN) keeps
// the dim, step -2 halves it (rounding up), start -1 down to (not including)
// index 0 is dim - 1; an end the solver cannot place (-3: seq may be 1)
// gives a fresh symbol.
// CHECK-LABEL: func.func @slices_negative_step
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, #disc_shape.expr<()[s0] -> (s0 ceildiv 2), [@seq]>]]
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, #disc_shape.expr<()[s0] -> (s0 - 1), [@seq]>]]
// CHECK: disc.slice {{.*}}disc_shape.dims = {{\[\[}}@batch, @S{{[0-9]+}}]]
func.func @slices_negative_step(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %m1 = disc.constant dense<-1> : tensor<1xi64>
  %m2 = disc.constant dense<-2> : tensor<1xi64>
  %m3 = disc.constant dense<-3> : tensor<1xi64>
  %c0 = disc.constant dense<0> : tensor<1xi64>
  %big = disc.constant dense<9223372036854775807> : tensor<1xi64>
  %small = disc.constant dense<-9223372036854775808> : tensor<1xi64>
  %a = disc.slice %x, %m1, %small, %m1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %b = disc.slice %x, %big, %small, %m2 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %c = disc.slice %x, %m1, %c0, %m1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %d = disc.slice %x, %m1, %m3, %m1 {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %a, %b, %c, %d : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// Transpose, reduce and dot_general.
// CHECK-LABEL: func.func @linalg_like
// CHECK: disc.dot_general {{.*}}disc_shape.dims = {{\[\[}}@bh, @seq, @seq]]
// CHECK: disc.transpose {{.*}}disc_shape.dims = {{\[\[}}@seq, @bh, @seq]]
// CHECK: disc.reduce {{.*}}disc_shape.dims = {{\[\[}}@seq, @seq]]
func.func @linalg_like(%q: tensor<?x?x32xf32> {disc.dims = ["bh", "seq", 32]}, %k: tensor<?x32x?xf32> {disc.dims = ["bh", 32, "seq"]}) -> tensor<?x?xf32> {
  %s = disc.dot_general %q, %k {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<?x?x32xf32>, tensor<?x32x?xf32>) -> tensor<?x?x?xf32>
  %t = disc.transpose %s {permutation = array<i64: 2, 0, 1>} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = disc.reduce sum, %t {dimensions = array<i64: 1>} : (tensor<?x?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// An elementwise op whose result element type differs from its operand's
// (a predicate) has its operand's dims, by the default rule of
// DiscOpInterface.
// CHECK-LABEL: func.func @predicate_dims
// CHECK: disc.is_nan {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
// CHECK: disc.select {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
func.func @predicate_dims(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> tensor<?x?xf32> {
  %p = disc.is_nan %x : tensor<?x?xf32> -> tensor<?x?xi1>
  %z = disc.constant dense<0.0> : tensor<f32>
  %r = disc.select %p, %z, %x : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Range over a float cast of a dim (torch.arange(seq) exported with a Cast
// to float): 0.0 and 1.0 are the integers 0 and 1, float(seq) is seq (f32
// represents it exactly; without a maximum on seq, the lowering checks it
// at run time), so the range has seq elements and broadcasts against x
// without a fresh symbol. To f16 (exact up to 2^11 only) an unbounded dim
// is not carried, and float division by 2 is not floordiv: both ranges get
// fresh symbols.
// CHECK-LABEL: func.func @range_float_cast
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@seq]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}1, @seq]]
// CHECK: disc.add {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@[[F16:S[0-9]+]]]]
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@[[HALF:S[0-9]+]]]]
// CHECK: disc.convert {{.*}}disc_shape.dims = {{\[\[}}]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@batch, @seq]]
func.func @range_float_cast(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> (tensor<?x?xf32>, tensor<?xf16>, tensor<?xf32>, tensor<?x?xf32>) {
  %s = disc.shape_of %x : tensor<?x?xf32> -> tensor<2xi64>
  %i1 = disc.constant dense<1> : tensor<i64>
  %n = disc.gather %s, %i1 {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %nf = disc.convert %n : (tensor<i64>) -> tensor<f32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %o = disc.constant dense<1.0> : tensor<f32>
  %r = disc.range %z, %nf, %o : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %rs = disc.shape_of %r : tensor<?xf32> -> tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %shape = disc.concatenate %one, %rs {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %row = disc.dynamic_reshape %r, %shape : (tensor<?xf32>, tensor<2xi64>) -> tensor<1x?xf32>
  %y = disc.add %x, %row : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  // f16: seq may exceed 2048.
  %nh = disc.convert %n : (tensor<i64>) -> tensor<f16>
  %zh = disc.constant dense<0.0> : tensor<f16>
  %oh = disc.constant dense<1.0> : tensor<f16>
  %rh = disc.range %zh, %nh, %oh : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
  // float(seq) / 2.0 is not an integer in general.
  %two = disc.constant dense<2.0> : tensor<f32>
  %half = disc.div %nf, %two : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %rd = disc.range %z, %half, %o : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  // Back to an integer: the value is seq again.
  %ni = disc.convert %nf : (tensor<f32>) -> tensor<i64>
  %i0 = disc.constant dense<0> : tensor<i64>
  %b = disc.gather %s, %i0 {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %bu = disc.dynamic_reshape %b, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %nu = disc.dynamic_reshape %ni, %one : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %s2 = disc.concatenate %bu, %nu {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %xr = disc.dynamic_reshape %x, %s2 : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %y, %rh, %rd, %xr : tensor<?x?xf32>, tensor<?xf16>, tensor<?xf32>, tensor<?x?xf32>
}

// A causal mask as the importer builds Trilu(ConstantOfShape(Concat(
// Unsqueeze(Shape(x)[1]) x 2)), 1): the full matrix and the mask are
// [seq, seq], and so is the row-minus-column difference of the two ranges
// over its dims.
// CHECK-LABEL: func.func @constant_of_shape_trilu
// CHECK: disc.expand {{.*}}disc_shape.dims = {{\[\[}}@seq, @seq]]
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@seq]]
// CHECK: disc.range {{.*}}disc_shape.dims = {{\[\[}}@seq]]
// CHECK: disc.sub {{.*}}disc_shape.dims = {{\[\[}}@seq, @seq]]
// CHECK: disc.select {{.*}}disc_shape.dims = {{\[\[}}@seq, @seq]]
func.func @constant_of_shape_trilu(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> tensor<?x?xf32> {
  %s = disc.shape_of %x : tensor<?x?xf32> -> tensor<2xi64>
  %i1 = disc.constant dense<1> : tensor<i64>
  %n = disc.gather %s, %i1 {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %c1 = disc.constant dense<1> : tensor<1xi64>
  %nu = disc.dynamic_reshape %n, %c1 {allow_zero = true} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = disc.concatenate %nu, %nu {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %ninf = disc.constant dense<0xFF800000> : tensor<f32>
  %full = disc.expand %ninf, %shape : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  %fs = disc.shape_of %full : tensor<?x?xf32> -> tensor<2xi64>
  %i0 = disc.constant dense<0> : tensor<1xi64>
  %j1 = disc.constant dense<1> : tensor<1xi64>
  %scalar = disc.constant dense<> : tensor<0xi64>
  %rows = disc.gather %fs, %i0 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rn = disc.dynamic_reshape %rows, %scalar {allow_zero = true} : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
  %cols = disc.gather %fs, %j1 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %cn = disc.dynamic_reshape %cols, %scalar {allow_zero = true} : (tensor<1xi64>, tensor<0xi64>) -> tensor<i64>
  %zero = disc.constant dense<0> : tensor<i64>
  %one = disc.constant dense<1> : tensor<i64>
  %r = disc.range %zero, %rn, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %c = disc.range %zero, %cn, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %colShape = disc.constant dense<[-1, 1]> : tensor<2xi64>
  %rowShape = disc.constant dense<[1, -1]> : tensor<2xi64>
  %rc = disc.dynamic_reshape %r, %colShape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1xi64>
  %cr = disc.dynamic_reshape %c, %rowShape : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x?xi64>
  %d = disc.sub %cr, %rc : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi64>
  %keep = disc.compare ge, %d, %one : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
  %zf = disc.constant dense<0.0> : tensor<f32>
  %m = disc.select %keep, %full, %zf : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}

// Tile(x, Concat(Shape(x)[0:1], [1])) as the importer builds it (reshape
// to [1, batch, 1, seq], expand by the repeats, reshape to the products):
// [batch*batch, seq].
// CHECK-LABEL: func.func @tile_by_shape
// CHECK: disc.expand {{.*}}disc_shape.dims = {{\[\[}}@batch, @batch, 1, @seq]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}#disc_shape.expr<()[s0] -> (s0 * s0), [@batch]>, @seq]]
func.func @tile_by_shape(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> tensor<?x?xf32> {
  %s = disc.shape_of %x : tensor<?x?xf32> -> tensor<2xi64>
  %c0 = disc.constant dense<0> : tensor<1xi64>
  %c1 = disc.constant dense<1> : tensor<1xi64>
  %b = disc.slice %s, %c0, %c1, %c1 {axes = array<i64: 0>} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %reps = disc.concatenate %b, %c1 {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r0 = disc.slice %reps, %c0, %c1, %c1 {axes = array<i64: 0>} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %d0 = disc.gather %s, %c0 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p0 = disc.mul %r0, %d0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %d1 = disc.gather %s, %c1 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ones = disc.constant dense<1> : tensor<3xi64>
  %t2 = disc.concatenate %r0, %ones {dimension = 0 : i64} : (tensor<1xi64>, tensor<3xi64>) -> tensor<4xi64>
  %t1 = disc.concatenate %c1, %d0, %c1, %d1 {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %a = disc.dynamic_reshape %x, %t1 {allow_zero = true} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<1x?x1x?xf32>
  %e = disc.expand %a, %t2 : (tensor<1x?x1x?xf32>, tensor<4xi64>) -> tensor<?x?x1x?xf32>
  %t3 = disc.concatenate %p0, %d1 {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %t = disc.dynamic_reshape %e, %t3 {allow_zero = true} : (tensor<?x?x1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}
