/*===- c_api.h - DISC runtime C API: opaque handles and status codes -----===*
 *
 * A thin C layer over the C++ runtime (Runtime.h) for other languages.
 * Every fallible function returns a disc_status_code; on failure the message
 * is available from disc_last_error_message() on the same thread.
 *
 * Thread-safety: a disc_executable_t is immutable and may be shared between
 * threads and sessions. A disc_session_t must be used by one thread at a
 * time; distinct sessions may run concurrently. disc_tensor_t handles are
 * plain values owned by the caller.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DISC_RUNTIME_C_API_H
#define DISC_RUNTIME_C_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same values as disc::StatusCode and docs/runtime-abi.md. */
typedef enum disc_status_code {
  DISC_STATUS_OK = 0,
  DISC_STATUS_INVALID_ARGUMENT = 1,
  DISC_STATUS_RESOURCE_EXHAUSTED = 2,
  DISC_STATUS_LOAD_FAILED = 3,
  DISC_STATUS_INTERNAL = 4,
} disc_status_code;

/* Same values as disc::DType. */
typedef enum disc_dtype {
  DISC_DTYPE_FLOAT16 = 0,
  DISC_DTYPE_FLOAT32 = 1,
  DISC_DTYPE_FLOAT64 = 2,
  DISC_DTYPE_INT8 = 3,
  DISC_DTYPE_INT16 = 4,
  DISC_DTYPE_INT32 = 5,
  DISC_DTYPE_INT64 = 6,
  DISC_DTYPE_UINT8 = 7,
  DISC_DTYPE_UINT16 = 8,
  DISC_DTYPE_UINT32 = 9,
  DISC_DTYPE_UINT64 = 10,
  DISC_DTYPE_BOOL = 11,
  DISC_DTYPE_BFLOAT16 = 12,
} disc_dtype;

typedef struct disc_executable disc_executable_t;
typedef struct disc_session disc_session_t;
typedef struct disc_tensor disc_tensor_t;

/* Which rematerialization candidates go first under a memory limit
 * (docs/memory.md, "Rematerialization"). */
typedef enum disc_remat_policy {
  DISC_REMAT_POLICY_LARGEST_FIRST = 0, /* the most bytes freed first */
  DISC_REMAT_POLICY_DTR_SCORE = 1,     /* bytes * gap length / FLOPs */
} disc_remat_policy;

/* Zero-initialize, then set fields: {0} is no limit, largest-first. */
typedef struct disc_session_options {
  /* 0 = no limit. A limit below the lowest peak reachable with every
   * rematerialization candidate evicted fails the run with
   * RESOURCE_EXHAUSTED before anything runs. */
  int64_t memory_limit_bytes;
  int32_t remat_policy; /* disc_remat_policy */
  /* Threads of the library calls (oneDNN); 0 = the OpenMP default
   * (OMP_NUM_THREADS, else one per core). Must be >= 0. */
  int32_t num_threads;
  /* CUDA sessions: how an evicted candidate's device buffer is given up:
   * 0 the cheaper of the two (default), 1 recompute, 2 offload to host
   * memory (disc::DeviceEviction). */
  int32_t device_eviction;
  /* CUDA sessions: the most CUDA graphs kept, one per distinct input
   * shapes (disc::SessionOptions::cuda_graph_cache_size): 0 the default
   * (8), a negative value no graphs. */
  int32_t cuda_graph_cache_size;
  /* CPU sessions: 0 (default) flushes subnormal floats to zero during a
   * run (disc::SessionOptions::flush_subnormals), 1 keeps IEEE gradual
   * underflow. */
  int32_t keep_subnormals;
} disc_session_options_t;

typedef struct disc_session_stats {
  double last_latency_ms;      /* wall time of the last run, milliseconds */
  int64_t peak_bytes;          /* peak live bytes during the last run */
  int64_t current_bytes;       /* live bytes now (0 between runs) */
  int64_t num_allocs;          /* alloc calls during the last run */
  int64_t leaked_allocs;       /* allocations the model leaked (freed by us) */
  int64_t remat_evictions;     /* candidates evicted in the last run */
  int64_t remat_regenerations; /* candidates recomputed */
  int64_t remat_bytes_recomputed;   /* bytes of the recomputed buffers */
  double remat_recompute_ms;        /* milliseconds spent recomputing */
  int64_t remat_minimum_peak_bytes; /* lowest reachable peak, -1 unknown */
  /* peak bytes held from the OS during the last run: live blocks plus the
   * freed blocks the session keeps for reuse (>= peak_bytes) */
  int64_t reserved_peak_bytes;
  int64_t remat_offloads;        /* evicted candidates offloaded (CUDA) */
  int64_t remat_bytes_offloaded; /* their bytes */
  double remat_offload_ms;       /* milliseconds copying them out and back */
  int64_t cuda_graph_captures;   /* 1: the last run captured a CUDA graph */
  int64_t cuda_graph_replays;    /* 1: the last run replayed a CUDA graph */
} disc_session_stats_t;

/* Message of the last failing call on this thread ("" if none). Valid until
 * the next failing call on this thread. */
const char *disc_last_error_message(void);
/* "ok", "invalid argument", "resource exhausted", "load failed", "internal". */
const char *disc_status_code_name(disc_status_code code);
/* "float32", ...; NULL for an invalid value. */
const char *disc_dtype_name(disc_dtype dtype);

/* --- Executables ------------------------------------------------------- */

/* Loads model.so. Errors: LOAD_FAILED, INVALID_ARGUMENT (null pointers). */
disc_status_code disc_executable_load(const char *path,
                                      disc_executable_t **out);
/* Releases the caller's reference (NULL is ignored). Sessions created from
 * it keep the library loaded until they are destroyed. */
void disc_executable_release(disc_executable_t *exe);
/* Raw signature JSON, owned by the executable. */
const char *disc_executable_signature(const disc_executable_t *exe);
int64_t disc_executable_num_inputs(const disc_executable_t *exe);
int64_t disc_executable_num_outputs(const disc_executable_t *exe);
/* Name of input/output `index`; NULL when out of range. */
const char *disc_executable_input_name(const disc_executable_t *exe,
                                       int64_t index);
const char *disc_executable_output_name(const disc_executable_t *exe,
                                        int64_t index);
/* The inputs disc_session_run takes and the outputs it returns, in
 * signature order: for a model with training state (docs/runtime-api.md,
 * "Training state") every input but the state inputs, which the session
 * holds, and every output but those that update a state; for any other
 * model every input and output (num_inputs, num_outputs). */
int64_t disc_executable_num_run_inputs(const disc_executable_t *exe);
int64_t disc_executable_num_run_outputs(const disc_executable_t *exe);
/* Name of run input/output `index`; NULL when out of range. */
const char *disc_executable_run_input_name(const disc_executable_t *exe,
                                           int64_t index);
const char *disc_executable_run_output_name(const disc_executable_t *exe,
                                            int64_t index);
/* Name of the output holding the training loss; NULL when the model names
 * none. Owned by the executable. */
const char *disc_executable_loss_name(const disc_executable_t *exe);
/* Predicts, without running, the peak bytes live through the allocator when
 * the model runs on inputs of these shapes: `num_inputs` inputs in signature
 * order, input i of rank `ranks[i]` with dims `shapes[i][0..ranks[i])` (for
 * a model with training state, the run inputs alone are enough).
 * `*out_bytes` is the predicted peak, or -1 when the model's peak cannot be
 * predicted before running (a data-dependent size: see
 * disc_executable_peak_unpredictable_reason). Errors: INVALID_ARGUMENT for
 * null pointers or shapes the model rejects (same message as a run). */
disc_status_code disc_executable_predict_peak_bytes(
    const disc_executable_t *exe, int64_t num_inputs, const int64_t *ranks,
    const int64_t *const *shapes, int64_t *out_bytes);
/* Why the peak cannot be predicted before running; "" when it can. Owned by
 * the executable. */
const char *
disc_executable_peak_unpredictable_reason(const disc_executable_t *exe);

/* --- Sessions ---------------------------------------------------------- */

/* `options` may be NULL (no memory limit). */
disc_status_code disc_session_create(const disc_executable_t *exe,
                                     const disc_session_options_t *options,
                                     disc_session_t **out);
void disc_session_destroy(disc_session_t *session);
/* Runs the model. `inputs` holds `num_inputs` tensors, the run inputs in
 * signature order (disc_executable_num_run_inputs: every input for a model
 * without training state). `outputs` must have room for `num_outputs` ==
 * disc_executable_num_run_outputs handles; on success each receives a new
 * tensor the caller destroys, and the outputs that update a state replace
 * it in the session. Errors: INVALID_ARGUMENT (bad inputs),
 * RESOURCE_EXHAUSTED (memory limit), INTERNAL (model failure); on error no
 * state changes. */
disc_status_code disc_session_run(disc_session_t *session,
                                  disc_tensor_t *const *inputs,
                                  int64_t num_inputs, disc_tensor_t **outputs,
                                  int64_t num_outputs);
disc_status_code disc_session_get_stats(const disc_session_t *session,
                                        disc_session_stats_t *out);

/* --- Training state ---------------------------------------------------- */
/* The tensors a session holds for the state inputs of its model
 * (docs/runtime-api.md, "Training state"): created with the session from
 * their initial values, replaced by the outputs that update them after each
 * successful run. A state is named by its input name. */

/* Number of state inputs (0 for a model without state, or a NULL session). */
int64_t disc_session_num_states(const disc_session_t *session);
/* Name of state `index` (signature order), owned by the session; NULL when
 * out of range. */
const char *disc_session_state_name(const disc_session_t *session,
                                    int64_t index);
/* The dtype, rank and dims of state `name` (states have static shapes);
 * `*shape` points to `*rank` dims owned by the session. Errors:
 * INVALID_ARGUMENT (null pointers, a name that is not a state). */
disc_status_code disc_session_state_shape(const disc_session_t *session,
                                          const char *name, disc_dtype *dtype,
                                          int64_t *rank, const int64_t **shape);
/* Copies state `name` into `data` (row-major), which has room for
 * `byte_size` bytes: exactly the state's numElements * element size.
 * Errors: INVALID_ARGUMENT (null pointers, a name that is not a state,
 * another byte size; the message gives both sizes), RESOURCE_EXHAUSTED. */
disc_status_code disc_session_get_state(const disc_session_t *session,
                                        const char *name, void *data,
                                        int64_t byte_size);
/* Replaces state `name` by a copy of the `byte_size` bytes at `data`
 * (row-major, the state's dtype and shape). Errors: as get_state; on error
 * the state is unchanged. */
disc_status_code disc_session_set_state(disc_session_t *session,
                                        const char *name, const void *data,
                                        int64_t byte_size);
/* Writes every state to `dir`/NAME.npy (NumPy; characters of the name
 * outside [A-Za-z0-9_.-] become '_'), creating `dir` when missing. Errors:
 * INVALID_ARGUMENT (null pointers, a folder or file that cannot be
 * written, two states with one file name). */
disc_status_code disc_session_save_state(const disc_session_t *session,
                                         const char *dir);
/* Reads every state from `dir`/NAME.npy as save_state writes them, checks
 * all, then replaces all. Errors: INVALID_ARGUMENT naming the state and the
 * file (missing folder or file, malformed file, another dtype or shape);
 * on error no state changes. */
disc_status_code disc_session_load_state(disc_session_t *session,
                                         const char *dir);

/* --- Tensors ----------------------------------------------------------- */

/* Creates a contiguous row-major tensor of `rank` dims `shape`; copies
 * `data` (numElements * element size bytes) or zero-fills when NULL. */
disc_status_code disc_tensor_create(disc_dtype dtype, const int64_t *shape,
                                    int64_t rank, const void *data,
                                    disc_tensor_t **out);
void disc_tensor_destroy(disc_tensor_t *tensor);
disc_dtype disc_tensor_dtype(const disc_tensor_t *tensor);
int64_t disc_tensor_rank(const disc_tensor_t *tensor);
/* Pointer to `rank` dims, owned by the tensor. */
const int64_t *disc_tensor_shape(const disc_tensor_t *tensor);
int64_t disc_tensor_num_elements(const disc_tensor_t *tensor);
/* Size of the data in bytes. */
int64_t disc_tensor_byte_size(const disc_tensor_t *tensor);
void *disc_tensor_data(disc_tensor_t *tensor);

#ifdef __cplusplus
}
#endif

#endif /* DISC_RUNTIME_C_API_H */
