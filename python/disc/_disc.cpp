//===- _disc.cpp - The `disc._disc` Python extension (pybind11) -----------===//
//
// Binds the compiler driver (disc/Driver/Driver.h, the library behind
// `disc-compile`) and the runtime's C++ API (disc/runtime/Runtime.h) for the
// `disc` package (python/disc/__init__.py, docs/python.md): NumPy arrays in
// and out, without copies where the layout allows, and errors as
// `disc.Error` carrying the exit status of the CLIs.
//
//===----------------------------------------------------------------------===//
#include "disc/runtime/Runtime.h"

#ifdef DISC_PYTHON_COMPILER
#include "disc/Driver/Driver.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#endif

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// `disc.Error`, created at import.
PyObject *errorType = nullptr;

/// The exit status of the CLIs (docs/cli.md) for a runtime status code: 2
/// bad input or load failure, 3 memory, 4 internal.
int exitStatusOf(disc::StatusCode code) {
  switch (code) {
  case disc::StatusCode::Ok:
    return 0;
  case disc::StatusCode::InvalidArgument:
  case disc::StatusCode::LoadFailed:
    return 2;
  case disc::StatusCode::ResourceExhausted:
    return 3;
  case disc::StatusCode::Internal:
    return 4;
  }
  return 4;
}

/// Raises `disc.Error(message)` with `.status`, `.code` and `.message`.
[[noreturn]] void raise(int status, const std::string &code,
                        const std::string &message) {
  py::object exc = py::reinterpret_borrow<py::object>(errorType)(message);
  exc.attr("status") = status;
  exc.attr("code") = code;
  exc.attr("message") = message;
  PyErr_SetObject(errorType, exc.ptr());
  throw py::error_already_set();
}

void check(const disc::Status &s) {
  if (!s.isOk())
    raise(exitStatusOf(s.code()), disc::statusCodeName(s.code()), s.message());
}

[[noreturn]] void raiseBadInput(const std::string &message) {
  raise(2, disc::statusCodeName(disc::StatusCode::InvalidArgument), message);
}

/// NumPy has no bfloat16: its tensors cross as uint16 arrays of the bits.
py::dtype numpyDType(disc::DType dtype) {
  if (dtype == disc::DType::BFloat16)
    return py::dtype("uint16");
  return py::dtype(std::string(disc::dtypeName(dtype)));
}

/// A NumPy array that owns `t`'s buffer (no copy): the capsule holds a
/// reference to it.
py::array toNumpy(const disc::Tensor &t) {
  if (!t.data()) // No elements: nothing to share.
    return py::array(
        numpyDType(t.dtype()),
        std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  auto *owner = new disc::Tensor(t);
  py::capsule base(owner,
                   [](void *p) { delete static_cast<disc::Tensor *>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = disc::dtypeSize(t.dtype());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<py::ssize_t>(shape[i], 1);
  }
  return py::array(numpyDType(t.dtype()), shape, strides, owner->data(), base);
}

/// An input array: the object as a native-endian, C-contiguous array (the
/// same array when it is one already). A non-array is converted to
/// `expected` when given.
py::array asInputArray(py::handle obj, const disc::TensorSpec *expected) {
  py::module_ np = py::module_::import("numpy");
  py::object arr;
  if (py::isinstance<py::array>(obj))
    arr = py::reinterpret_borrow<py::object>(obj);
  else if (expected)
    arr = np.attr("asarray")(obj, numpyDType(expected->dtype));
  else
    arr = np.attr("asarray")(obj);
  py::dtype dt = arr.attr("dtype").cast<py::dtype>();
  if (!dt.attr("isnative").cast<bool>())
    arr = arr.attr("astype")(dt.attr("newbyteorder")("="));
  auto a = arr.cast<py::array>();
  if (!(a.flags() & py::array::c_style))
    a = np.attr("ascontiguousarray")(a).cast<py::array>();
  return a;
}

/// Wraps `a` (kept alive by the caller for the Tensor's lifetime) as a
/// Tensor without copying.
disc::Tensor toTensor(const std::string &name, py::array &a,
                      const disc::TensorSpec *expected) {
  std::string dtName = py::str(a.dtype().attr("name"));
  disc::DType dt;
  if (!disc::parseDType(dtName, &dt))
    raiseBadInput("input '" + name + "': unsupported NumPy dtype " + dtName +
                  (expected ? std::string(" (the model takes ") +
                                  disc::dtypeName(expected->dtype) + ")"
                            : std::string()));
  if (expected && expected->dtype == disc::DType::BFloat16 &&
      dt == disc::DType::UInt16)
    dt = disc::DType::BFloat16; // The bits of a bfloat16 input.
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  // The runtime only reads inputs: a read-only array is fine.
  return disc::Tensor::adopt(dt, std::move(shape), const_cast<void *>(a.data()),
                             nullptr);
}

/// A shape as Python sees it: an int per static dim, the name of a named
/// dim, None for an unknown one.
py::tuple shapeOf(const disc::TensorSpec &spec) {
  py::tuple t(spec.shape.size());
  for (size_t i = 0; i < spec.shape.size(); ++i) {
    const disc::DimSpec &d = spec.shape[i];
    if (d.isStatic())
      t[i] = py::int_(d.size);
    else if (d.isSymbolic())
      t[i] = py::str(d.symbol);
    else
      t[i] = py::none();
  }
  return t;
}

/// One input or output of a model (docs/python.md, "Executable").
struct TensorInfo {
  std::string name;
  py::dtype dtype;
  py::tuple shape;
  bool isState = false;
  std::string updates;
};

TensorInfo infoOf(const disc::TensorSpec &spec) {
  return {spec.name, numpyDType(spec.dtype), shapeOf(spec), spec.isState,
          spec.updates};
}

using ExecutablePtr = std::shared_ptr<disc::Executable>;

/// Input shapes from a dict (by run-input name) or a sequence (run-input
/// order), as Executable::predictPeakBytes takes them.
std::vector<std::vector<int64_t>> inputShapes(const disc::Signature &sig,
                                              py::handle shapes) {
  std::vector<std::vector<int64_t>> out;
  if (py::isinstance<py::dict>(shapes)) {
    auto d = py::reinterpret_borrow<py::dict>(shapes);
    size_t used = 0;
    for (int64_t i : sig.runInputs()) {
      const std::string &name = sig.inputs[i].name;
      if (!d.contains(name))
        raiseBadInput("no shape for input '" + name + "'");
      out.push_back(d[py::str(name)].cast<std::vector<int64_t>>());
      ++used;
    }
    if (used != d.size())
      for (auto item : d) {
        std::string name = py::str(item.first);
        int64_t i = sig.findInput(name);
        if (i < 0 || sig.inputs[i].isState)
          raiseBadInput("unknown input '" + name + "'");
      }
    return out;
  }
  for (py::handle s : shapes)
    out.push_back(s.cast<std::vector<int64_t>>());
  return out;
}

/// A Session and the lock that keeps it to one thread at a time.
struct PySession {
  std::unique_ptr<disc::Session> session;
  std::mutex mutex;
};

py::dict statsDict(const disc::SessionStats &s) {
  py::dict d;
  d["latency_ms"] = s.last_latency_ms;
  d["peak_bytes"] = s.peak_bytes;
  d["current_bytes"] = s.current_bytes;
  d["num_allocs"] = s.num_allocs;
  d["leaked_allocs"] = s.leaked_allocs;
  d["evictions"] = s.remat_evictions;
  d["regenerations"] = s.remat_regenerations;
  d["bytes_recomputed"] = s.remat_bytes_recomputed;
  d["recompute_ms"] = s.remat_recompute_ms;
  d["offloads"] = s.remat_offloads;
  d["bytes_offloaded"] = s.remat_bytes_offloaded;
  d["offload_ms"] = s.remat_offload_ms;
  d["minimum_peak_bytes"] = s.remat_minimum_peak_bytes;
  d["predicted_peak_bytes"] = s.predicted_peak_bytes;
  d["predicted_peak_is_upper_bound"] = s.predicted_peak_is_upper_bound;
  d["reserved_peak_bytes"] = s.reserved_peak_bytes;
  d["cuda_graph_captures"] = s.cuda_graph_captures;
  d["cuda_graph_replays"] = s.cuda_graph_replays;
  return d;
}

py::dict run(PySession &self, py::handle inputs, py::object trace,
             py::object memoryPlot) {
  if ((!trace.is_none() || !memoryPlot.is_none()) &&
      !self.session->options().record_trace)
    raiseBadInput("Session.run(trace=..., memory_plot=...) needs a session "
                  "made with record_trace=True");
  const disc::Signature &sig = self.session->executable().signature();
  // The arrays stay referenced here until the run is over.
  std::vector<py::array> arrays;
  std::vector<disc::Tensor> outputs;
  disc::Status status;
  if (py::isinstance<py::dict>(inputs)) {
    std::map<std::string, disc::Tensor> byName;
    auto d = py::reinterpret_borrow<py::dict>(inputs);
    arrays.reserve(d.size());
    for (auto item : d) {
      std::string name = py::str(item.first);
      int64_t i = sig.findInput(name);
      const disc::TensorSpec *spec = i >= 0 ? &sig.inputs[i] : nullptr;
      arrays.push_back(asInputArray(item.second, spec));
      byName[name] = toTensor(name, arrays.back(), spec);
    }
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    status = self.session->run(byName, &outputs);
  } else {
    if (py::isinstance<py::array>(inputs) || py::isinstance<py::str>(inputs) ||
        !py::isinstance<py::sequence>(inputs))
      throw py::type_error("Session.run takes {name: array} or a list of "
                           "arrays in input order");
    std::vector<int64_t> runInputs = sig.runInputs();
    std::vector<disc::Tensor> positional;
    for (py::handle obj : inputs) {
      size_t k = positional.size();
      const disc::TensorSpec *spec =
          k < runInputs.size() ? &sig.inputs[runInputs[k]] : nullptr;
      std::string name = spec ? spec->name : "#" + std::to_string(k);
      arrays.push_back(asInputArray(obj, spec));
      positional.push_back(toTensor(name, arrays.back(), spec));
    }
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    status = self.session->run(positional, &outputs);
  }
  // The timeline is written for a failed run too (what ran before the
  // error), as disc-run does.
  if (!trace.is_none())
    check(disc::writeChromeTrace(self.session->lastTrace(),
                                 py::str(trace).cast<std::string>()));
  if (!memoryPlot.is_none())
    check(disc::writeMemoryPlot(self.session->lastTrace(),
                                py::str(memoryPlot).cast<std::string>()));
  check(status);
  py::dict result;
  std::vector<int64_t> runOutputs = sig.runOutputs();
  for (size_t k = 0; k < outputs.size() && k < runOutputs.size(); ++k)
    result[py::str(sig.outputs[runOutputs[k]].name)] = toNumpy(outputs[k]);
  return result;
}

#ifdef DISC_PYTHON_COMPILER
/// `disc.compile`'s C++ half: the keyword arguments are the fields of
/// mlir::disc::CompileOptions (python/disc/__init__.py maps the public
/// names to these).
void compileModel(py::kwargs kw) {
  namespace md = mlir::disc;
  md::CompileOptions o;
  for (auto item : kw) {
    std::string key = py::str(item.first);
    py::handle v = item.second;
    if (key == "input")
      o.inputPath = v.cast<std::string>();
    else if (key == "output")
      o.outputPath = v.cast<std::string>();
    else if (key == "target") {
      auto t = md::parseCompileTarget(v.cast<std::string>());
      if (!t)
        raiseBadInput(llvm::toString(t.takeError()));
      o.target = *t;
    } else if (key == "gpu_arch")
      o.gpuArch = v.cast<std::string>();
    else if (key == "gpu_elements_per_thread")
      o.gpuElementsPerThread = v.cast<int64_t>();
    else if (key == "gpu_row_elements_per_thread")
      o.gpuRowElementsPerThread = v.cast<int64_t>();
    else if (key == "dims")
      o.dims = v.cast<std::vector<std::string>>();
    else if (key == "schedule")
      o.memorySchedule = v.cast<bool>();
    else if (key == "remat")
      o.remat = v.cast<bool>();
    else if (key == "remat_max_ops")
      o.rematMaxOps = v.cast<unsigned>();
    else if (key == "force_dynamic")
      o.forceDynamic = v.cast<bool>();
    else if (key == "in_place_state")
      o.inPlaceState = v.cast<bool>();
    else if (key == "library_calls") {
      auto m = md::parseLibraryCallMode(v.cast<std::string>());
      if (!m)
        raiseBadInput(llvm::toString(m.takeError()));
      o.libraryCalls = *m;
    } else if (key == "timing")
      o.timing = v.cast<bool>();
    else if (key == "fusion")
      o.fusion = v.cast<bool>();
    else if (key == "recompute_elementwise")
      o.recomputeElementwise = v.cast<bool>();
    else if (key == "report_codegen")
      o.reportCodegen = v.cast<bool>();
    else if (key == "compile_jobs")
      o.compileJobs = v.cast<unsigned>();
    else if (key == "train")
      o.training.enabled = v.cast<bool>();
    else if (key == "loss")
      o.training.loss = v.cast<std::string>();
    else if (key == "trainable")
      o.training.trainable = v.cast<std::vector<std::string>>();
    else if (key == "frozen")
      o.training.frozen = v.cast<std::vector<std::string>>();
    else if (key == "optimizer")
      o.training.optimizer = v.cast<std::string>();
    else if (key == "lr")
      o.training.lr = v.cast<double>();
    else if (key == "momentum")
      o.training.momentum = v.cast<double>();
    else if (key == "weight_decay")
      o.training.weightDecay = v.cast<double>();
    else if (key == "beta1")
      o.training.beta1 = v.cast<double>();
    else if (key == "beta2")
      o.training.beta2 = v.cast<double>();
    else if (key == "eps")
      o.training.eps = v.cast<double>();
    else
      throw py::type_error("compile() got an unexpected keyword argument '" +
                           key + "'");
  }
  std::string text;
  llvm::raw_string_ostream errors(text);
  o.errorStream = &errors;
  int code;
  {
    py::gil_scoped_release release;
    code = md::compileModel(o);
  }
  errors.flush();
  if (code != md::CompileOk) {
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    raise(code, code == md::CompileBadInput ? "bad input" : "compile failed",
          text);
  }
  // Warnings and the --report-codegen report.
  if (!text.empty())
    py::module_::import("sys").attr("stderr").attr("write")(text);
}
#endif

} // namespace

PYBIND11_MODULE(_disc, m) {
  m.doc() = "DISC compiler and runtime bindings (docs/python.md); use the "
            "`disc` package.";
  errorType = PyErr_NewExceptionWithDoc(
      "disc.Error",
      "A failed compile or run. `status` is the exit status of the CLIs "
      "(1 compiler failure, 2 bad input or load failure, 3 memory limit or "
      "out of memory, 4 internal error), `code` the runtime's status name, "
      "`message` the text (naming the input, dim, node or value).",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(errorType);
  m.attr("has_compiler") =
#ifdef DISC_PYTHON_COMPILER
      true;
  m.def("_compile", &compileModel);
  // compileModel applies MLIR's command-line options (at their defaults
  // here: nothing parses a command line), which must exist.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
#else
      false;
#endif

  py::class_<TensorInfo>(m, "TensorInfo",
                         "A model input or output: name, NumPy dtype, shape "
                         "(int per static dim, str per named dim, None when "
                         "unknown).")
      .def_readonly("name", &TensorInfo::name)
      .def_readonly("dtype", &TensorInfo::dtype)
      .def_readonly("shape", &TensorInfo::shape)
      .def_readonly("is_state", &TensorInfo::isState)
      .def_readonly("updates", &TensorInfo::updates)
      .def("__repr__", [](const TensorInfo &t) -> std::string {
        return "TensorInfo(" + py::repr(py::str(t.name)).cast<std::string>() +
               ", " + py::str(py::handle(t.dtype)).cast<std::string>() + ", " +
               py::repr(t.shape).cast<std::string>() + ")";
      });

  py::class_<disc::Executable, ExecutablePtr>(
      m, "Executable", py::dynamic_attr(), "A loaded model.so.")
      .def_static(
          "load",
          [](const std::string &path) {
            std::shared_ptr<const disc::Executable> exe;
            check(disc::Executable::load(path, &exe));
            return std::const_pointer_cast<disc::Executable>(exe);
          },
          py::arg("path"),
          "Loads a model.so; disc.Error (status 2) when it cannot.")
      .def_property_readonly("path", &disc::Executable::path)
      .def_property_readonly(
          "target",
          [](const disc::Executable &e) { return e.signature().target; })
      .def_property_readonly(
          "loss", [](const disc::Executable &e) { return e.signature().loss; })
      .def_property_readonly(
          "signature_json",
          [](const disc::Executable &e) { return e.signatureJson(); })
      .def_property_readonly(
          "inputs",
          [](const disc::Executable &e) {
            const disc::Signature &sig = e.signature();
            std::vector<TensorInfo> out;
            for (int64_t i : sig.runInputs())
              out.push_back(infoOf(sig.inputs[i]));
            return out;
          },
          "The inputs Session.run takes (state inputs excluded).")
      .def_property_readonly(
          "outputs",
          [](const disc::Executable &e) {
            const disc::Signature &sig = e.signature();
            std::vector<TensorInfo> out;
            for (int64_t i : sig.runOutputs())
              out.push_back(infoOf(sig.outputs[i]));
            return out;
          },
          "The outputs Session.run returns (state updates excluded).")
      .def_property_readonly(
          "states",
          [](const disc::Executable &e) {
            std::vector<TensorInfo> out;
            for (const disc::TensorSpec &s : e.signature().inputs)
              if (s.isState)
                out.push_back(infoOf(s));
            return out;
          },
          "The training state the session holds.")
      .def_property_readonly(
          "symbols",
          [](const disc::Executable &e) {
            py::dict d;
            for (const disc::SymbolSpec &s : e.signature().symbols)
              d[py::str(s.name)] = py::make_tuple(
                  s.min, s.max ? py::object(py::int_(*s.max)) : py::none());
            return d;
          },
          "Named dims: name -> (min, max), max None when unbounded.")
      .def(
          "predict_peak_bytes",
          [](const disc::Executable &e, py::handle shapes, int threads) {
            auto s = inputShapes(e.signature(), shapes);
            int64_t bytes = -1;
            disc::Status st;
            {
              py::gil_scoped_release release;
              st = e.predictPeakBytes(s, &bytes, threads);
            }
            check(st);
            return bytes < 0 ? py::object(py::none()) : py::int_(bytes);
          },
          py::arg("shapes"), py::arg("threads") = 0)
      .def(
          "predict_minimum_peak_bytes",
          [](const disc::Executable &e, py::handle shapes) {
            auto s = inputShapes(e.signature(), shapes);
            int64_t bytes = -1;
            disc::Status st;
            {
              py::gil_scoped_release release;
              st = e.predictMinimumPeakBytes(s, &bytes);
            }
            check(st);
            return bytes < 0 ? py::object(py::none()) : py::int_(bytes);
          },
          py::arg("shapes"));

  py::class_<PySession>(m, "Session", "Runs of one Executable.")
      .def(
          py::init([](ExecutablePtr exe, py::object memoryLimit,
                      py::object threads, const std::string &policy,
                      const std::string &eviction, bool recordTrace,
                      int32_t cudaGraphs, bool flushSubnormals) {
            disc::SessionOptions o;
            o.record_trace = recordTrace;
            o.flush_subnormals = flushSubnormals;
            if (cudaGraphs < 0)
              raiseBadInput("cuda_graphs must be >= 0");
            o.cuda_graph_cache_size = cudaGraphs;
            if (!memoryLimit.is_none())
              o.memory_limit_bytes = memoryLimit.cast<int64_t>();
            if (o.memory_limit_bytes < 0)
              raiseBadInput("memory_limit must be >= 0 bytes");
            if (!threads.is_none())
              o.num_threads = threads.cast<int32_t>();
            if (o.num_threads < 0)
              raiseBadInput("threads must be >= 0");
            if (policy == "dtr")
              o.remat_policy = disc::RematPolicy::DtrScore;
            else if (policy != "largest-first")
              raiseBadInput("unsupported remat_policy '" + policy +
                            "' (supported: largest-first, dtr)");
            if (eviction == "recompute")
              o.device_eviction = disc::DeviceEviction::Recompute;
            else if (eviction == "offload")
              o.device_eviction = disc::DeviceEviction::Offload;
            else if (eviction != "auto")
              raiseBadInput("unsupported device_eviction '" + eviction +
                            "' (supported: auto, recompute, offload)");
            auto s = std::make_unique<PySession>();
            s->session = std::make_unique<disc::Session>(exe, o);
            return s;
          }),
          py::arg("executable"), py::arg("memory_limit") = py::none(),
          py::arg("threads") = py::none(),
          py::arg("remat_policy") = "largest-first",
          py::arg("device_eviction") = "auto", py::arg("record_trace") = false,
          py::arg("cuda_graphs") = disc::SessionOptions().cuda_graph_cache_size,
          py::arg("flush_subnormals") = disc::SessionOptions().flush_subnormals,
          py::keep_alive<1, 2>())
      .def("run", &run, py::arg("inputs"), py::arg("trace") = py::none(),
           py::arg("memory_plot") = py::none())
      .def_property_readonly("stats",
                             [](PySession &s) {
                               std::lock_guard<std::mutex> lock(s.mutex);
                               return statsDict(s.session->stats());
                             })
      .def_property_readonly(
          "memory_limit",
          [](PySession &s) { return s.session->options().memory_limit_bytes; })
      .def_property_readonly("state_names",
                             [](PySession &s) {
                               std::lock_guard<std::mutex> lock(s.mutex);
                               return s.session->stateNames();
                             })
      .def_property_readonly("loss_name",
                             [](PySession &s) { return s.session->lossName(); })
      .def(
          "get_state",
          [](PySession &s, const std::string &name) {
            disc::Tensor t;
            {
              std::lock_guard<std::mutex> lock(s.mutex);
              check(s.session->getState(name, &t));
            }
            return toNumpy(t);
          },
          py::arg("name"))
      .def(
          "set_state",
          [](PySession &s, const std::string &name, py::handle value) {
            const disc::Signature &sig = s.session->executable().signature();
            int64_t i = sig.findInput(name);
            const disc::TensorSpec *spec = i >= 0 ? &sig.inputs[i] : nullptr;
            py::array a = asInputArray(value, spec);
            disc::Tensor t = toTensor(name, a, spec);
            std::lock_guard<std::mutex> lock(s.mutex);
            check(s.session->setState(name, t));
          },
          py::arg("name"), py::arg("value"))
      .def(
          "save_state",
          [](PySession &s, const std::string &dir) {
            std::lock_guard<std::mutex> lock(s.mutex);
            check(s.session->saveState(dir));
          },
          py::arg("dir"))
      .def(
          "load_state",
          [](PySession &s, const std::string &dir) {
            std::lock_guard<std::mutex> lock(s.mutex);
            check(s.session->loadState(dir));
          },
          py::arg("dir"));
}
