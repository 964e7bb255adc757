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
//               exact-shape schedule;
//   - "oracle_none": the specialized model in program order. Where it
//               equals "oracle" but not "none", the gap between the
//               symbolic and the exact-shape compile comes from
//               specialization itself (static buffers of at most
//               kMaxStackBufferBytes live on the stack), not from the order;
//   - "oracle_heap": the "oracle" order with the small static buffers
//               counted as heap allocations, as the symbolic compile must
//               keep them (its sizes are dynamic): the exact-shape schedule
//               under the symbolic compile's placement rule;
//   - "lower_bound": a peak no order of the symbolic model can go below
//               (peakLowerBound below); "memory" equal to it proves the
//               symbolic schedule optimal for the program compiled once.
// Cases bind graph inputs by name (`--case input=2x3x160x192`); the dims
// named in the model (ONNX dim_param) take the values at their positions.
// benchmarks/schedule_table.py runs it on the demo models and writes the
// tables of docs/memory.md.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "disc/Frontend/Onnx/OnnxImporter.h"
#include "disc/InitAll.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/MemoryScheduleGraph.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/BitVector.h"
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
static cl::opt<bool>
    fusion("fusion",
           cl::desc("Run disc-fusion first, as disc-compile does (default)"),
           cl::init(true));
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

/// Imports the model, records `ranges`, annotates shapes, runs disc-fusion
/// (unless `--fusion=false`) and (with `schedule`) disc-memory-schedule.
/// Returns the schedule time in ms through `ms`.
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
  // disc-compile's default: the schedule and the memory model see the
  // fused graph.
  if (fusion) {
    PassManager fpm(&ctx);
    fpm.addPass(disc::createDiscFusionPass());
    if (failed(fpm.run(*module)))
      return nullptr;
  }
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
                                     std::optional<int64_t> &graphPeak,
                                     bool stackPlacement = true) {
  auto f = module.lookupSymbol<func::FuncOp>(kEntry);
  disc::ShapeAnalysis sa(f, disc::collectDimRanges(module));
  sa.run();
  sa.mergeEqualSymbols();
  disc::MemoryModel mm(f, sa);
  mm.setStackPlacement(stackPlacement);
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

/// A lower bound on the peak bytes of every topological order of the
/// symbolic model's scheduling graph at `byName`: an allocation is live when
/// node v runs in *every* order when its producer is v or an ancestor of v
/// and it is returned or read by v or a descendant of v (its live range,
/// ScheduleGraph::Alloc, spans v's step). The bound is the largest sum of
/// such allocations over the nodes. O(nodes^2 / 64 + allocs * nodes * users)
/// time, O(nodes^2 / 8) bytes.
static std::optional<int64_t>
peakLowerBound(ModuleOp module, const llvm::StringMap<int64_t> &byName) {
  auto f = module.lookupSymbol<func::FuncOp>(kEntry);
  disc::ShapeAnalysis sa(f, disc::collectDimRanges(module));
  sa.run();
  sa.mergeEqualSymbols();
  disc::MemoryModel mm(f, sa);
  disc::OpScheduleGraph sg = disc::buildOpScheduleGraph(f, mm);
  const disc::ScheduleGraph &g = sg.graph;
  unsigned n = g.numNodes;
  // anc[v]: strict ancestors of v (preds come first in program order).
  SmallVector<llvm::BitVector> anc(n, llvm::BitVector(n));
  for (unsigned v = 0; v < n; ++v)
    for (unsigned p : g.preds[v]) {
      anc[v] |= anc[p];
      anc[v].set(p);
    }
  SmallVector<int64_t> live(n, 0);
  for (const disc::ScheduleGraph::Alloc &a : g.allocs) {
    std::optional<int64_t> bytes = mm.evaluate(a.bytes, byName);
    if (!bytes)
      return std::nullopt;
    for (unsigned v = 0; v < n; ++v) {
      if (a.producer != v && !anc[v].test(a.producer))
        continue;
      bool spans = a.liveOut || llvm::any_of(a.users, [&](unsigned u) {
                     return u == v || anc[u].test(v);
                   });
      if (spans)
        live[v] += *bytes;
    }
  }
  int64_t bound = 0;
  for (int64_t b : live)
    bound = std::max(bound, b);
  return bound;
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
    double msOracle, msOracleNone;
    OwningOpRef<ModuleOp> oracle = prepare(ctx, exact, true, msOracle);
    OwningOpRef<ModuleOp> oracleNone = prepare(ctx, exact, false, msOracleNone);
    if (!oracle || !oracleNone)
      return fail("could not compile the specialized model for '" + c + "'");
    std::optional<int64_t> gNone, gMem, gOracle, gOracleNone;
    std::optional<int64_t> pNone = peakAt(*none, byName, gNone);
    std::optional<int64_t> pMem = peakAt(*memory, byName, gMem);
    std::optional<int64_t> pOracle = peakAt(*oracle, byName, gOracle);
    std::optional<int64_t> pOracleNone =
        peakAt(*oracleNone, byName, gOracleNone);
    std::optional<int64_t> gOracleHeap;
    std::optional<int64_t> pOracleHeap =
        peakAt(*oracle, byName, gOracleHeap, /*stackPlacement=*/false);
    std::optional<int64_t> pBound = peakLowerBound(*none, byName);
    auto js = [](std::optional<int64_t> v) -> llvm::json::Value {
      if (v)
        return *v;
      return nullptr;
    };
    llvm::json::Object row{{"case", c},
                           {"none", js(pNone)},
                           {"memory", js(pMem)},
                           {"oracle", js(pOracle)},
                           {"oracle_none", js(pOracleNone)},
                           {"oracle_heap", js(pOracleHeap)},
                           {"lower_bound", js(pBound)},
                           {"graph_none", js(gNone)},
                           {"graph_memory", js(gMem)},
                           {"graph_oracle", js(gOracle)},
                           {"schedule_ms", msMemory},
                           {"oracle_schedule_ms", msOracle}};
    llvm::outs() << llvm::json::Value(std::move(row)) << "\n";
  }
  return 0;
}
