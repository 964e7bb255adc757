// Two skip connections around a wide middle (the shape of a U-Net level):
// %a and %g are used right after they are made and again at the end; the
// peak is in the middle, where both are idle. Rematerialization test input
// (test/e2e/remat_property.py).
func.func @remat_skips(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %a = disc.exp %x : tensor<?x?xf32>
  %b = disc.tanh %a : tensor<?x?xf32>
  %g = disc.logistic %b : tensor<?x?xf32>
  %c = disc.sin %g : tensor<?x?xf32>
  %d = disc.cos %c : tensor<?x?xf32>
  %e = disc.add %c, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %h = disc.mul %e, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %i = disc.sub %h, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %j = disc.tanh %i : tensor<?x?xf32>
  %k = disc.add %j, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l = disc.mul %k, %g : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = disc.add %l, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
