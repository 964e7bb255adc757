//===- DiscDialect.cpp - disc dialect registration ------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;

#include "disc/Dialect/Disc/IR/DiscEnums.cpp.inc"
#include "disc/Dialect/Disc/IR/DiscOpInterfaces.cpp.inc"
#include "disc/Dialect/Disc/IR/DiscOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/IR/DiscAttrs.cpp.inc"

void DiscDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "disc/Dialect/Disc/IR/DiscOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "disc/Dialect/Disc/IR/DiscAttrs.cpp.inc"
      >();
}

Operation *DiscDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, typed);
}
