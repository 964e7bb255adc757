//===- DiscShapeDialect.cpp - disc_shape dialect --------------------------===//
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc_shape;

#include "disc/Dialect/DiscShape/IR/DiscShapeOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/DiscShape/IR/DiscShapeAttrs.cpp.inc"
#define GET_OP_CLASSES
#include "disc/Dialect/DiscShape/IR/DiscShapeOps.cpp.inc"

void DiscShapeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "disc/Dialect/DiscShape/IR/DiscShapeOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "disc/Dialect/DiscShape/IR/DiscShapeAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ExprAttr
//===----------------------------------------------------------------------===//

Attribute ExprAttr::parse(AsmParser &parser, Type) {
  AffineMap map;
  ArrayAttr symbols;
  if (parser.parseLess() || parser.parseAffineMap(map) || parser.parseComma() ||
      parser.parseAttribute(symbols) || parser.parseGreater())
    return {};
  return ExprAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), map, symbols);
}

void ExprAttr::print(AsmPrinter &printer) const {
  printer << "<";
  getMap().print(printer.getStream());
  printer << ", ";
  printer.printAttribute(getSymbols());
  printer << ">";
}

LogicalResult ExprAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               AffineMap map, ArrayAttr symbols) {
  if (map.getNumDims() != 0 || map.getNumResults() != 1)
    return emitError() << "disc_shape.expr needs a map with no dims and one "
                          "result, got "
                       << AffineMapAttr::get(map);
  if (map.getNumSymbols() != symbols.size())
    return emitError() << "disc_shape.expr map has " << map.getNumSymbols()
                       << " symbols but " << symbols.size()
                       << " symbolic dims are listed";
  for (Attribute s : symbols)
    if (!isa<FlatSymbolRefAttr>(s))
      return emitError() << "disc_shape.expr symbols must be flat symbol "
                            "references, got "
                         << s;
  return success();
}

//===----------------------------------------------------------------------===//
// Dim entries
//===----------------------------------------------------------------------===//

Attribute mlir::disc_shape::buildDimEntry(MLIRContext *ctx, AffineExpr expr,
                                          ArrayRef<FlatSymbolRefAttr> symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return IntegerAttr::get(IntegerType::get(ctx, 64), c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(expr))
    return symbols[s.getPosition()];
  // Compress to the symbols used, in order of position.
  llvm::SmallVector<bool> used(symbols.size(), false);
  expr.walk([&](AffineExpr e) {
    if (auto s = dyn_cast<AffineSymbolExpr>(e))
      used[s.getPosition()] = true;
  });
  SmallVector<AffineExpr> repl;
  SmallVector<Attribute> refs;
  for (unsigned i = 0; i < symbols.size(); ++i) {
    if (used[i]) {
      repl.push_back(getAffineSymbolExpr(refs.size(), ctx));
      refs.push_back(symbols[i]);
    } else {
      repl.push_back(getAffineConstantExpr(0, ctx));
    }
  }
  AffineExpr e = expr.replaceSymbols(repl);
  return ExprAttr::get(ctx, AffineMap::get(0, refs.size(), e),
                       ArrayAttr::get(ctx, refs));
}

FailureOr<AffineExpr>
mlir::disc_shape::decodeDimEntry(Attribute entry,
                                 function_ref<int(StringRef)> symbolIndex) {
  MLIRContext *ctx = entry.getContext();
  if (auto i = dyn_cast<IntegerAttr>(entry))
    return getAffineConstantExpr(i.getInt(), ctx);
  if (auto s = dyn_cast<FlatSymbolRefAttr>(entry)) {
    int idx = symbolIndex(s.getValue());
    if (idx < 0)
      return failure();
    return getAffineSymbolExpr(idx, ctx);
  }
  if (auto e = dyn_cast<ExprAttr>(entry)) {
    SmallVector<AffineExpr> repl;
    for (Attribute s : e.getSymbols()) {
      int idx = symbolIndex(cast<FlatSymbolRefAttr>(s).getValue());
      if (idx < 0)
        return failure();
      repl.push_back(getAffineSymbolExpr(idx, ctx));
    }
    return e.getMap().getResult(0).replaceSymbols(repl);
  }
  return failure();
}

static LogicalResult checkRef(Operation *from, FlatSymbolRefAttr ref,
                              function_ref<InFlightDiagnostic()> emitError) {
  Operation *sym = SymbolTable::lookupNearestSymbolFrom(from, ref);
  if (!sym)
    return emitError() << "reference to undefined symbolic dim " << ref;
  if (!isa<SymbolicDimOp>(sym))
    return emitError() << ref << " does not name a disc_shape.symbolic_dim";
  return success();
}

LogicalResult
mlir::disc_shape::verifyDimEntry(Operation *from, Attribute entry,
                                 int64_t staticSize,
                                 function_ref<InFlightDiagnostic()> emitError) {
  bool isStatic = !ShapedType::isDynamic(staticSize);
  if (auto i = dyn_cast<IntegerAttr>(entry)) {
    if (i.getInt() < 0)
      return emitError() << "negative dim " << i.getInt();
    if (isStatic && i.getInt() != staticSize)
      return emitError() << "dim annotation " << i.getInt()
                         << " contradicts the static size " << staticSize;
    return success();
  }
  if (auto s = dyn_cast<FlatSymbolRefAttr>(entry)) {
    if (failed(checkRef(from, s, emitError)))
      return failure();
    if (isStatic) {
      auto dim = dyn_cast_or_null<SymbolicDimOp>(
          SymbolTable::lookupNearestSymbolFrom(from, s));
      if (dim && dim.getMax() &&
          (static_cast<int64_t>(dim.getMin()) != staticSize ||
           static_cast<int64_t>(*dim.getMax()) != staticSize))
        return emitError() << "symbolic dim " << s << " with range ["
                           << dim.getMin() << ", " << *dim.getMax()
                           << "] contradicts the static size " << staticSize;
    }
    return success();
  }
  if (auto e = dyn_cast<ExprAttr>(entry)) {
    for (Attribute s : e.getSymbols())
      if (failed(checkRef(from, cast<FlatSymbolRefAttr>(s), emitError)))
        return failure();
    AffineExpr r = e.getMap().getResult(0);
    if (auto c = dyn_cast<AffineConstantExpr>(r))
      if (isStatic && c.getValue() != staticSize)
        return emitError() << "dim annotation " << c.getValue()
                           << " contradicts the static size " << staticSize;
    return success();
  }
  return emitError() << "dim annotation must be an integer, a symbol "
                        "reference or a #disc_shape.expr, got "
                     << entry;
}

/// Checks one value's dims list against its type.
static LogicalResult
verifyDimsList(Operation *from, Attribute list, Type type,
               function_ref<InFlightDiagnostic()> emitError) {
  auto arr = dyn_cast<ArrayAttr>(list);
  if (!arr)
    return emitError() << "disc_shape.dims entry must be an array, got "
                       << list;
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked) {
    if (!arr.empty())
      return emitError() << "disc_shape.dims for a non-ranked-tensor value "
                            "must be empty";
    return success();
  }
  if ((int64_t)arr.size() != ranked.getRank())
    return emitError() << "disc_shape.dims has " << arr.size()
                       << " dims but the type " << type << " has rank "
                       << ranked.getRank();
  for (auto [i, entry] : llvm::enumerate(arr))
    if (failed(verifyDimEntry(from, entry, ranked.getDimSize(i), emitError)))
      return failure();
  return success();
}

LogicalResult DiscShapeDialect::verifyOperationAttribute(Operation *op,
                                                         NamedAttribute attr) {
  if (attr.getName() != getDimsAttrName())
    return op->emitOpError("unknown disc_shape attribute ") << attr.getName();
  auto lists = dyn_cast<ArrayAttr>(attr.getValue());
  if (!lists)
    return op->emitOpError("disc_shape.dims must be an array of arrays");
  if (lists.size() != op->getNumResults())
    return op->emitOpError("disc_shape.dims has ")
           << lists.size() << " entries but the op has " << op->getNumResults()
           << " results";
  for (auto [list, result] : llvm::zip(lists, op->getResults()))
    if (failed(verifyDimsList(op, list, result.getType(),
                              [&] { return op->emitOpError(); })))
      return failure();
  return success();
}

LogicalResult DiscShapeDialect::verifyRegionArgAttribute(Operation *op,
                                                         unsigned region,
                                                         unsigned argIndex,
                                                         NamedAttribute attr) {
  if (attr.getName() != getDimsAttrName())
    return op->emitOpError("unknown disc_shape argument attribute ")
           << attr.getName();
  Region &r = op->getRegion(region);
  if (r.empty() || argIndex >= r.front().getNumArguments())
    return success();
  return verifyDimsList(op, attr.getValue(),
                        r.front().getArgument(argIndex).getType(),
                        [&] { return op->emitOpError(); });
}

LogicalResult DiscShapeDialect::verifyRegionResultAttribute(
    Operation *op, unsigned, unsigned resultIndex, NamedAttribute attr) {
  if (attr.getName() != getDimsAttrName())
    return op->emitOpError("unknown disc_shape result attribute ")
           << attr.getName();
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || resultIndex >= fn.getResultTypes().size())
    return success();
  return verifyDimsList(op, attr.getValue(), fn.getResultTypes()[resultIndex],
                        [&] { return op->emitOpError(); });
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult SymbolicDimOp::verify() {
  // The I64Attr getters are unsigned: read the stored value as signed.
  if (static_cast<int64_t>(getMin()) < 0)
    return emitOpError("min must be non-negative, got ")
           << static_cast<int64_t>(getMin());
  if (getMax() && *getMax() < getMin())
    return emitOpError("empty range [") << getMin() << ", " << *getMax() << "]";
  if (getLikely() &&
      (*getLikely() < getMin() || (getMax() && *getLikely() > *getMax())))
    return emitOpError("likely value ") << *getLikely() << " outside the range";
  if (getKnownNonOne() && getMax() && getMin() == 1 && *getMax() == 1)
    return emitOpError("knownNonOne contradicts the range [1, 1]");
  return success();
}

LogicalResult ConstraintOp::verify() {
  if (getKind() != "eq" && getKind() != "ge")
    return emitOpError("kind must be \"eq\" or \"ge\", got \"")
           << getKind() << "\"";
  for (Attribute side : {getLhs(), getRhs()})
    if (failed(verifyDimEntry(*this, side, ShapedType::kDynamic,
                              [&] { return emitOpError(); })))
      return failure();
  return success();
}
