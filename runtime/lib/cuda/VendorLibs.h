//===- VendorLibs.h - cuBLAS and cuDNN loaded at run time (dlopen) --------===//
//
// The cuBLAS (v2 API) and cuDNN (v9 legacy API) functions the CUDA library
// calls use, as tables of function pointers filled with dlopen/dlsym, like
// the driver (Driver.h): libdisc_runtime has no link-time dependency on
// either library, and the types mirror cublas_api.h / cudnn_*_v9.h (CUDA 13,
// cuDNN 9) without including them. A library is loaded on the first call
// that needs it; a machine without it runs every other model.
//
// Library names: $DISC_CUBLAS_LIBRARY / $DISC_CUDNN_LIBRARY when set (a
// substitute for tests, or a library outside the loader path), else
// libcublas.so.13, libcublas.so.12 / libcudnn.so.9, each also tried under
// $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CUDA_VENDORLIBS_H
#define DISC_RUNTIME_LIB_CUDA_VENDORLIBS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

using cublasStatus_t = int; // CUBLAS_STATUS_SUCCESS = 0
using cublasHandle_t = void *;
constexpr int kCublasOpN = 0;         // CUBLAS_OP_N
constexpr int kCublasOpT = 1;         // CUBLAS_OP_T
constexpr int kCublasDefaultMath = 0; // CUBLAS_DEFAULT_MATH: no TF32

/// cuBLAS entry points (libcublas.so), by their exported names.
struct BlasApi {
  cublasStatus_t (*create)(cublasHandle_t *handle); // cublasCreate_v2
  cublasStatus_t (*destroy)(cublasHandle_t handle); // cublasDestroy_v2
  cublasStatus_t (*setStream)(cublasHandle_t,
                              void *stream); // cublasSetStream_v2
  cublasStatus_t (*setWorkspace)(cublasHandle_t, void *ptr,
                                 size_t bytes); // cublasSetWorkspace_v2
  cublasStatus_t (*setMathMode)(cublasHandle_t, int mode); // cublasSetMathMode
  /// cublasSgemmStridedBatched: column-major C[b] = alpha op(A[b]) op(B[b])
  /// + beta C[b], for b < batch.
  cublasStatus_t (*sgemmStridedBatched)(cublasHandle_t, int transa, int transb,
                                        int m, int n, int k, const float *alpha,
                                        const float *a, int lda,
                                        long long strideA, const float *b,
                                        int ldb, long long strideB,
                                        const float *beta, float *c, int ldc,
                                        long long strideC, int batch);
  const char *(*getStatusString)(cublasStatus_t); // cublasGetStatusString
};

//===----------------------------------------------------------------------===//
// cuDNN
//===----------------------------------------------------------------------===//

using cudnnStatus_t = int; // CUDNN_STATUS_SUCCESS = 0
using cudnnHandle_t = void *;
using cudnnTensorDescriptor_t = void *;
using cudnnFilterDescriptor_t = void *;
using cudnnConvolutionDescriptor_t = void *;
using cudnnActivationDescriptor_t = void *;
constexpr int kCudnnDataFloat = 0;        // CUDNN_DATA_FLOAT
constexpr int kCudnnTensorNchw = 0;       // CUDNN_TENSOR_NCHW
constexpr int kCudnnCrossCorrelation = 1; // CUDNN_CROSS_CORRELATION
constexpr int kCudnnDefaultMath = 0;      // CUDNN_DEFAULT_MATH
constexpr int kCudnnFmaMath = 3;          // CUDNN_FMA_MATH: no TF32
constexpr int kCudnnActivationRelu = 1;   // CUDNN_ACTIVATION_RELU
constexpr int kCudnnPropagateNan = 1;     // CUDNN_PROPAGATE_NAN

/// cudnnConvolutionFwdAlgoPerf_t (cudnnConvolutionBwdDataAlgoPerf_t has the
/// same layout).
struct CudnnConvFwdAlgoPerf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

/// cuDNN entry points (libcudnn.so.9, which forwards to its sub-libraries).
struct DnnApi {
  cudnnStatus_t (*create)(cudnnHandle_t *handle); // cudnnCreate
  cudnnStatus_t (*destroy)(cudnnHandle_t handle); // cudnnDestroy
  cudnnStatus_t (*setStream)(cudnnHandle_t handle,
                             void *stream); // cudnnSetStream
  const char *(*getErrorString)(cudnnStatus_t status);
  cudnnStatus_t (*createTensorDescriptor)(cudnnTensorDescriptor_t *);
  cudnnStatus_t (*destroyTensorDescriptor)(cudnnTensorDescriptor_t);
  cudnnStatus_t (*setTensorNdDescriptor)(cudnnTensorDescriptor_t, int dataType,
                                         int nbDims, const int dims[],
                                         const int strides[]);
  cudnnStatus_t (*createFilterDescriptor)(cudnnFilterDescriptor_t *);
  cudnnStatus_t (*destroyFilterDescriptor)(cudnnFilterDescriptor_t);
  cudnnStatus_t (*setFilterNdDescriptor)(cudnnFilterDescriptor_t, int dataType,
                                         int format, int nbDims,
                                         const int dims[]);
  cudnnStatus_t (*createConvolutionDescriptor)(cudnnConvolutionDescriptor_t *);
  cudnnStatus_t (*destroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t);
  cudnnStatus_t (*setConvolutionNdDescriptor)(cudnnConvolutionDescriptor_t,
                                              int arrayLength, const int pads[],
                                              const int strides[],
                                              const int dilations[], int mode,
                                              int computeType);
  cudnnStatus_t (*setConvolutionGroupCount)(cudnnConvolutionDescriptor_t,
                                            int groups);
  cudnnStatus_t (*setConvolutionMathType)(cudnnConvolutionDescriptor_t,
                                          int mathType);
  /// cudnnGetConvolutionForwardAlgorithm_v7: heuristics, best first.
  cudnnStatus_t (*getConvolutionForwardAlgorithm)(
      cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
      cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
      int requested, int *returned, CudnnConvFwdAlgoPerf *results);
  cudnnStatus_t (*getConvolutionForwardWorkspaceSize)(
      cudnnHandle_t, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
      cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo,
      size_t *bytes);
  cudnnStatus_t (*convolutionForward)(
      cudnnHandle_t, const void *alpha, cudnnTensorDescriptor_t xDesc,
      const void *x, cudnnFilterDescriptor_t wDesc, const void *w,
      cudnnConvolutionDescriptor_t conv, int algo, void *workspace,
      size_t workspaceBytes, const void *beta, cudnnTensorDescriptor_t yDesc,
      void *y);
  /// cudnnGetConvolutionBackwardDataAlgorithm_v7 (ConvTranspose is the
  /// backward data pass of the convolution from its output to its input).
  cudnnStatus_t (*getConvolutionBackwardDataAlgorithm)(
      cudnnHandle_t, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy,
      cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx,
      int requested, int *returned, CudnnConvFwdAlgoPerf *results);
  cudnnStatus_t (*convolutionBackwardData)(
      cudnnHandle_t, const void *alpha, cudnnFilterDescriptor_t wDesc,
      const void *w, cudnnTensorDescriptor_t dyDesc, const void *dy,
      cudnnConvolutionDescriptor_t conv, int algo, void *workspace,
      size_t workspaceBytes, const void *beta, cudnnTensorDescriptor_t dxDesc,
      void *dx);
  /// cudnnAddTensor: C = alpha A + beta C, A's dims equal to C's or 1.
  cudnnStatus_t (*addTensor)(cudnnHandle_t, const void *alpha,
                             cudnnTensorDescriptor_t aDesc, const void *a,
                             const void *beta, cudnnTensorDescriptor_t cDesc,
                             void *c);
  cudnnStatus_t (*createActivationDescriptor)(cudnnActivationDescriptor_t *);
  cudnnStatus_t (*destroyActivationDescriptor)(cudnnActivationDescriptor_t);
  cudnnStatus_t (*setActivationDescriptor)(cudnnActivationDescriptor_t,
                                           int mode, int nanOpt, double coef);
  cudnnStatus_t (*activationForward)(cudnnHandle_t, cudnnActivationDescriptor_t,
                                     const void *alpha,
                                     cudnnTensorDescriptor_t xDesc,
                                     const void *x, const void *beta,
                                     cudnnTensorDescriptor_t yDesc, void *y);
};

/// The file names `loadBlas` / `loadDnn` try, in order ($DISC_CUBLAS_LIBRARY
/// / $DISC_CUDNN_LIBRARY alone when set).
std::vector<std::string> blasLibraryNames();
std::vector<std::string> dnnLibraryNames();

/// Loads cuBLAS / cuDNN from the first of `names` that opens, once per
/// process and list of names (the table is kept until the process exits).
/// Returns the table, or null with `*error` naming the library and why,
/// e.g. "cuBLAS is not available: libcublas.so.13: cannot open shared
/// object file: No such file or directory (set $DISC_CUBLAS_LIBRARY to its
/// path)", or "... has no symbol 'cublasSgemmStridedBatched'". Thread-safe.
const BlasApi *loadBlas(const std::vector<std::string> &names,
                        std::string *error);
const DnnApi *loadDnn(const std::vector<std::string> &names,
                      std::string *error);

} // namespace disc::runtime::cuda
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CUDA_VENDORLIBS_H
