//===- CheckAllocations.cpp - Overflow checks before dynamic allocations --===//
//
// `disc-check-allocations`: the byte size of a `memref.alloc` is computed
// by the memref-to-LLVM lowering as sizes x element size in wrapping i64
// arithmetic. Sizes from run-time values (ConstantOfShape, Expand, Tile,
// Range, Reshape with a run-time shape) can make that product wrap to a
// small number; the model would then write far past its buffer. This pass
// checks, before each allocation with dynamic sizes, that every size is
// non-negative and that the product fits in int64.
//
//===----------------------------------------------------------------------===//
#include "RuntimeChecks.h"
#include "disc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCCHECKALLOCATIONS
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

struct DiscCheckAllocationsPass
    : public disc::impl::DiscCheckAllocationsBase<DiscCheckAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp op) {
      if (!op.getDynamicSizes().empty())
        allocs.push_back(op);
    });
    if (allocs.empty())
      return;
    RuntimeChecks checks(module);
    for (memref::AllocOp op : allocs)
      checkAlloc(checks, op);
    checks.finish();
  }

  static void checkAlloc(RuntimeChecks &checks, memref::AllocOp op) {
    MemRefType type = op.getType();
    Type elt = type.getElementType();
    if (!elt.isIntOrFloat())
      return;
    OpBuilder b(op);
    Location loc = op.getLoc();
    // Static part: element bytes times the static dims (fits: the type
    // verified).
    int64_t staticBytes =
        std::max<int64_t>(1, (elt.getIntOrFloatBitWidth() + 7) / 8);
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        staticBytes *= d;
    if (staticBytes == 0)
      return; // An empty buffer whatever the dynamic sizes.
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = c(0);
    Value maxBytes = c(std::numeric_limits<int64_t>::max());
    Value acc = c(staticBytes);
    Value ok;
    auto andOk = [&](Value v) {
      ok = ok ? arith::AndIOp::create(b, loc, ok, v).getResult() : v;
    };
    for (Value d : op.getDynamicSizes()) {
      andOk(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, d, zero));
      // d == 0 || acc <= INT64_MAX / d; the division uses max(d, 1).
      Value one = c(1);
      Value safe = arith::MaxSIOp::create(b, loc, d, one);
      Value limit = arith::DivSIOp::create(b, loc, maxBytes, safe);
      Value fits =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, acc, limit);
      Value isZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
      andOk(arith::OrIOp::create(b, loc, fits, isZero));
      acc = arith::MulIOp::create(b, loc, acc, d);
    }
    // The message shows the shape with its first dynamic sizes.
    std::string shape;
    unsigned next = 0;
    SmallVector<Value> shown;
    for (auto [i, d] : llvm::enumerate(type.getShape())) {
      shape += i ? " x " : "";
      if (!ShapedType::isDynamic(d)) {
        shape += std::to_string(d);
        continue;
      }
      if (next < kMaxCheckValues) {
        shape += "{" + std::to_string(next) + "}";
        shown.push_back(op.getDynamicSizes()[next]);
      } else {
        shape += "?";
      }
      ++next;
    }
    std::string eltName;
    llvm::raw_string_ostream os(eltName);
    os << elt;
    checks.check(b, loc, ok, "",
                 "cannot allocate a " + eltName + " buffer of shape [" + shape +
                     "]: a size is negative or the byte size overflows int64",
                 shown);
  }
};

} // namespace
