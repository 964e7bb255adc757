//===- StateTest.cpp - Training state held by a session -------------------===//
//
// A training step with state (docs/runtime-api.md, "Training state") on the
// model DISC_STATE_MODEL: in disc_runtime_tests the hand-written C model
// fixtures/state_model.c, in disc_train_step_tests the same step compiled
// by disc-compile from fixtures/train_step.mlir
// (DISC_STATE_MODEL_COMPILED). Both: x [N, 3] is the run input, w [3]
// (initial value [1, 2, 3] from the model's exported symbol) and "opt/m:0"
// [3] (zeros) are state, and
//   loss = sum(x * w), new_w = w - 0.1 * colsum(x) (updates w),
//   y = x * w, new_m = m + 1 (updates opt/m:0).
//
// The expected values come from NumPy (float32):
//   x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
//   w = np.array([1, 2, 3], np.float32); m = np.zeros(3, np.float32)
//   for step in range(2):
//       loss = (x * w).sum(); y = x * w
//       w = w - np.float32(0.1) * x.sum(0); m = m + 1
//   -> step 1: loss 46, y [[1, 4, 9], [4, 10, 18]], w [0.5, 1.3, 2.1]
//      step 2: loss 30.5, y [[0.5, 2.6, 6.3], [2, 6.5, 12.6]],
//              w [0, 0.6, 1.2] (to float32 rounding), m [2, 2, 2]
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/c_api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace disc;

namespace {

namespace fs = std::filesystem;

const char *const kModel = DISC_STATE_MODEL;
const char *const kState = "opt/m:0";

#ifdef DISC_STATE_MODEL_COMPILED
const bool kCompiled = true;
#else
const bool kCompiled = false;
#endif

std::shared_ptr<const Executable> loadModel() {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(kModel, &exe);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return exe;
}

/// A fresh, empty folder for one test (distinct for the two test binaries).
std::string tmpDir(const std::string &name) {
  std::string dir = std::string(DISC_TEST_TMPDIR) + "/state_" +
                    (kCompiled ? "compiled_" : "c_") + name;
  fs::remove_all(dir);
  return dir;
}

Tensor inputX() {
  return Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
}

void expectValues(const Tensor &t, const std::vector<int64_t> &shape,
                  const std::vector<float> &values, const char *what) {
  ASSERT_TRUE(t.isValid()) << what;
  EXPECT_EQ(t.dtype(), DType::Float32) << what;
  ASSERT_EQ(t.shape(), shape) << what;
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(t.data<float>()[i], values[i], 1e-5) << what << "[" << i << "]";
}

void expectState(const Session &session, const std::string &name,
                 const std::vector<float> &values) {
  Tensor t;
  Status s = session.getState(name, &t);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectValues(t, {3}, values, name.c_str());
}

const std::vector<float> kW0 = {1, 2, 3}, kW1 = {0.5f, 1.3f, 2.1f},
                         kW2 = {0, 0.6f, 1.2f};

TEST(State, SignatureFields) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  const Signature &sig = exe->signature();
  ASSERT_EQ(sig.inputs.size(), 3u);
  EXPECT_FALSE(sig.inputs[0].isState);
  EXPECT_TRUE(sig.inputs[1].isState);
  EXPECT_NE(sig.inputs[1].init, "zeros");
  EXPECT_FALSE(sig.inputs[1].init.empty());
  EXPECT_TRUE(sig.inputs[2].isState);
  EXPECT_EQ(sig.inputs[2].name, kState);
  EXPECT_EQ(sig.inputs[2].init, "zeros");
  EXPECT_EQ(sig.numStates(), 2);
  ASSERT_EQ(sig.outputs.size(), 4u);
  EXPECT_EQ(sig.outputs[0].updates, "");
  EXPECT_EQ(sig.outputs[1].updates, "w");
  EXPECT_EQ(sig.outputs[2].updates, "");
  EXPECT_EQ(sig.outputs[3].updates, kState);
  EXPECT_EQ(sig.loss, "loss");
  EXPECT_EQ(sig.runInputs(), (std::vector<int64_t>{0}));
  EXPECT_EQ(sig.runOutputs(), (std::vector<int64_t>{0, 2}));
  EXPECT_NE(exe->stateInitValue(1), nullptr);
  EXPECT_EQ(exe->stateInitValue(2), nullptr); // zeros
  EXPECT_EQ(exe->stateInitValue(0), nullptr); // not a state
  const float *init = static_cast<const float *>(exe->stateInitValue(1));
  EXPECT_EQ(init[0], 1.0f);
  EXPECT_EQ(init[2], 3.0f);
}

TEST(State, InitialValuesFromSymbolAndZeros) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  EXPECT_EQ(session.stateNames(), (std::vector<std::string>{"w", kState}));
  EXPECT_EQ(session.lossName(), "loss");
  expectState(session, "w", kW0);
  expectState(session, kState, {0, 0, 0});
}

TEST(State, TwoRunsUpdateTheState) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::vector<Tensor> out;
  Status s = session.run({inputX()}, &out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  // Only loss and y come back: new_w and new_m became the state.
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[0], {}, {46}, "loss");
  expectValues(out[1], {2, 3}, {1, 4, 9, 4, 10, 18}, "y");
  expectState(session, "w", kW1);
  expectState(session, kState, {1, 1, 1});

  // By name; the second step reads the updated state.
  s = session.run(std::map<std::string, Tensor>{{"x", inputX()}}, &out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[0], {}, {30.5f}, "loss");
  expectValues(out[1], {2, 3}, {0.5f, 2.6f, 6.3f, 2, 6.5f, 12.6f}, "y");
  expectState(session, "w", kW2);
  expectState(session, kState, {2, 2, 2});
  // The held state is not part of the run's memory.
  EXPECT_EQ(session.stats().current_bytes, 0);
  if (!kCompiled) {
    // loss (4) + new_w (12) + y (24) + new_m (12), all live at the end.
    EXPECT_EQ(session.stats().peak_bytes, 52);
  }

  // A second session starts from the initial values again.
  Session other(exe);
  expectState(other, "w", kW0);
  // Moving a session moves its state.
  Session moved(std::move(session));
  expectState(moved, "w", kW2);
}

TEST(State, RunInputErrors) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::vector<Tensor> out;
  Tensor w = Tensor::fromVector<float>({3}, {1, 2, 3});
  // The state inputs are not run inputs.
  Status s = session.run({inputX(), w, w}, &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("expected 1 inputs but got 3"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("'w', 'opt/m:0'"), std::string::npos)
      << s.message();
  s = session.run(std::map<std::string, Tensor>{{"x", inputX()}, {"w", w}},
                  &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("input 'w' is a state"), std::string::npos)
      << s.message();
  s = session.run(std::map<std::string, Tensor>{{"z", inputX()}}, &out);
  EXPECT_NE(s.message().find("unknown input 'z' (model inputs: x)"),
            std::string::npos)
      << s.message();
  s = session.run(std::map<std::string, Tensor>{}, &out);
  EXPECT_NE(s.message().find("missing input 'x'"), std::string::npos)
      << s.message();
  // Validation names the input as before.
  s = session.validateInputs({Tensor::zeros(DType::Float32, {2, 4})});
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("input 'x' dim 1: expected 3 but got 4"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(session.validateInputs({inputX()}).isOk());
  expectState(session, "w", kW0);
}

TEST(State, FailedRunsLeaveTheStateUnchanged) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.run({inputX()}, &out).isOk());
  expectState(session, "w", kW1);

  // A bad input shape.
  Status s = session.run({Tensor::zeros(DType::Float32, {2, 4})}, &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("input 'x'"), std::string::npos) << s.message();
  EXPECT_TRUE(out.empty());
  expectState(session, "w", kW1);
  expectState(session, kState, {1, 1, 1});

  // A memory limit below what the run needs.
  SessionOptions tight;
  tight.memory_limit_bytes = 16;
  Session limited(exe, tight);
  ASSERT_TRUE(
      limited.setState("w", Tensor::fromVector<float>({3}, kW1)).isOk());
  s = limited.run({inputX()}, &out);
  EXPECT_EQ(s.code(), StatusCode::ResourceExhausted) << s.toString();
  EXPECT_TRUE(out.empty());
  expectState(limited, "w", kW1);
  expectState(limited, kState, {0, 0, 0});
  EXPECT_EQ(limited.stats().current_bytes, 0);

  if (!kCompiled) {
    // The model fails after allocating an update.
    Tensor nan = Tensor::fromVector<float>({1, 3}, {NAN, 0, 0});
    s = session.run({nan}, &out);
    EXPECT_EQ(s.code(), StatusCode::Internal) << s.toString();
    EXPECT_NE(s.message().find("NaN"), std::string::npos) << s.message();
    expectState(session, "w", kW1);
    expectState(session, kState, {1, 1, 1});
    EXPECT_EQ(session.stats().current_bytes, 0);
  }

  // The session goes on from the state it kept.
  ASSERT_TRUE(session.run({inputX()}, &out).isOk());
  expectState(session, "w", kW2);
}

TEST(State, SetAndGetState) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  Tensor w = Tensor::fromVector<float>({3}, {10, 20, 30});
  ASSERT_TRUE(session.setState("w", w).isOk());
  // setState copies: changing the caller's tensor changes no state.
  w.data<float>()[0] = -1;
  expectState(session, "w", {10, 20, 30});
  // getState copies too.
  Tensor got;
  ASSERT_TRUE(session.getState("w", &got).isOk());
  got.data<float>()[1] = -1;
  expectState(session, "w", {10, 20, 30});

  // The next run reads the state that was set: loss = 1*10 + 2*20 + 3*30 +
  // 4*10 + 5*20 + 6*30 = 460 (NumPy: (x * [10, 20, 30]).sum()).
  std::vector<Tensor> out;
  ASSERT_TRUE(session.run({inputX()}, &out).isOk());
  expectValues(out[0], {}, {460}, "loss");
  expectState(session, "w", {9.5f, 19.3f, 29.1f});

  // Mismatches name the state and what differs; the state is unchanged.
  Status s = session.setState("w", Tensor::fromVector<double>({3}, {1, 2, 3}));
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "state 'w': expected dtype float32 but got float64");
  s = session.setState(kState, Tensor::zeros(DType::Float32, {4}));
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "state 'opt/m:0': expected shape [3] but got [4]");
  s = session.setState("w", Tensor::zeros(DType::Float32, {1, 3}));
  EXPECT_NE(s.message().find("expected shape [3] but got [1, 3]"),
            std::string::npos);
  s = session.setState("w", Tensor());
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  s = session.setState("x", inputX());
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "unknown state 'x' (session states: w, opt/m:0)");
  s = session.getState("nope", &got);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  expectState(session, "w", {9.5f, 19.3f, 29.1f});
}

TEST(State, SaveAndLoad) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.run({inputX()}, &out).isOk());
  // The folder (and its parent) is created.
  std::string dir = tmpDir("save") + "/nested";
  Status s = session.saveState(dir);
  ASSERT_TRUE(s.isOk()) << s.toString();
  // One .npy per state, the name sanitized: "opt/m:0" -> opt_m_0.npy.
  EXPECT_EQ(npyFileName(kState), "opt_m_0.npy");
  std::vector<std::string> files;
  for (const auto &entry : fs::directory_iterator(dir))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"opt_m_0.npy", "w.npy"}));
  Tensor saved;
  ASSERT_TRUE(readNpy(dir + "/w.npy", &saved).isOk());
  expectValues(saved, {3}, kW1, "saved w");
  ASSERT_TRUE(readNpy(dir + "/opt_m_0.npy", &saved).isOk());
  expectValues(saved, {3}, {1, 1, 1}, "saved m");

  // Another run moves the state on; loading brings back the saved one.
  ASSERT_TRUE(session.run({inputX()}, &out).isOk());
  expectState(session, "w", kW2);
  s = session.loadState(dir);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectState(session, "w", kW1);
  expectState(session, kState, {1, 1, 1});
  // A fresh session continues from the loaded state as the first did.
  Session resumed(exe);
  ASSERT_TRUE(resumed.loadState(dir).isOk());
  ASSERT_TRUE(resumed.run({inputX()}, &out).isOk());
  expectValues(out[0], {}, {30.5f}, "loss");
  expectState(resumed, "w", kW2);
  expectState(resumed, kState, {2, 2, 2});
  // Saving over an existing folder replaces the files.
  ASSERT_TRUE(resumed.saveState(dir).isOk());
  ASSERT_TRUE(readNpy(dir + "/w.npy", &saved).isOk());
  expectValues(saved, {3}, kW2, "saved again");
}

TEST(State, LoadErrorsChangeNothing) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::string dir = tmpDir("load_errors");
  ASSERT_TRUE(session.saveState(dir).isOk());
  // w.npy is fine; the other file is broken in turn. Nothing may change,
  // w included.
  ASSERT_TRUE(
      writeNpy(dir + "/w.npy", Tensor::fromVector<float>({3}, {7, 8, 9}))
          .isOk());
  auto expectUnchanged = [&] {
    expectState(session, "w", kW0);
    expectState(session, kState, {0, 0, 0});
  };
  std::string mFile = dir + "/opt_m_0.npy";

  fs::remove(mFile);
  Status s = session.loadState(dir);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("state 'opt/m:0'"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(mFile), std::string::npos) << s.message();
  expectUnchanged();

  ASSERT_TRUE(
      writeNpy(mFile, Tensor::fromVector<double>({3}, {1, 2, 3})).isOk());
  s = session.loadState(dir);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "state 'opt/m:0': '" + mFile +
                             "' holds float64 [3], the state is float32 [3]");
  expectUnchanged();

  ASSERT_TRUE(writeNpy(mFile, Tensor::zeros(DType::Float32, {2, 3})).isOk());
  s = session.loadState(dir);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("holds float32 [2, 3], the state is float32 [3]"),
            std::string::npos)
      << s.message();
  expectUnchanged();

  {
    std::ofstream garbage(mFile, std::ios::binary | std::ios::trunc);
    garbage << "not a numpy file";
  }
  s = session.loadState(dir);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("bad magic"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(mFile), std::string::npos) << s.message();
  expectUnchanged();

  s = session.loadState(dir + "/absent");
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find(dir + "/absent"), std::string::npos)
      << s.message();
  expectUnchanged();

  // Once the file is right, both load.
  ASSERT_TRUE(
      writeNpy(mFile, Tensor::fromVector<float>({3}, {4, 5, 6})).isOk());
  ASSERT_TRUE(session.loadState(dir).isOk());
  expectState(session, "w", {7, 8, 9});
  expectState(session, kState, {4, 5, 6});

  // A folder that cannot be created: a file is in the way.
  s = session.saveState(dir + "/w.npy/sub");
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("cannot create the state folder"),
            std::string::npos)
      << s.message();
}

TEST(State, PredictionTakesRunInputShapes) {
  auto exe = loadModel();
  ASSERT_TRUE(exe);
  std::map<std::string, int64_t> dims;
  ASSERT_TRUE(exe->signature().bindDims({{5, 3}}, &dims).isOk());
  EXPECT_EQ(dims["N"], 5);
  ASSERT_TRUE(exe->signature().bindDims({{5, 3}, {3}, {3}}, &dims).isOk());
  Status s = exe->signature().bindDims({{5, 3}, {3}}, &dims);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("expected 1 input shapes (3 with the state "
                             "inputs) but got 2"),
            std::string::npos)
      << s.message();
  int64_t withState = 0, runOnly = 0;
  ASSERT_TRUE(exe->predictPeakBytes({{5, 3}, {3}, {3}}, &withState).isOk());
  ASSERT_TRUE(exe->predictPeakBytes({{5, 3}}, &runOnly).isOk());
  EXPECT_EQ(withState, runOnly);
}

TEST(State, CApiRoundTrip) {
  disc_executable_t *exe = nullptr;
  ASSERT_EQ(disc_executable_load(kModel, &exe), DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_EQ(disc_executable_num_inputs(exe), 3);
  EXPECT_EQ(disc_executable_num_outputs(exe), 4);
  EXPECT_EQ(disc_executable_num_run_inputs(exe), 1);
  EXPECT_EQ(disc_executable_num_run_outputs(exe), 2);
  EXPECT_STREQ(disc_executable_run_input_name(exe, 0), "x");
  EXPECT_EQ(disc_executable_run_input_name(exe, 1), nullptr);
  EXPECT_STREQ(disc_executable_run_output_name(exe, 0), "loss");
  EXPECT_STREQ(disc_executable_run_output_name(exe, 1), "y");
  EXPECT_EQ(disc_executable_run_output_name(exe, 2), nullptr);
  EXPECT_STREQ(disc_executable_loss_name(exe), "loss");

  disc_session_t *session = nullptr;
  ASSERT_EQ(disc_session_create(exe, nullptr, &session), DISC_STATUS_OK);
  disc_executable_release(exe);
  ASSERT_EQ(disc_session_num_states(session), 2);
  EXPECT_STREQ(disc_session_state_name(session, 0), "w");
  EXPECT_STREQ(disc_session_state_name(session, 1), kState);
  EXPECT_EQ(disc_session_state_name(session, 2), nullptr);
  disc_dtype dtype = DISC_DTYPE_INT8;
  int64_t rank = -1;
  const int64_t *shape = nullptr;
  ASSERT_EQ(disc_session_state_shape(session, kState, &dtype, &rank, &shape),
            DISC_STATUS_OK);
  EXPECT_EQ(dtype, DISC_DTYPE_FLOAT32);
  ASSERT_EQ(rank, 1);
  EXPECT_EQ(shape[0], 3);

  float w[3] = {0, 0, 0};
  ASSERT_EQ(disc_session_get_state(session, "w", w, sizeof(w)), DISC_STATUS_OK);
  EXPECT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[2], 3.0f);

  // Run: one input, two outputs.
  float xData[6] = {1, 2, 3, 4, 5, 6};
  int64_t xShape[2] = {2, 3};
  disc_tensor_t *x = nullptr;
  ASSERT_EQ(disc_tensor_create(DISC_DTYPE_FLOAT32, xShape, 2, xData, &x),
            DISC_STATUS_OK);
  disc_tensor_t *outs[4] = {nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(disc_session_run(session, &x, 1, outs, 4),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(disc_last_error_message(),
               "expected room for 2 outputs but got 4");
  ASSERT_EQ(disc_session_run(session, &x, 1, outs, 2), DISC_STATUS_OK)
      << disc_last_error_message();
  EXPECT_NEAR(*static_cast<float *>(disc_tensor_data(outs[0])), 46, 1e-5);
  EXPECT_EQ(disc_tensor_num_elements(outs[1]), 6);
  disc_tensor_destroy(outs[0]);
  disc_tensor_destroy(outs[1]);
  ASSERT_EQ(disc_session_get_state(session, "w", w, sizeof(w)), DISC_STATUS_OK);
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(w[j], kW1[j], 1e-6);

  // Set from a buffer, save, change, load.
  float m[3] = {5, 6, 7};
  ASSERT_EQ(disc_session_set_state(session, kState, m, sizeof(m)),
            DISC_STATUS_OK);
  std::string dir = tmpDir("capi");
  ASSERT_EQ(disc_session_save_state(session, dir.c_str()), DISC_STATUS_OK)
      << disc_last_error_message();
  float zeros[3] = {0, 0, 0};
  ASSERT_EQ(disc_session_set_state(session, kState, zeros, sizeof(zeros)),
            DISC_STATUS_OK);
  ASSERT_EQ(disc_session_load_state(session, dir.c_str()), DISC_STATUS_OK)
      << disc_last_error_message();
  float back[3] = {0, 0, 0};
  ASSERT_EQ(disc_session_get_state(session, kState, back, sizeof(back)),
            DISC_STATUS_OK);
  EXPECT_EQ(back[0], 5.0f);
  EXPECT_EQ(back[2], 7.0f);

  // Errors.
  EXPECT_EQ(disc_session_get_state(session, "w", w, 8),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(disc_last_error_message(),
               "state 'w' has 12 bytes (float32 [3]) but the buffer has 8");
  EXPECT_EQ(disc_session_set_state(session, "v", m, sizeof(m)),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(disc_last_error_message(),
               "unknown state 'v' (session states: w, opt/m:0)");
  EXPECT_EQ(disc_session_get_state(session, "w", nullptr, 12),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(disc_session_state_shape(session, "v", &dtype, &rank, &shape),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(disc_session_load_state(session, (dir + "/absent").c_str()),
            DISC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(disc_session_save_state(session, nullptr),
            DISC_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(disc_session_get_state(session, kState, back, sizeof(back)),
            DISC_STATUS_OK);
  EXPECT_EQ(back[1], 6.0f);
  disc_tensor_destroy(x);
  disc_session_destroy(session);
}

#ifndef DISC_STATE_MODEL_COMPILED

TEST(State, ModelsWithoutStateHaveNone) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_ADD, &exe).isOk());
  Session session(exe);
  EXPECT_TRUE(session.stateNames().empty());
  EXPECT_EQ(session.lossName(), "");
  EXPECT_EQ(exe->signature().numStates(), 0);
  Tensor t;
  Status s = session.getState("a", &t);
  EXPECT_EQ(s.message(), "unknown state 'a' (the model has no state)");
  // Saving writes nothing; loading reads nothing.
  std::string dir = tmpDir("stateless");
  EXPECT_TRUE(session.saveState(dir).isOk());
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_TRUE(session.loadState(dir).isOk());
}

TEST(State, InitialValueMustBeExported) {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(DISC_FIXTURE_STATE_MISSING_INIT, &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("state input 'w': the model does not export its "
                             "initial value 'disc_state_init_missing'"),
            std::string::npos)
      << s.message();
}

// AddressSanitizer pads every instrumented global with a redzone, and the
// symbol's size then includes it: the short initial value looks long
// enough in a sanitized build.
#if defined(__SANITIZE_ADDRESS__)
#define DISC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DISC_TEST_ASAN 1
#endif
#endif

TEST(State, InitialValueMustBeLongEnough) {
#ifdef DISC_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer pads the fixture's global: its symbol "
                  "size is not the 4 bytes the test needs";
#endif
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(DISC_FIXTURE_STATE_SHORT_INIT, &exe);
  EXPECT_EQ(s.code(), StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("its initial value 'disc_state_init_short' has "
                             "4 bytes, the state needs 12"),
            std::string::npos)
      << s.message();
}

/// A signature with one run input, state `w` and the outputs `outputs`.
std::string signatureWith(const std::string &stateEntry,
                          const std::string &outputs,
                          const std::string &extra = "") {
  return R"({"inputs": [{"name": "x", "dtype": "float32", "shape": [2]}, )" +
         stateEntry + R"(], "outputs": [)" + outputs + "]" + extra + "}";
}

TEST(State, SignatureErrors) {
  const std::string w =
      R"({"name": "w", "dtype": "float32", "shape": [3], "state": true})";
  const std::string upd =
      R"({"name": "w2", "dtype": "float32", "shape": [3], "updates": "w"})";
  Signature sig;
  ASSERT_TRUE(Signature::parse(signatureWith(w, upd), &sig).isOk());
  EXPECT_EQ(sig.inputs[1].init, "zeros");
  auto error = [&](const std::string &json) {
    Signature ignored;
    Status s = Signature::parse(json, &ignored);
    EXPECT_EQ(s.code(), StatusCode::LoadFailed) << json;
    return s.message();
  };
  EXPECT_EQ(
      error(signatureWith(
          R"({"name": "w", "dtype": "float32", "shape": ["n"], "state": true})",
          upd)),
      "signature: inputs[1] ('w'): a state input needs a static shape, dim 0 "
      "is 'n'");
  EXPECT_EQ(
      error(signatureWith(
          w,
          R"({"name": "w2", "dtype": "float32", "shape": [3], "updates": "x"})")),
      "signature: output 'w2' updates 'x', which is not a state input");
  EXPECT_EQ(error(signatureWith(w, upd + ", " + upd)),
            "signature: output 'w2' updates 'w', which another output "
            "updates too");
  EXPECT_EQ(
      error(signatureWith(
          w,
          R"({"name": "w2", "dtype": "float64", "shape": [3], "updates": "w"})")),
      "signature: output 'w2' updates 'w': the output is float64 [3], the "
      "state float32 [3]");
  EXPECT_EQ(
      error(signatureWith(
          w,
          R"({"name": "w2", "dtype": "float32", "shape": [4], "updates": "w"})")),
      "signature: output 'w2' updates 'w': the output is float32 [4], the "
      "state float32 [3]");
  EXPECT_EQ(error(signatureWith(w, upd, R"(, "loss": "nope")")),
            "signature: 'loss' names 'nope', which is not an output");
  EXPECT_EQ(error(signatureWith(w, upd, R"(, "loss": "w2")")),
            "signature: 'loss' names 'w2', an output that updates a state");
  EXPECT_NE(
      error(
          signatureWith(
              R"({"name": "w", "dtype": "float32", "shape": [3], "init": "s"})",
              upd))
          .find("'init' must be a non-empty string of a state input"),
      std::string::npos);
  // An output may leave a dim unknown; the run checks the actual shape.
  ASSERT_TRUE(
      Signature::parse(
          signatureWith(
              w,
              R"({"name": "w2", "dtype": "float32", "shape": ["?"], "updates": "w"})"),
          &sig)
          .isOk());
}

#endif // DISC_STATE_MODEL_COMPILED

} // namespace
