/*===- ModelWrapperCuda.c - the CUDA part of model.so's C wrapper ---------===*
 *
 * Included at the end of ModelWrapper.c for the CUDA target (docs/cuda.md):
 * the functions that MLIR's gpu-to-llvm lowering calls (the `mgpu*` API of
 * MLIR's CUDA runtime wrappers) and the device buffers of the
 * disc-gpu-* passes, over the device entries of the runtime context of the
 * current run. Modules are only recorded when model.so is loaded (its
 * constructors run before any context exists); the runtime loads each
 * cubin on its first launch, on the session's device and stream. Streams
 * are the session's one stream.
 *
 *===----------------------------------------------------------------------===*/

static const char disc_no_device[] =
    "this CUDA model runs only in a session with a CUDA device";

typedef struct disc_gpu_module {
  const void *image;
  const char *kernel;
} disc_gpu_module;

DISC_HIDDEN void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  disc_gpu_module *m = (disc_gpu_module *)calloc(1, sizeof *m);
  if (m)
    m->image = data;
  return m;
}
DISC_HIDDEN void mgpuModuleUnload(void *module) { free(module); }
/* One kernel per module (gpu-kernel-outlining). */
DISC_HIDDEN void *mgpuModuleGetFunction(void *module, const char *name) {
  disc_gpu_module *m = (disc_gpu_module *)module;
  if (m && !m->kernel)
    m->kernel = name;
  return m;
}
DISC_HIDDEN void *mgpuStreamCreate(void) { return disc_ctx; }
DISC_HIDDEN void mgpuStreamDestroy(void *stream) { (void)stream; }
/* Synchronization (docs/cuda.md, "Synchronization"). Kernels, copies and
   frees are ordered on the session's one stream, so the host waits only
   where it reads device data: the lowered host code waits on the stream
   after every launch (gpu.launch_func without a token) and after each
   device-to-host copy of a mirrored buffer (disc-gpu-mirror-host-buffers;
   host-to-device copies are not waited for). A wait that follows only
   launches is skipped; a wait that follows a copy waits and reads the
   device error words of the run-time checks inside kernels
   (disc-gpu-device-checks) in the same synchronization, and so does the
   end of the run when some kernel has a check: the run then fails with
   the first failed check's message, naming the ONNX node. */
static __thread int disc_copy_pending;
static __thread int disc_launched;
static void disc_read_check_words(const void *which) {
  if (!disc_ctx->device_check)
    return;
  int64_t w[5] = {0, 0, 0, 0, 0};
  int32_t st = disc_ctx->device_check(disc_ctx->self, which, w);
  if (st < 0)
    disc_unwind(-st);
  if (st == 1)
    disc_check_failed(w[0] - 1, w[1], w[2], w[3], w[4]);
}
DISC_HIDDEN void mgpuStreamSynchronize(void *stream) {
  (void)stream;
  if (!disc_copy_pending)
    return; /* after launches only: stream-ordered, nothing to read */
  disc_copy_pending = 0;
  disc_launched = 0;
  if (!disc_ctx->device_check) {
    disc_check_status(
        disc_ctx->device_sync ? disc_ctx->device_sync(disc_ctx->self) : 4);
    return;
  }
  disc_read_check_words(DISC_CHECK_ALL_MODULES);
}
/* The end of a run (disc_model_run): the error words once, if any. */
static void disc_cuda_end_of_run(void) {
  int launched = disc_launched;
  disc_copy_pending = 0;
  disc_launched = 0;
  if (launched)
    disc_read_check_words(DISC_CHECK_END_OF_RUN);
}
DISC_HIDDEN void mgpuLaunchKernel(void *function, int64_t gx, int64_t gy,
                                  int64_t gz, int64_t bx, int64_t by,
                                  int64_t bz, int32_t shared, void *stream,
                                  void **params, void **extra,
                                  size_t num_params) {
  (void)stream;
  (void)extra;
  (void)num_params;
  disc_gpu_module *m = (disc_gpu_module *)function;
  if (!disc_ctx->device_launch)
    disc_fail(4, disc_no_device);
  if (!m || !m->image)
    disc_fail(4, "CUDA kernel image missing (out of memory at load time)");
  int64_t grid[3] = {gx, gy, gz};
  int64_t block[3] = {bx, by, bz};
  disc_check_status(disc_ctx->device_launch(disc_ctx->self, m->image, m->kernel,
                                            grid, block, shared, params));
  disc_launched = 1;
  /* A copy before the launch was host-to-device (the lowered code waits
     right after each device-to-host copy): nothing to wait for. */
  disc_copy_pending = 0;
}
DISC_HIDDEN void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  (void)stream;
  if (!disc_ctx->device_copy)
    disc_fail(4, disc_no_device);
  disc_check_status(
      disc_ctx->device_copy(disc_ctx->self, dst, src, (int64_t)bytes));
  disc_copy_pending = 1;
}

/* Small device buffers (disc-gpu-small-device-buffers): memref<?xi8>. */
DISC_HIDDEN void _mlir_ciface_disc_device_scratch(int64_t *result, int64_t site,
                                                  int64_t bytes) {
  if (!disc_ctx->device_scratch)
    disc_fail(4, disc_no_device);
  void *device = 0;
  disc_check_status(
      disc_ctx->device_scratch(disc_ctx->self, site, bytes, &device));
  result[0] = result[1] = (int64_t)(intptr_t)device;
  result[2] = 0;
  result[3] = bytes;
  result[4] = 1;
}

/* Device copies of the constants that kernels read
   (disc-gpu-upload-constants): the runtime's copy of the `bytes` bytes at
   `host` (disc_ral_context.device_constant). */
static void *disc_device_constant(const void *host, int64_t bytes) {
  if (!disc_ctx->device_constant)
    disc_fail(4, disc_no_device);
  void *device = 0;
  disc_check_status(
      disc_ctx->device_constant(disc_ctx->self, host, bytes, &device));
  return device;
}

/* The generated C-interface functions
   `disc_device_constant_<rank>_<k>(memref<T>, i64 bytes) -> memref<T>`
   return the descriptor `host` of rank `rank` with the device copy of its
   data as its pointers. */
static void disc_device_constant_memref(int64_t *result, const int64_t *host,
                                        int64_t bytes, int64_t rank) {
  memcpy(result, host, (size_t)(8 * (3 + 2 * rank)));
  void *d = disc_device_constant((const void *)(intptr_t)host[1], bytes);
  result[0] = result[1] = (int64_t)(intptr_t)d;
  result[2] = 0;
}
