//===- ScheduleTable.cpp - peak bytes per schedule, per model and shape ---===//
//
// disc-schedule-table MODEL.onnx --case NAME=D0xD1x... [--case ...]
//                     [--dim NAME=MIN:MAX[:LIKELY]] ...
//
// Prints one JSON object per line and case with the predicted peak bytes
// (the memory model, MemoryModel.h, evaluated at the case's input shapes)
// of three orders:
//   - "none":   program order (`disc-compile --schedule=none`);
//   - "memory": disc-memory-schedule on the symbolic model, compiled once
//               (`--schedule=memory`, the default);
//   - "oracle": disc-memory-schedule on the model with every input dim
//               specialized to the case (`--dim N=2 --dim H=160 ...`): the
//               exact-shape schedule.
// Cases bind graph inputs by name (`--case input=2x3x160x192`); the dims
// named in the model (ONNX dim_param) take the values at their positions.
// benchmarks/schedule_table.py runs it on the demo models and writes the
// tables of docs/memory.md.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "disc/Frontend/Onnx/OnnxImporter.h"
#include "disc/InitAll.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/MemoryScheduleGraph.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required);
static cl::list<std::string>
    cases("case", cl::desc("Input shapes of one case: INPUT=D0xD1x...[,...]"),
          cl::value_desc("INPUT=SHAPE"));
static cl::list<std::string>
    dims("dim", cl::desc("Range of a named dim for the symbolic compile"),
         cl::value_desc("NAME=MIN:MAX[:LIKELY]"));

static constexpr const char *kEntry = "disc_entry";

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "disc-schedule-table: error: " << msg << "\n";
  return 2;
}

/// Adds a `disc_shape.symbolic_dim` with the given facts (what
/// `disc-compile --dim` does).
static void addDim(ModuleOp module, StringRef name, int64_t min, int64_t max,
                   std::optional<int64_t> likely, unsigned n) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  disc_shape::SymbolicDimOp::create(
      b, module.getLoc(), b.getStringAttr("dim" + std::to_string(n)),
      b.getStringAttr(name), b.getI64IntegerAttr(min), b.getI64IntegerAttr(max),
      likely ? b.getI64IntegerAttr(*likely) : IntegerAttr(), b.getUnitAttr(),
      UnitAttr());
}

/// Imports the model, records `ranges`, annotates shapes and (with
/// `schedule`) runs disc-memory-schedule. Returns the schedule time in ms
/// through `ms`.
static OwningOpRef<ModuleOp> prepare(
    MLIRContext &ctx,
    ArrayRef<std::tuple<std::string, int64_t, int64_t, std::optional<int64_t>>>
        ranges,
    bool schedule, double &ms) {
  disc::OnnxImportOptions options;
  options.entryName = kEntry;
  OwningOpRef<ModuleOp> module = disc::importOnnxModel(ctx, inputPath, options);
  if (!module)
    return nullptr;
  unsigned n = 0;
  for (auto &[name, lo, hi, likely] : ranges)
    addDim(*module, name, lo, hi, likely, n++);
  if (failed(disc::annotateShapes(*module, /*simplify=*/true)))
    return nullptr;
  ms = 0;
  if (schedule) {
    PassManager pm(&ctx);
    pm.addPass(disc::createDiscMemorySchedule());
    auto t0 = std::chrono::steady_clock::now();
    if (failed(pm.run(*module)))
      return nullptr;
    ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
             .count();
  }
  return module;
}

/// Peak bytes of the module's current order at `byName`, from the memory
/// model; `graphPeak` gets the same peak computed on the scheduler's graph
/// (they must agree: the scheduler judges orders on that graph).
static std::optional<int64_t> peakAt(ModuleOp module,
                                     const llvm::StringMap<int64_t> &byName,
                                     std::optional<int64_t> &graphPeak) {
  auto f = module.lookupSymbol<func::FuncOp>(kEntry);
  disc::ShapeAnalysis sa(f, disc::collectDimRanges(module));
  sa.run();
  sa.mergeEqualSymbols();
  disc::MemoryModel mm(f, sa);
  disc::MemoryProfile p = mm.profile();
  disc::OpScheduleGraph sg = disc::buildOpScheduleGraph(f, mm);
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < sg.ops.size(); ++i)
    order.push_back(i);
  graphPeak = 0;
  for (AffineExpr e : disc::liveBytesPerStep(sg.graph, order)) {
    std::optional<int64_t> v = mm.evaluate(e, byName);
    if (!v) {
      graphPeak.reset();
      break;
    }
    graphPeak = std::max(*graphPeak, *v);
  }
  return mm.evaluatePeak(p, byName);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "DISC schedule peak table\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  disc::registerAllDiscDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  ctx.printOpOnDiagnostic(false);

  using Range =
      std::tuple<std::string, int64_t, int64_t, std::optional<int64_t>>;
  SmallVector<Range> symbolic;
  for (const std::string &d : dims) {
    auto [name, spec] = StringRef(d).split('=');
    SmallVector<StringRef> parts;
    spec.split(parts, ':');
    int64_t v[3] = {0, 0, 0};
    if (parts.size() < 2 || parts.size() > 3)
      return fail("bad --dim '" + d + "'");
    for (size_t i = 0; i < parts.size(); ++i)
      if (parts[i].getAsInteger(10, v[i]))
        return fail("bad --dim '" + d + "'");
    symbolic.push_back(
        {name.str(), v[0], v[1],
         parts.size() == 3 ? std::optional<int64_t>(v[2]) : std::nullopt});
  }

  double msNone, msMemory;
  OwningOpRef<ModuleOp> none = prepare(ctx, symbolic, false, msNone);
  OwningOpRef<ModuleOp> memory = prepare(ctx, symbolic, true, msMemory);
  if (!none || !memory)
    return fail("could not compile '" + inputPath + "'");
  auto entry = none->lookupSymbol<func::FuncOp>(kEntry);

  for (const std::string &c : cases) {
    // Bind the named dims of each input to the case's sizes.
    llvm::StringMap<int64_t> byName;
    SmallVector<StringRef> items;
    StringRef(c).split(items, ',');
    for (StringRef item : items) {
      auto [input, shape] = item.split('=');
      SmallVector<StringRef> ds;
      shape.split(ds, 'x');
      bool found = false;
      for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
        auto nameAttr = entry.getArgAttrOfType<StringAttr>(i, "disc.name");
        if (!nameAttr || nameAttr.getValue() != input)
          continue;
        found = true;
        auto argDims = entry.getArgAttrOfType<ArrayAttr>(i, "disc.dims");
        if (!argDims || argDims.size() != ds.size())
          return fail("case '" + c + "': rank of input '" + input + "'");
        for (unsigned k = 0; k < ds.size(); ++k) {
          int64_t v;
          if (ds[k].getAsInteger(10, v))
            return fail("case '" + c + "': bad size '" + ds[k] + "'");
          if (auto s = dyn_cast<StringAttr>(argDims[k]))
            byName[s.getValue()] = v;
        }
      }
      if (!found)
        return fail("case '" + c + "': no input named '" + input + "'");
    }
    SmallVector<Range> exact;
    for (auto &kv : byName)
      exact.push_back(
          {kv.getKey().str(), kv.getValue(), kv.getValue(), std::nullopt});
    llvm::sort(exact);
    double msOracle;
    OwningOpRef<ModuleOp> oracle = prepare(ctx, exact, true, msOracle);
    if (!oracle)
      return fail("could not compile the specialized model for '" + c + "'");
    std::optional<int64_t> gNone, gMem, gOracle;
    std::optional<int64_t> pNone = peakAt(*none, byName, gNone);
    std::optional<int64_t> pMem = peakAt(*memory, byName, gMem);
    std::optional<int64_t> pOracle = peakAt(*oracle, byName, gOracle);
    auto js = [](std::optional<int64_t> v) -> llvm::json::Value {
      if (v)
        return *v;
      return nullptr;
    };
    llvm::json::Object row{{"case", c},
                           {"none", js(pNone)},
                           {"memory", js(pMem)},
                           {"oracle", js(pOracle)},
                           {"graph_none", js(gNone)},
                           {"graph_memory", js(gMem)},
                           {"graph_oracle", js(gOracle)},
                           {"schedule_ms", msMemory},
                           {"oracle_schedule_ms", msOracle}};
    llvm::outs() << llvm::json::Value(std::move(row)) << "\n";
  }
  return 0;
}
