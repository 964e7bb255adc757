// Nested regeneration (rematerialization test input,
// test/e2e/remat_property.py): %b and %a = tanh(%b) both wait through the
// wide middle; %a's recompute reads %b, so %b is regenerated first, at
// %a's regenerate point.
func.func @remat_nested(%x: tensor<?x?xf32> {disc.dims = ["S0", "S1"]}) -> tensor<?x?xf32> {
  %b = disc.exp %x : tensor<?x?xf32>
  %a = disc.tanh %b : tensor<?x?xf32>
  %c = disc.sin %a : tensor<?x?xf32>
  %d = disc.cos %c : tensor<?x?xf32>
  %e = disc.add %c, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %f = disc.mul %e, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %g = disc.sub %f, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %h = disc.tanh %g : tensor<?x?xf32>
  %k = disc.add %h, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %l = disc.mul %k, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %l : tensor<?x?xf32>
}
