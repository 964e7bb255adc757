//===- TraceRecorder.cpp - Records the timeline of a run ------------------===//

#include "TraceRecorder.h"

#include <algorithm>

namespace disc::runtime {

void TraceRecorder::begin(const Signature &sig, int64_t numOps,
                          std::vector<int64_t> predicted, int64_t limitBytes,
                          int64_t predictedPeakBytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  sig_ = &sig;
  trace_ = RunTrace();
  trace_.model = sig.model;
  trace_.numOps = numOps;
  trace_.predicted = std::move(predicted);
  trace_.limitBytes = limitBytes;
  trace_.predictedPeakBytes = predictedPeakBytes;
  sampleInside_.clear();
  sampleRunMax_.clear();
  runMax_ = -1;
  open_.clear();
  live_.clear();
  bytes_.clear();
  label_.clear();
  temporary_.clear();
  pending_.clear();
  peak_ = -1;
  peakSerials_.clear();
  peakSample_ = 0;
  start_ = std::chrono::steady_clock::now();
}

double TraceRecorder::nowUs() const {
  std::chrono::duration<double, std::micro> us =
      std::chrono::steady_clock::now() - start_;
  return us.count();
}

void TraceRecorder::sampleLocked(int64_t liveBytes) {
  RunTrace::Sample s;
  s.timeUs = nowUs();
  s.liveBytes = liveBytes;
  trace_.samples.push_back(s);
  sampleInside_.push_back(!open_.empty());
  sampleRunMax_.push_back(runMax_);
}

void TraceRecorder::allocated(void *p, int64_t bytes, int64_t liveBytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t serial = static_cast<int64_t>(bytes_.size());
  bytes_.push_back(bytes);
  label_.push_back(-1);
  temporary_.push_back(0);
  if (!open_.empty()) {
    // A temporary of the running call: named after it.
    label_.back() = static_cast<int32_t>(open_.back());
    temporary_.back() = 1;
  } else {
    pending_.push_back(serial);
  }
  live_[p] = serial;
  sampleLocked(liveBytes);
  if (liveBytes > peak_) {
    peak_ = liveBytes;
    peakSerials_.clear();
    for (const auto &entry : live_)
      peakSerials_.push_back(entry.second);
    peakSample_ = trace_.samples.size() - 1;
  }
}

void TraceRecorder::freed(void *p, int64_t liveBytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(p);
  sampleLocked(liveBytes);
}

void TraceRecorder::tracePoint(int32_t id, int32_t phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase == 0) {
    RunTrace::Slice s;
    if (sig_ && id >= 0 &&
        id < static_cast<int32_t>(sig_->tracePoints.size())) {
      const TracePointSpec &t = sig_->tracePoints[id];
      s.name = t.name;
      s.opType = t.opType;
      s.kind = t.kind;
      s.op = t.op;
    } else {
      s.name = "trace point " + std::to_string(id);
      s.kind = "kernel";
    }
    s.startUs = nowUs();
    size_t index = trace_.slices.size();
    trace_.slices.push_back(std::move(s));
    for (int64_t serial : pending_)
      label_[serial] = static_cast<int32_t>(index);
    pending_.clear();
    open_.push_back(index);
    runMax_ = std::max(runMax_, trace_.slices.back().op);
    return;
  }
  if (open_.empty())
    return;
  RunTrace::Slice &s = trace_.slices[open_.back()];
  s.durationUs = nowUs() - s.startUs;
  open_.pop_back();
}

void TraceRecorder::instant(const char *kind, int32_t id, int64_t bytes,
                            int64_t point) {
  std::lock_guard<std::mutex> lock(mutex_);
  RunTrace::Instant e;
  e.kind = kind;
  e.candidate = id;
  e.bytes = bytes;
  e.point = point;
  e.timeUs = nowUs();
  if (sig_ && id >= 0 &&
      id < static_cast<int32_t>(sig_->remat.candidates.size()))
    e.producer = sig_->remat.candidates[id].producer;
  trace_.instants.push_back(std::move(e));
}

RunTrace TraceRecorder::finish(int64_t peakBytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  trace_.durationUs = nowUs();
  // Close the calls a failed run left open.
  for (size_t i : open_)
    trace_.slices[i].durationUs = trace_.durationUs - trace_.slices[i].startUs;
  open_.clear();
  // Program points of the samples: inside a call, the highest point begun
  // so far; between calls, the point of the next call that advances it
  // (the allocations of an op precede its call; recompute calls carry the
  // earlier point of the op they recompute and do not advance it).
  std::vector<std::pair<double, int64_t>> advancing;
  int64_t runMax = -1;
  for (const RunTrace::Slice &s : trace_.slices)
    if (s.op > runMax) {
      runMax = s.op;
      advancing.push_back({s.startUs, s.op});
    }
  // A kernel may run before one of an earlier op (the order of the
  // lowered code is not exactly the op order): points never go back.
  size_t next = 0;
  int64_t last = 0;
  for (size_t k = 0; k < trace_.samples.size(); ++k) {
    RunTrace::Sample &s = trace_.samples[k];
    while (next < advancing.size() && advancing[next].first < s.timeUs)
      ++next;
    if (sampleInside_[k] && sampleRunMax_[k] >= 0)
      s.point = sampleRunMax_[k];
    else if (next < advancing.size())
      s.point = advancing[next].second;
    else
      s.point = trace_.numOps;
    s.point = std::max(s.point, last);
    last = s.point;
  }
  trace_.peakBytes = peakBytes;
  if (!trace_.samples.empty() && peak_ >= 0) {
    trace_.peakTimeUs = trace_.samples[peakSample_].timeUs;
    trace_.peakPoint = trace_.samples[peakSample_].point;
  }
  for (int64_t serial : peakSerials_) {
    RunTrace::LiveTensor t;
    t.bytes = bytes_[serial];
    int32_t label = label_[serial];
    if (label < 0)
      t.name = "(return)";
    else
      t.name = trace_.slices[label].name +
               (temporary_[serial] ? " (temporary)" : "");
    trace_.peakTensors.push_back(std::move(t));
  }
  std::stable_sort(
      trace_.peakTensors.begin(), trace_.peakTensors.end(),
      [](const RunTrace::LiveTensor &a, const RunTrace::LiveTensor &b) {
        if (a.bytes != b.bytes)
          return a.bytes > b.bytes;
        return a.name < b.name;
      });
  sig_ = nullptr;
  return std::move(trace_);
}

} // namespace disc::runtime
