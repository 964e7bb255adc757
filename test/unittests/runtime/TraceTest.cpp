//===- TraceTest.cpp - The recorded timeline of a run ---------------------===//
//
// SessionOptions::record_trace on the trace fixture (fixtures/trace_model.c:
// two buffers of 16*batch bytes, two trace points, the live bytes of its two
// program points in the signature). The expected slices, samples, program
// points, peak buffers and predictions are worked out by hand from the
// fixture's allocations, not from the runtime.
//
//===----------------------------------------------------------------------===//
#include "disc/runtime/Runtime.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace {

using namespace disc;

constexpr int64_t kBatch = 64;
constexpr int64_t kBuf = 16 * kBatch; // One [batch, 4] float32 buffer.

std::vector<Tensor> inputs() {
  std::vector<float> a(kBatch * 4), b(kBatch * 4);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f;
  }
  return {Tensor::fromData(DType::Float32, {kBatch, 4}, a.data()),
          Tensor::fromData(DType::Float32, {kBatch, 4}, b.data())};
}

int32_t fixtureCalls() {
  void *h = dlopen(DISC_FIXTURE_TRACE, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1;
  auto fn = reinterpret_cast<int32_t (*)()>(dlsym(h, "trace_fixture_calls"));
  int32_t n = fn ? fn() : -1;
  dlclose(h);
  return n;
}

TEST(TraceTest, OffRecordsNothingAndTheModelMakesNoTraceCall) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_TRACE, &exe).isOk());
  Session session(exe);
  std::vector<Tensor> out;
  int32_t before = fixtureCalls();
  ASSERT_TRUE(session.run(inputs(), &out).isOk());
  EXPECT_EQ(fixtureCalls(), before); // trace_op was NULL.
  EXPECT_TRUE(session.lastTrace().slices.empty());
  EXPECT_TRUE(session.lastTrace().samples.empty());
  EXPECT_EQ(session.stats().peak_bytes, 2 * kBuf);
}

TEST(TraceTest, RecordsSlicesLiveBytesPointsAndPeak) {
  std::shared_ptr<const Executable> exe;
  ASSERT_TRUE(Executable::load(DISC_FIXTURE_TRACE, &exe).isOk());
  ASSERT_EQ(exe->signature().tracePoints.size(), 2u);
  SessionOptions options;
  options.record_trace = true;
  Session session(exe, options);
  std::vector<Tensor> out;
  int32_t before = fixtureCalls();
  ASSERT_TRUE(session.run(inputs(), &out).isOk());
  EXPECT_EQ(fixtureCalls() - before, 4); // Two calls, begin and end each.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].data<float>()[3], 3.5f);

  const RunTrace &t = session.lastTrace();
  EXPECT_EQ(t.model, "trace");
  ASSERT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.slices[0].name, "add0");
  EXPECT_EQ(t.slices[0].opType, "Add");
  EXPECT_EQ(t.slices[0].kind, "kernel");
  EXPECT_EQ(t.slices[0].op, 0);
  EXPECT_EQ(t.slices[1].name, "copy1");
  EXPECT_EQ(t.slices[1].kind, "library");
  EXPECT_EQ(t.slices[1].op, 1);
  EXPECT_GE(t.slices[0].durationUs, 0);
  EXPECT_LE(t.slices[0].startUs + t.slices[0].durationUs, t.slices[1].startUs);

  // alloc tmp (op 0's result), alloc res (op 1's), free tmp (after the last
  // call: the return), then the runtime adopts res as the output.
  std::vector<int64_t> live, points;
  for (const RunTrace::Sample &s : t.samples) {
    live.push_back(s.liveBytes);
    points.push_back(s.point);
  }
  EXPECT_EQ(live, (std::vector<int64_t>{kBuf, 2 * kBuf, kBuf, 0}));
  EXPECT_EQ(points, (std::vector<int64_t>{0, 1, 2, 2}));

  EXPECT_EQ(t.peakBytes, 2 * kBuf);
  EXPECT_EQ(t.peakBytes, session.stats().peak_bytes);
  EXPECT_EQ(t.peakPoint, 1);
  ASSERT_EQ(t.peakTensors.size(), 2u);
  EXPECT_EQ(t.peakTensors[0].name, "add0"); // Equal sizes: by name.
  EXPECT_EQ(t.peakTensors[1].name, "copy1");
  EXPECT_EQ(t.peakTensors[0].bytes, kBuf);

  EXPECT_EQ(t.numOps, 2);
  // Per point the largest of live_before and the points; the return (no
  // exit points) repeats the last.
  EXPECT_EQ(t.predicted, (std::vector<int64_t>{kBuf, 2 * kBuf, 2 * kBuf}));
  EXPECT_EQ(t.predictedPeakBytes, 2 * kBuf);
  EXPECT_TRUE(t.instants.empty());

  // The Chrome trace: 2 metadata, 2 slices, 4 live samples, and a
  // predicted step at the first sample of each point (0, 1, the return).
  nlohmann::json j = nlohmann::json::parse(chromeTraceJson(t));
  int x = 0, live_c = 0, pred_c = 0, m = 0;
  for (const auto &e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ts") && e.contains("pid") && e.contains("tid"));
    std::string ph = e["ph"];
    x += ph == "X";
    m += ph == "M";
    live_c += ph == "C" && e["name"] == "live bytes";
    pred_c += ph == "C" && e["name"] == "predicted live bytes";
  }
  EXPECT_EQ(x, 2);
  EXPECT_EQ(m, 2);
  EXPECT_EQ(live_c, 4);
  EXPECT_EQ(pred_c, 3);
  EXPECT_EQ(j["otherData"]["peak_bytes"], 2 * kBuf);

  std::string svg = memoryPlotSvg(t);
  EXPECT_NE(svg.find("id=\"peak-label\""), std::string::npos);
  EXPECT_NE(svg.find("peak 2.00 KiB at program point 1, 2 buffers live:"),
            std::string::npos);
  EXPECT_NE(svg.find("1.00 KiB  add0"), std::string::npos);
  EXPECT_EQ(svg.find("evict-marker"), std::string::npos);
}

TEST(TraceTest, WritersReportUnwritableFiles) {
  RunTrace t;
  Status s = writeChromeTrace(t, "/nonexistent-dir/t.json");
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("/nonexistent-dir/t.json"), std::string::npos);
  s = writeMemoryPlot(t, "/nonexistent-dir/t.svg");
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
}

} // namespace
