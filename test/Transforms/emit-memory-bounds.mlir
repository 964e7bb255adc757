// An upper bound of the peak for a data-dependent size (docs/memory.md,
// "Upper bounds"): TopK with a run-time k. The slice's count is a fresh
// size at most the sliced dim (N's row length W); the model evaluates it at
// W, flags the prediction as an upper bound, and the run's measured peak is
// at most it (k = 1 of W = 4; k = W gives the bound's own sizes).
// arg_sort's rank temporary is a scratch of its result's size.
// RUN: disc-compile %s --schedule=none --emit=memory -o - | FileCheck %s
// RUN: disc-compile %s --schedule=none -o %t.so
// RUN: disc-run %t.so --input x=3x4:random --input k=1:ones --report %t.json | FileCheck %s --check-prefix=EXEC
// RUN: %python -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['predicted_peak_is_upper_bound'] and r['peak_bytes'] <= r['predicted_peak_bytes'], r" %t.json
// RUN: disc-compile %s --schedule=none --emit=linalg -o - | FileCheck %s --check-prefix=JSON

// CHECK: #2 disc.arg_sort (line [[#]])  alloc=N*W*8 + 64  scratch=N*W*8 + 64
// CHECK: #6 disc.gather_elements (line [[#]])  alloc=N*slice[[#]]*4 + 64
// CHECK: peak: {{[0-9]+}} bytes at the bindings above, 4 allocations; an upper bound: size 'slice[[#]]' (known only at run time) at its bound W
// CHECK: remat candidates: none (the peak is an upper bound)

// EXEC: predicted_peak_bytes: {{[0-9]+}} (upper bound)

// JSON: disc.memory = {bound_reason = "size 'slice{{[0-9]+}}' (known only at run time) at its bound W", num_allocs = 4 : i64, peak_bytes = {{.*}}, predictable = true, upper_bound = true}

module {
  disc_shape.symbolic_dim @n {knownNonNegative, name = "N"}
  disc_shape.symbolic_dim @w {knownNonNegative, name = "W"}
  func.func @disc_entry(%arg0: tensor<?x?xf32> {disc.dims = ["N", "W"], disc.name = "x"}, %arg1: tensor<1xi64> {disc.name = "k"}) -> (tensor<?x?xf32> {disc.name = "values"}, tensor<?x?xi64> {disc.name = "indices"}) {
    %0 = disc.constant dense<1> : tensor<1xi64>
    %1 = disc.dynamic_reshape %arg1, %0 {allow_zero = true} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
    %2 = disc.arg_sort %arg0 {descending = true, dimension = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xi64>
    %3 = disc.constant dense<1> : tensor<1xi64>
    %4 = disc.constant dense<0> : tensor<1xi64>
    %5 = disc.slice %2, %4, %1, %3 {axes = array<i64: 1>} : (tensor<?x?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xi64>
    %6 = disc.gather_elements %arg0, %5 {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
    return %6, %5 : tensor<?x?xf32>, tensor<?x?xi64>
  }
}
