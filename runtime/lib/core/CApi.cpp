//===- CApi.cpp - C API over the C++ runtime ------------------------------===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/c_api.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct disc_executable {
  std::shared_ptr<const disc::Executable> exe;
  /// Signature::runInputs / runOutputs.
  std::vector<int64_t> runInputs, runOutputs;
};
struct disc_session {
  std::shared_ptr<const disc::Executable> exe;
  disc::Session session;
  /// The state inputs' indices, in signature order, and their static
  /// shapes (disc_session_state_shape).
  std::vector<int64_t> stateInputs;
  std::vector<std::vector<int64_t>> stateShapes;
};
struct disc_tensor {
  disc::Tensor tensor;
};

namespace {

thread_local std::string lastError;

disc_status_code fail(disc_status_code code, std::string message) {
  lastError = std::move(message);
  return code;
}

disc_status_code report(const disc::Status &status) {
  if (status.isOk())
    return DISC_STATUS_OK;
  return fail(static_cast<disc_status_code>(status.code()), status.message());
}

/// The integer a C caller passed as a disc_dtype. A C enum may hold any int,
/// but loading a value outside the enumerators through the C++ enum type is
/// undefined behavior, so the parameter's bits are read as an integer.
int32_t rawDType(const disc_dtype *dtype) {
  static_assert(sizeof(disc_dtype) == sizeof(int32_t), "disc_dtype is 32-bit");
  int32_t raw;
  std::memcpy(&raw, dtype, sizeof(raw));
  return raw;
}

const char *dtypeNameOf(int32_t raw) {
  if (raw < DISC_DTYPE_FLOAT16 || raw > DISC_DTYPE_BOOL)
    return nullptr;
  return disc::dtypeName(static_cast<disc::DType>(raw));
}

/// The position of state `name` among the session's states; fails with
/// INVALID_ARGUMENT, the message of Session::getState, when it is none.
disc_status_code findState(const disc_session_t *session, const char *name,
                           size_t *index) {
  const disc::Signature &sig = session->exe->signature();
  for (size_t k = 0; k < session->stateInputs.size(); ++k)
    if (sig.inputs[session->stateInputs[k]].name == name) {
      *index = k;
      return DISC_STATUS_OK;
    }
  disc::Tensor ignored;
  return report(session->session.getState(name, &ignored));
}

/// Checks that `byte_size` is the byte size of state `k`.
disc_status_code checkStateBytes(const disc_session_t *session, size_t k,
                                 int64_t byteSize) {
  const disc::TensorSpec &spec =
      session->exe->signature().inputs[session->stateInputs[k]];
  int64_t bytes = disc::numElementsOf(session->stateShapes[k]) *
                  disc::dtypeSize(spec.dtype);
  if (byteSize != bytes)
    return fail(DISC_STATUS_INVALID_ARGUMENT,
                "state '" + spec.name + "' has " + std::to_string(bytes) +
                    " bytes (" + disc::dtypeName(spec.dtype) + " " +
                    disc::shapeToString(session->stateShapes[k]) +
                    ") but the buffer has " + std::to_string(byteSize));
  return DISC_STATUS_OK;
}

} // namespace

extern "C" {

const char *disc_last_error_message(void) { return lastError.c_str(); }

const char *disc_status_code_name(disc_status_code code) {
  return disc::statusCodeName(static_cast<disc::StatusCode>(code));
}

const char *disc_dtype_name(disc_dtype dtype) {
  return dtypeNameOf(rawDType(&dtype));
}

disc_status_code disc_executable_load(const char *path,
                                      disc_executable_t **out) {
  if (!path || !out)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  *out = nullptr;
  try {
    std::shared_ptr<const disc::Executable> exe;
    if (disc::Status s = disc::Executable::load(path, &exe); !s)
      return report(s);
    std::vector<int64_t> runInputs = exe->signature().runInputs();
    std::vector<int64_t> runOutputs = exe->signature().runOutputs();
    *out = new disc_executable{std::move(exe), std::move(runInputs),
                               std::move(runOutputs)};
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

void disc_executable_release(disc_executable_t *exe) { delete exe; }

const char *disc_executable_signature(const disc_executable_t *exe) {
  return exe ? exe->exe->signatureJson().c_str() : nullptr;
}

int64_t disc_executable_num_inputs(const disc_executable_t *exe) {
  return exe ? static_cast<int64_t>(exe->exe->signature().inputs.size()) : 0;
}

int64_t disc_executable_num_outputs(const disc_executable_t *exe) {
  return exe ? static_cast<int64_t>(exe->exe->signature().outputs.size()) : 0;
}

const char *disc_executable_input_name(const disc_executable_t *exe,
                                       int64_t index) {
  if (!exe || index < 0 || index >= disc_executable_num_inputs(exe))
    return nullptr;
  return exe->exe->signature().inputs[index].name.c_str();
}

const char *disc_executable_output_name(const disc_executable_t *exe,
                                        int64_t index) {
  if (!exe || index < 0 || index >= disc_executable_num_outputs(exe))
    return nullptr;
  return exe->exe->signature().outputs[index].name.c_str();
}

int64_t disc_executable_num_run_inputs(const disc_executable_t *exe) {
  return exe ? static_cast<int64_t>(exe->runInputs.size()) : 0;
}

int64_t disc_executable_num_run_outputs(const disc_executable_t *exe) {
  return exe ? static_cast<int64_t>(exe->runOutputs.size()) : 0;
}

const char *disc_executable_run_input_name(const disc_executable_t *exe,
                                           int64_t index) {
  if (!exe || index < 0 || index >= disc_executable_num_run_inputs(exe))
    return nullptr;
  return exe->exe->signature().inputs[exe->runInputs[index]].name.c_str();
}

const char *disc_executable_run_output_name(const disc_executable_t *exe,
                                            int64_t index) {
  if (!exe || index < 0 || index >= disc_executable_num_run_outputs(exe))
    return nullptr;
  return exe->exe->signature().outputs[exe->runOutputs[index]].name.c_str();
}

const char *disc_executable_loss_name(const disc_executable_t *exe) {
  if (!exe || exe->exe->signature().loss.empty())
    return nullptr;
  return exe->exe->signature().loss.c_str();
}

disc_status_code disc_executable_predict_peak_bytes(
    const disc_executable_t *exe, int64_t num_inputs, const int64_t *ranks,
    const int64_t *const *shapes, int64_t *out_bytes) {
  if (!exe || !out_bytes || num_inputs < 0 ||
      (num_inputs > 0 && (!ranks || !shapes)))
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    std::vector<std::vector<int64_t>> dims(num_inputs);
    for (int64_t i = 0; i < num_inputs; ++i) {
      if (ranks[i] < 0 || (ranks[i] > 0 && !shapes[i]))
        return fail(DISC_STATUS_INVALID_ARGUMENT,
                    "input " + std::to_string(i) + ": bad rank or null dims");
      dims[i].assign(shapes[i], shapes[i] + ranks[i]);
    }
    return report(exe->exe->predictPeakBytes(dims, out_bytes));
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

const char *
disc_executable_peak_unpredictable_reason(const disc_executable_t *exe) {
  if (!exe)
    return "";
  const disc::MemorySpec &mem = exe->exe->signature().memory;
  if (!mem.present)
    return "the model carries no memory model";
  return mem.predictable ? "" : mem.reason.c_str();
}

disc_status_code disc_session_create(const disc_executable_t *exe,
                                     const disc_session_options_t *options,
                                     disc_session_t **out) {
  if (!exe || !out)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  *out = nullptr;
  disc::SessionOptions opts;
  if (options) {
    if (options->memory_limit_bytes < 0)
      return fail(DISC_STATUS_INVALID_ARGUMENT,
                  "memory_limit_bytes must be >= 0");
    opts.memory_limit_bytes = options->memory_limit_bytes;
    if (options->remat_policy != DISC_REMAT_POLICY_LARGEST_FIRST &&
        options->remat_policy != DISC_REMAT_POLICY_DTR_SCORE)
      return fail(DISC_STATUS_INVALID_ARGUMENT,
                  "remat_policy must be DISC_REMAT_POLICY_LARGEST_FIRST (0) "
                  "or DISC_REMAT_POLICY_DTR_SCORE (1)");
    opts.remat_policy = static_cast<disc::RematPolicy>(options->remat_policy);
    if (options->num_threads < 0)
      return fail(DISC_STATUS_INVALID_ARGUMENT, "num_threads must be >= 0");
    opts.num_threads = options->num_threads;
    if (options->device_eviction < 0 || options->device_eviction > 2)
      return fail(DISC_STATUS_INVALID_ARGUMENT,
                  "device_eviction must be 0 (auto), 1 (recompute) or 2 "
                  "(offload)");
    opts.device_eviction =
        static_cast<disc::DeviceEviction>(options->device_eviction);
    if (options->cuda_graph_cache_size != 0)
      opts.cuda_graph_cache_size = options->cuda_graph_cache_size < 0
                                       ? 0
                                       : options->cuda_graph_cache_size;
    if (options->keep_subnormals != 0 && options->keep_subnormals != 1)
      return fail(DISC_STATUS_INVALID_ARGUMENT,
                  "keep_subnormals must be 0 or 1");
    opts.flush_subnormals = options->keep_subnormals == 0;
  }
  try {
    auto *session =
        new disc_session{exe->exe, disc::Session(exe->exe, opts), {}, {}};
    const disc::Signature &sig = exe->exe->signature();
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      if (sig.inputs[i].isState) {
        session->stateInputs.push_back(static_cast<int64_t>(i));
        session->stateShapes.push_back(sig.inputs[i].staticShape());
      }
    *out = session;
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

void disc_session_destroy(disc_session_t *session) { delete session; }

disc_status_code disc_session_run(disc_session_t *session,
                                  disc_tensor_t *const *inputs,
                                  int64_t num_inputs, disc_tensor_t **outputs,
                                  int64_t num_outputs) {
  if (!session || (num_inputs > 0 && !inputs) ||
      (num_outputs > 0 && !outputs) || num_inputs < 0)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  int64_t expected =
      static_cast<int64_t>(session->exe->signature().outputs.size()) -
      static_cast<int64_t>(std::count_if(
          session->exe->signature().outputs.begin(),
          session->exe->signature().outputs.end(),
          [](const disc::TensorSpec &o) { return !o.updates.empty(); }));
  if (num_outputs != expected)
    return fail(DISC_STATUS_INVALID_ARGUMENT,
                "expected room for " + std::to_string(expected) +
                    " outputs but got " + std::to_string(num_outputs));
  try {
    std::vector<disc::Tensor> in;
    in.reserve(num_inputs);
    for (int64_t i = 0; i < num_inputs; ++i) {
      if (!inputs[i])
        return fail(DISC_STATUS_INVALID_ARGUMENT,
                    "input " + std::to_string(i) + " is null");
      in.push_back(inputs[i]->tensor);
    }
    std::vector<disc::Tensor> out;
    if (disc::Status s = session->session.run(in, &out); !s)
      return report(s);
    for (int64_t i = 0; i < num_outputs; ++i)
      outputs[i] = new disc_tensor{std::move(out[i])};
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_session_get_stats(const disc_session_t *session,
                                        disc_session_stats_t *out) {
  if (!session || !out)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  const disc::SessionStats &s = session->session.stats();
  out->last_latency_ms = s.last_latency_ms;
  out->peak_bytes = s.peak_bytes;
  out->current_bytes = s.current_bytes;
  out->num_allocs = s.num_allocs;
  out->leaked_allocs = s.leaked_allocs;
  out->remat_evictions = s.remat_evictions;
  out->remat_regenerations = s.remat_regenerations;
  out->remat_bytes_recomputed = s.remat_bytes_recomputed;
  out->remat_recompute_ms = s.remat_recompute_ms;
  out->remat_minimum_peak_bytes = s.remat_minimum_peak_bytes;
  out->reserved_peak_bytes = s.reserved_peak_bytes;
  out->remat_offloads = s.remat_offloads;
  out->remat_bytes_offloaded = s.remat_bytes_offloaded;
  out->remat_offload_ms = s.remat_offload_ms;
  out->cuda_graph_captures = s.cuda_graph_captures;
  out->cuda_graph_replays = s.cuda_graph_replays;
  return DISC_STATUS_OK;
}

int64_t disc_session_num_states(const disc_session_t *session) {
  return session ? static_cast<int64_t>(session->stateInputs.size()) : 0;
}

const char *disc_session_state_name(const disc_session_t *session,
                                    int64_t index) {
  if (!session || index < 0 || index >= disc_session_num_states(session))
    return nullptr;
  return session->exe->signature()
      .inputs[session->stateInputs[index]]
      .name.c_str();
}

disc_status_code disc_session_state_shape(const disc_session_t *session,
                                          const char *name, disc_dtype *dtype,
                                          int64_t *rank,
                                          const int64_t **shape) {
  if (!session || !name || !dtype || !rank || !shape)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    size_t k = 0;
    if (disc_status_code rc = findState(session, name, &k))
      return rc;
    const disc::TensorSpec &spec =
        session->exe->signature().inputs[session->stateInputs[k]];
    *dtype = static_cast<disc_dtype>(spec.dtype);
    *rank = static_cast<int64_t>(session->stateShapes[k].size());
    *shape = session->stateShapes[k].data();
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_session_get_state(const disc_session_t *session,
                                        const char *name, void *data,
                                        int64_t byte_size) {
  if (!session || !name || (!data && byte_size != 0))
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    size_t k = 0;
    if (disc_status_code rc = findState(session, name, &k))
      return rc;
    if (disc_status_code rc = checkStateBytes(session, k, byte_size))
      return rc;
    disc::Tensor value;
    if (disc::Status s = session->session.getState(name, &value); !s)
      return report(s);
    if (byte_size > 0)
      std::memcpy(data, value.data(), static_cast<size_t>(byte_size));
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_session_set_state(disc_session_t *session,
                                        const char *name, const void *data,
                                        int64_t byte_size) {
  if (!session || !name || (!data && byte_size != 0))
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    size_t k = 0;
    if (disc_status_code rc = findState(session, name, &k))
      return rc;
    if (disc_status_code rc = checkStateBytes(session, k, byte_size))
      return rc;
    const disc::TensorSpec &spec =
        session->exe->signature().inputs[session->stateInputs[k]];
    // setState copies the caller's bytes.
    disc::Tensor view = disc::Tensor::adopt(spec.dtype, session->stateShapes[k],
                                            const_cast<void *>(data), nullptr);
    return report(session->session.setState(name, view));
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_session_save_state(const disc_session_t *session,
                                         const char *dir) {
  if (!session || !dir)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    return report(session->session.saveState(dir));
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_session_load_state(disc_session_t *session,
                                         const char *dir) {
  if (!session || !dir)
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument");
  try {
    return report(session->session.loadState(dir));
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

disc_status_code disc_tensor_create(disc_dtype dtype, const int64_t *shape,
                                    int64_t rank, const void *data,
                                    disc_tensor_t **out) {
  if (!out || rank < 0 || (rank > 0 && !shape))
    return fail(DISC_STATUS_INVALID_ARGUMENT, "null argument or bad rank");
  *out = nullptr;
  int32_t raw = rawDType(&dtype);
  if (!dtypeNameOf(raw))
    return fail(DISC_STATUS_INVALID_ARGUMENT,
                "invalid dtype " + std::to_string(raw));
  std::vector<int64_t> dims(shape, shape + rank);
  if (disc::numElementsOf(dims) < 0)
    return fail(DISC_STATUS_INVALID_ARGUMENT,
                "invalid shape " + disc::shapeToString(dims));
  try {
    disc::Tensor t =
        disc::Tensor::fromData(static_cast<disc::DType>(raw), dims, data);
    if (!t.isValid())
      return fail(DISC_STATUS_RESOURCE_EXHAUSTED, "cannot allocate tensor");
    *out = new disc_tensor{std::move(t)};
    return DISC_STATUS_OK;
  } catch (const std::exception &e) {
    return fail(DISC_STATUS_INTERNAL, e.what());
  }
}

void disc_tensor_destroy(disc_tensor_t *tensor) { delete tensor; }

disc_dtype disc_tensor_dtype(const disc_tensor_t *tensor) {
  return tensor ? static_cast<disc_dtype>(tensor->tensor.dtype())
                : DISC_DTYPE_FLOAT32;
}

int64_t disc_tensor_rank(const disc_tensor_t *tensor) {
  return tensor ? tensor->tensor.rank() : 0;
}

const int64_t *disc_tensor_shape(const disc_tensor_t *tensor) {
  return tensor ? tensor->tensor.shape().data() : nullptr;
}

int64_t disc_tensor_num_elements(const disc_tensor_t *tensor) {
  return tensor ? tensor->tensor.numElements() : 0;
}

int64_t disc_tensor_byte_size(const disc_tensor_t *tensor) {
  return tensor ? tensor->tensor.byteSize() : 0;
}

void *disc_tensor_data(disc_tensor_t *tensor) {
  return tensor ? tensor->tensor.data() : nullptr;
}

} // extern "C"
