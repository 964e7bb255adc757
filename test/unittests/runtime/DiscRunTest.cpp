//===- DiscRunTest.cpp - disc-run CLI: outputs, comparison, exit codes ----===//

#include "TensorIO.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>

using namespace disc;

namespace {

struct Result {
  int exitCode = -1;
  std::string output; // stdout and stderr together.
};

Result runDiscRun(const std::string &args) {
  std::string cmd = std::string(DISC_RUN_PATH) + " " + args + " 2>&1";
  Result r;
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    r.output.append(buf, n);
  int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string tmpPath(const std::string &name) {
  return std::string(DISC_TEST_TMPDIR) + "/" + name;
}

/// Writes a [batch, 4] float32 .npy with values start + i.
std::string writeIota(const std::string &name, int64_t batch, float start) {
  std::vector<float> v(batch * 4);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = start + static_cast<float>(i);
  std::string path = tmpPath(name);
  EXPECT_TRUE(
      io::writeNpy(path, Tensor::fromVector<float>({batch, 4}, v)).isOk());
  return path;
}

const std::string kAdd = DISC_FIXTURE_ADD;

TEST(DiscRun, UsageErrors) {
  Result r = runDiscRun("");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("disc-run: error: no MODEL.so given"),
            std::string::npos);
  r = runDiscRun(kAdd + " --bogus 1");
  EXPECT_EQ(r.exitCode, 2);
  r = runDiscRun(kAdd + " --threads 0");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("bad --threads '0' (need 1..4096)"),
            std::string::npos);
  r = runDiscRun("/nonexistent/model.so");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("disc-run: error: cannot load"), std::string::npos);
}

TEST(DiscRun, MissingAndUnknownInputs) {
  Result r = runDiscRun(kAdd + " --input a=3x4:random");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("disc-run: error: missing input 'b' (float32 "
                          "[batch, 4])"),
            std::string::npos)
      << r.output;
  r = runDiscRun(kAdd + " --input a=3x4:random --input b=3x4:ones "
                        "--input c=3x4:ones");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("unknown input 'c'"), std::string::npos);
}

TEST(DiscRun, RandomInputsAndSummary) {
  Result r = runDiscRun(kAdd + " --input a=3x4:zeros --input '#1=3x4:ones'");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("output 0 'sum': float32 [3, 4] min=1 max=1 mean=1"),
            std::string::npos)
      << r.output;
  // Validation errors are bad input: exit 2.
  r = runDiscRun(kAdd + " --input a=3x4:random --input b=2x4:random");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("input 'b' dim 0 ('batch'): got 2 but input 'a' "
                          "dim 0 has 'batch' = 3"),
            std::string::npos)
      << r.output;
}

TEST(DiscRun, CompareReportAndOutputDir) {
  std::string a = writeIota("cli_a.npy", 2, 0);
  std::string b = writeIota("cli_b.npy", 2, 0.5f);
  std::string good = writeIota("cli_good.npy", 2, 0); // a + b = 2i + 0.5
  {
    std::vector<float> v(8);
    for (int i = 0; i < 8; ++i)
      v[i] = 2.0f * i + 0.5f;
    io::writeNpy(good, Tensor::fromVector<float>({2, 4}, v));
    v[5] += 0.05f;
    io::writeNpy(tmpPath("cli_bad.npy"), Tensor::fromVector<float>({2, 4}, v));
  }
  std::string report = tmpPath("cli_report.json");
  std::string outDir = tmpPath("cli_out");
  Result r = runDiscRun(kAdd + " --input a=" + a + " --input b=" + b +
                        " --compare sum=" + good + " --repeat 3 --report " +
                        report + " --output-dir " + outDir);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("max_abs_err=0 max_rel_err=0"), std::string::npos)
      << r.output;
  std::ifstream f(report);
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["latencies_ms"].size(), 3u);
  EXPECT_TRUE(j["latency_ms"].is_number());
  EXPECT_EQ(j["peak_bytes"], 64);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "sum");
  EXPECT_EQ(j["outputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({2, 4}));
  EXPECT_EQ(j["outputs"][0]["max_abs_err"], 0.0);
  EXPECT_EQ(j["outputs"][0]["passed"], true);
  Tensor written;
  ASSERT_TRUE(io::readNpy(outDir + "/sum.npy", &written).isOk());
  EXPECT_EQ(written.data<float>()[7], 14.5f);

  // Tolerances: 0.05 off at 10.5 fails by default, passes with atol 0.06.
  r = runDiscRun(kAdd + " --input a=" + a + " --input b=" + b +
                 " --compare '#0=" + tmpPath("cli_bad.npy") + "' --report " +
                 report);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED"), std::string::npos);
  std::ifstream f2(report);
  j = nlohmann::json::parse(f2, nullptr, false);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["outputs"][0]["passed"], false);
  r = runDiscRun(kAdd + " --input a=" + a + " --input b=" + b +
                 " --compare sum=" + tmpPath("cli_bad.npy") + " --atol 0.06");
  EXPECT_EQ(r.exitCode, 0) << r.output;

  // Shape mismatch is a comparison failure.
  std::string small = writeIota("cli_small.npy", 1, 0);
  r = runDiscRun(kAdd + " --input a=" + a + " --input b=" + b +
                 " --compare sum=" + small);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("shape mismatch: got [2, 4], reference [1, 4]"),
            std::string::npos)
      << r.output;
  r = runDiscRun(kAdd + " --input a=" + a + " --input b=" + b +
                 " --compare nope=" + good);
  EXPECT_EQ(r.exitCode, 2);
}

TEST(DiscRun, BadFilesNeverCrash) {
  std::string good = io::encodeNpy(
      Tensor::fromVector<float>({2, 4}, std::vector<float>(8, 1.0f)));
  std::string truncated = tmpPath("cli_truncated.npy");
  {
    std::ofstream f(truncated, std::ios::binary);
    f.write(good.data(), static_cast<std::streamsize>(good.size() - 5));
  }
  std::string junk = tmpPath("cli_junk.pb");
  {
    std::ofstream f(junk, std::ios::binary);
    f << "\x08\x01\x10\xff\xff\xff\xff junk";
  }
  for (const std::string &file : {truncated, junk, tmpPath("missing.npy")}) {
    Result r = runDiscRun(kAdd + " --input a=" + file + " --input b=2x4:ones");
    EXPECT_EQ(r.exitCode, 2) << file << "\n" << r.output;
    EXPECT_NE(r.output.find("disc-run: error: input 'a'"), std::string::npos)
        << r.output;
  }
}

TEST(DiscRun, MemoryLimitAndModelErrors) {
  Result r = runDiscRun(std::string(DISC_FIXTURE_HOG) +
                        " --input x=4:random --memory-limit 2M");
  EXPECT_EQ(r.exitCode, 3) << r.output;
  EXPECT_NE(r.output.find("memory limit exceeded"), std::string::npos);
  r = runDiscRun(std::string(DISC_FIXTURE_HOG) + " --input x=4:ones");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("values=[4]"), std::string::npos) << r.output;
  r = runDiscRun(DISC_FIXTURE_FAILING);
  EXPECT_EQ(r.exitCode, 4) << r.output;
}

TEST(DiscRun, OnnxTestDataInputs) {
  // The add fixture wants [batch, 4]; an ONNX 3x4x5 input has the wrong
  // rank: exit 2 with a message naming the input.
  Result r = runDiscRun(kAdd + " --input a=" DISC_ONNX_TESTDATA
                               "/test_add/test_data_set_0/input_0.pb"
                               " --input b=1x4:ones");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("input 'a': expected rank 2 but got rank 3"),
            std::string::npos)
      << r.output;
}

// A training step (fixtures/state_model.c; docs/runtime-api.md, "Training
// state"): --steps, --save-params, --load-params and the report's loss.
// Expected values from NumPy, as in StateTest.cpp: with x = [[1, 2, 3],
// [4, 5, 6]] and w = [1, 2, 3], the losses of steps 1-3 are 46, 30.5 and 15,
// and w after two steps is [0, 0.6, 1.2].
TEST(DiscRun, TrainingSteps) {
  const std::string model = DISC_FIXTURE_STATE;
  std::string x = tmpPath("train_x.npy");
  ASSERT_TRUE(
      io::writeNpy(x, Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
          .isOk());
  std::string params = tmpPath("train_params");
  std::string cmd = "rm -rf " + params;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string report = tmpPath("train_report.json");
  Result r =
      runDiscRun(model + " --input x=" + x + " --steps 2 --save-params " +
                 params + " --report " + report);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("step 1: loss=46 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step 2: loss=30.5 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("output 1 'y'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("new_w"), std::string::npos) << r.output;
  std::ifstream f(report);
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_NEAR(j["loss"].get<double>(), 30.5, 1e-5);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_NEAR(j["steps"][0]["loss"].get<double>(), 46, 1e-5);
  EXPECT_EQ(j["steps"][1]["step"], 2);
  EXPECT_EQ(j["steps"][1]["peak_bytes"], 52);
  EXPECT_EQ(j["steps"][1]["evictions"], 0);
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][1]["name"], "y");
  Tensor w;
  ASSERT_TRUE(io::readNpy(params + "/w.npy", &w).isOk());
  ASSERT_EQ(w.numElements(), 3);
  EXPECT_NEAR(w.data<float>()[0], 0, 1e-6);
  EXPECT_NEAR(w.data<float>()[1], 0.6, 1e-6);
  EXPECT_NEAR(w.data<float>()[2], 1.2, 1e-6);
  Tensor m;
  ASSERT_TRUE(io::readNpy(params + "/opt_m_0.npy", &m).isOk());
  EXPECT_EQ(m.data<float>()[0], 2.0f);

  // Step 3 from the saved state.
  r = runDiscRun(model + " --input x=" + x + " --load-params " + params +
                 " --report " + report);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream f2(report);
  j = nlohmann::json::parse(f2, nullptr, false);
  EXPECT_NEAR(j["loss"].get<double>(), 15, 1e-5);
  EXPECT_FALSE(j.contains("steps"));

  // Errors exit 2.
  r = runDiscRun(model + " --input x=" + x + " --load-params " + params +
                 "/absent");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("--load-params: state folder"), std::string::npos)
      << r.output;
  ASSERT_TRUE(
      io::writeNpy(params + "/w.npy", Tensor::zeros(DType::Int32, {3})).isOk());
  r = runDiscRun(model + " --input x=" + x + " --load-params " + params);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("state 'w': '" + params +
                          "/w.npy' holds int32 [3], the state is float32 [3]"),
            std::string::npos)
      << r.output;
  r = runDiscRun(model + " --input x=" + x + " --input w=3:ones");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("input 'w' is training state"), std::string::npos)
      << r.output;
  r = runDiscRun(model + " --input x=" + x + " --steps 0");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  r = runDiscRun(model + " --input x=" + x + " --steps 2 --repeat 3");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  r = runDiscRun(kAdd +
                 " --input a=1x4:ones --input b=1x4:ones "
                 "--save-params " +
                 params);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("the model has no training state"), std::string::npos)
      << r.output;
  // A failing step names the step and exits 4 (the model's status).
  std::string nan = tmpPath("train_nan.npy");
  ASSERT_TRUE(
      io::writeNpy(nan, Tensor::fromVector<float>({1, 3}, {NAN, 0, 0})).isOk());
  r = runDiscRun(model + " --input x=" + nan + " --steps 2");
  EXPECT_EQ(r.exitCode, 4) << r.output;
  EXPECT_NE(r.output.find("step 1: "), std::string::npos) << r.output;
}

} // namespace
