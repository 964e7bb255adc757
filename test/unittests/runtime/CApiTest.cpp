//===- CApiTest.cpp - C API round trip -----------------------------------===//

#include "disc/runtime/c_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

TEST(CApi, RoundTrip) {
  disc_executable_t *exe = nullptr;
  ASSERT_EQ(disc_executable_load(DISC_FIXTURE_ADD, &exe), DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_EQ(disc_executable_num_inputs(exe), 2);
  EXPECT_EQ(disc_executable_num_outputs(exe), 1);
  EXPECT_STREQ(disc_executable_input_name(exe, 1), "b");
  EXPECT_STREQ(disc_executable_output_name(exe, 0), "sum");
  EXPECT_EQ(disc_executable_input_name(exe, 2), nullptr);
  EXPECT_NE(std::string(disc_executable_signature(exe)).find("\"batch\""),
            std::string::npos);

  disc_session_options_t options = {0};
  disc_session_t *session = nullptr;
  ASSERT_EQ(disc_session_create(exe, &options, &session), DISC_STATUS_OK);
  disc_executable_release(exe); // The session keeps the model loaded.

  float a[8], b[8];
  for (int i = 0; i < 8; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 10.0f * i;
  }
  int64_t shape[2] = {2, 4};
  disc_tensor_t *inputs[2] = {nullptr, nullptr};
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_FLOAT32, shape, 2, a, &inputs[0]),
            DISC_STATUS_OK);
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_FLOAT32, shape, 2, b, &inputs[1]),
            DISC_STATUS_OK);
  disc_tensor_t *output = nullptr;
  ASSERT_EQ(disc_session_run(session, inputs, 2, &output, 1), DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_EQ(disc_tensor_dtype(output), DISC_DTYPE_FLOAT32);
  ASSERT_EQ(disc_tensor_rank(output), 2);
  EXPECT_EQ(disc_tensor_shape(output)[0], 2);
  EXPECT_EQ(disc_tensor_shape(output)[1], 4);
  EXPECT_EQ(disc_tensor_byte_size(output), 32);
  const float *sum = static_cast<const float *>(disc_tensor_data(output));
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(sum[i], 11.0f * i);

  disc_session_stats_t stats;
  ASSERT_EQ(disc_session_get_stats(session, &stats), DISC_STATUS_OK);
  EXPECT_EQ(stats.peak_bytes, 64);
  EXPECT_EQ(stats.current_bytes, 0);
  EXPECT_EQ(stats.num_allocs, 2);

  // Validation error through the C API.
  disc_tensor_t *bad = nullptr;
  int64_t badShape[2] = {2, 5};
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_FLOAT32, badShape, 2, nullptr, &bad),
            DISC_STATUS_OK);
  disc_tensor_t *badInputs[2] = {inputs[0], bad};
  disc_tensor_t *unused = nullptr;
  EXPECT_EQ(disc_session_run(session, badInputs, 2, &unused, 1),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(disc_last_error_message(),
               "input 'b' dim 1: expected 4 but got 5");
  EXPECT_EQ(unused, nullptr);
  EXPECT_STREQ(disc_status_code_name(DISC_STATUS_RESOURCE_EXHAUSTED),
               "resource exhausted");

  disc_tensor_destroy(bad);
  disc_tensor_destroy(output);
  disc_tensor_destroy(inputs[0]);
  disc_tensor_destroy(inputs[1]);
  disc_session_destroy(session);
}

TEST(CApi, Errors) {
  disc_executable_t *exe = nullptr;
  EXPECT_EQ(disc_executable_load("/nonexistent.so", &exe),
            DISC_STATUS_LOAD_FAILED);
  EXPECT_EQ(exe, nullptr);
  EXPECT_NE(std::string(disc_last_error_message()).find("/nonexistent.so"),
            std::string::npos);
  EXPECT_EQ(disc_executable_load(nullptr, &exe), DISC_STATUS_INVALID_ARGUMENT);

  ASSERT_EQ(disc_executable_load(DISC_FIXTURE_HOG, &exe), DISC_STATUS_OK);
  disc_session_t *session = nullptr;
  disc_session_options_t badThreads = {};
  badThreads.num_threads = -1;
  EXPECT_EQ(disc_session_create(exe, &badThreads, &session),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(disc_last_error_message()).find("num_threads"),
            std::string::npos);
  disc_session_options_t badSubnormals = {};
  badSubnormals.keep_subnormals = 2;
  EXPECT_EQ(disc_session_create(exe, &badSubnormals, &session),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(disc_last_error_message()).find("keep_subnormals"),
            std::string::npos);
  disc_session_options_t options = {};
  options.memory_limit_bytes = 1 << 20;
  options.num_threads = 1;
  ASSERT_EQ(disc_session_create(exe, &options, &session), DISC_STATUS_OK);
  int64_t shape[1] = {2};
  disc_tensor_t *x = nullptr;
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_FLOAT32, shape, 1, nullptr, &x),
            DISC_STATUS_OK);
  disc_tensor_t *out = nullptr;
  EXPECT_EQ(disc_session_run(session, &x, 1, &out, 1),
            DISC_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(disc_last_error_message()).find("limit 1048576"),
            std::string::npos);
  EXPECT_EQ(disc_session_run(session, &x, 1, &out, 2),
            DISC_STATUS_INVALID_ARGUMENT);
  disc_session_stats_t stats;
  disc_session_get_stats(session, &stats);
  EXPECT_EQ(stats.current_bytes, 0);
  disc_tensor_t *invalid = nullptr;
  EXPECT_EQ(disc_tensor_create(static_cast<disc_dtype>(99), shape, 1, nullptr,
                               &invalid),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(invalid, nullptr);
  // A C caller may pass any int as a disc_dtype; out-of-range values are
  // rejected without undefined behavior (checked by the sanitizer build).
  EXPECT_NE(std::string(disc_last_error_message()).find("invalid dtype 99"),
            std::string::npos);
  EXPECT_EQ(disc_dtype_name(static_cast<disc_dtype>(-7)), nullptr);
  EXPECT_STREQ(disc_dtype_name(DISC_DTYPE_BOOL), "bool");
  disc_tensor_destroy(x);
  disc_session_destroy(session);
  disc_executable_release(exe);
}

TEST(CApi, ModelErrorIsInvalidArgument) {
  disc_executable_t *exe = nullptr;
  ASSERT_EQ(disc_executable_load(DISC_FIXTURE_CHECK, &exe), DISC_STATUS_OK)
      << disc_last_error_message();
  disc_session_t *session = nullptr;
  ASSERT_EQ(disc_session_create(exe, nullptr, &session), DISC_STATUS_OK);
  disc_executable_release(exe);
  int64_t shape[1] = {1};
  int64_t bad = 9 - 20, good = 4;
  disc_tensor_t *in = nullptr, *out = nullptr;
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_INT64, shape, 1, &bad, &in),
            DISC_STATUS_OK);
  EXPECT_EQ(disc_session_run(session, &in, 1, &out, 1),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(disc_last_error_message(),
               "Gather node 'g': index -11 is out of range [-5, 5)");
  disc_session_stats_t stats;
  ASSERT_EQ(disc_session_get_stats(session, &stats), DISC_STATUS_OK);
  EXPECT_EQ(stats.current_bytes, 0);
  disc_tensor_destroy(in);
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_INT64, shape, 1, &good, &in),
            DISC_STATUS_OK);
  ASSERT_EQ(disc_session_run(session, &in, 1, &out, 1), DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_EQ(static_cast<const int64_t *>(disc_tensor_data(out))[0], 4);
  disc_tensor_destroy(out);
  disc_tensor_destroy(in);
  disc_session_destroy(session);
}

} // namespace
