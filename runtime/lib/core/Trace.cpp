//===- Trace.cpp - Chrome trace and SVG plot of a recorded run ------------===//

#include "disc/runtime/Trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace disc {

using json = nlohmann::json;

std::string chromeTraceJson(const RunTrace &trace) {
  json events = json::array();
  const int pid = 1, callTid = 1, memTid = 0;
  // A metadata ("M") event naming the process or a thread.
  auto metadata = [&](const char *what, int tid, const std::string &name) {
    events.push_back({{"name", what},
                      {"ph", "M"},
                      {"ts", 0},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"name", name}}}});
  };
  metadata("process_name", memTid,
           "disc " + (trace.model.empty() ? "model" : trace.model));
  metadata("thread_name", callTid, "kernels and library calls");
  const int deviceTid = 2;
  bool anyDevice = false;
  for (const RunTrace::Slice &s : trace.slices) {
    json args = {{"op_type", s.opType}, {"kind", s.kind}, {"op", s.op}};
    if (s.device) {
      args["callee"] = s.callee;
      anyDevice = true;
    }
    events.push_back({{"name", s.name},
                      {"cat", s.kind},
                      {"ph", "X"},
                      {"ts", s.startUs},
                      {"dur", s.durationUs},
                      {"pid", pid},
                      {"tid", s.device ? deviceTid : callTid},
                      {"args", args}});
  }
  if (anyDevice)
    metadata("thread_name", deviceTid, "device (CUDA events)");
  for (const RunTrace::Sample &s : trace.samples)
    events.push_back({{"name", "live bytes"},
                      {"ph", "C"},
                      {"ts", s.timeUs},
                      {"pid", pid},
                      {"tid", memTid},
                      {"args", {{"live", s.liveBytes}}}});
  // The predicted live bytes of each program point, from the first sample
  // of that point (the point's allocations) or the start of its call.
  if (!trace.predicted.empty()) {
    std::vector<double> first(trace.predicted.size(), -1);
    for (const RunTrace::Sample &s : trace.samples)
      if (s.point >= 0 && s.point < static_cast<int64_t>(first.size()) &&
          first[s.point] < 0)
        first[s.point] = s.timeUs;
    for (const RunTrace::Slice &s : trace.slices)
      if (s.op >= 0 && s.op < static_cast<int64_t>(first.size()) &&
          first[s.op] < 0)
        first[s.op] = s.startUs;
    std::vector<std::pair<double, int64_t>> steps;
    for (size_t i = 0; i < first.size(); ++i)
      if (first[i] >= 0)
        steps.push_back({first[i], trace.predicted[i]});
    std::stable_sort(
        steps.begin(), steps.end(),
        [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &[ts, bytes] : steps)
      events.push_back({{"name", "predicted live bytes"},
                        {"ph", "C"},
                        {"ts", ts},
                        {"pid", pid},
                        {"tid", memTid},
                        {"args", {{"predicted", bytes}}}});
  }
  for (const RunTrace::Instant &e : trace.instants)
    events.push_back({{"name", e.kind},
                      {"cat", "remat"},
                      {"ph", "i"},
                      {"s", "p"},
                      {"ts", e.timeUs},
                      {"pid", pid},
                      {"tid", callTid},
                      {"args",
                       {{"candidate", e.candidate},
                        {"producer", e.producer},
                        {"bytes", e.bytes},
                        {"point", e.point}}}});
  json peakTensors = json::array();
  for (const RunTrace::LiveTensor &t : trace.peakTensors)
    peakTensors.push_back({{"name", t.name}, {"bytes", t.bytes}});
  json root = {{"traceEvents", std::move(events)},
               {"displayTimeUnit", "ms"},
               {"otherData",
                {{"model", trace.model},
                 {"peak_bytes", trace.peakBytes},
                 {"peak_point", trace.peakPoint},
                 {"peak_tensors", std::move(peakTensors)},
                 {"limit_bytes", trace.limitBytes},
                 {"predicted_peak_bytes", trace.predictedPeakBytes},
                 {"num_ops", trace.numOps}}}};
  return root.dump();
}

namespace {

std::string xmlEscape(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      // Control characters are not allowed in XML 1.0.
      if (static_cast<unsigned char>(c) >= 0x20 || c == '\t')
        out += c;
    }
  }
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// A byte unit for values up to `maxBytes`: divisor and name.
std::pair<double, const char *> byteUnit(double maxBytes) {
  if (maxBytes >= 1024.0 * 1024 * 1024)
    return {1024.0 * 1024 * 1024, "GiB"};
  if (maxBytes >= 1024.0 * 1024)
    return {1024.0 * 1024, "MiB"};
  if (maxBytes >= 1024.0)
    return {1024.0, "KiB"};
  return {1.0, "B"};
}

std::string bytesText(int64_t bytes) {
  auto [div, name] = byteUnit(static_cast<double>(bytes));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f %s", static_cast<double>(bytes) / div,
                name);
  return buf;
}

/// A tick step of about range / 5: 1, 2 or 5 times a power of ten.
double niceStep(double range) {
  if (range <= 0)
    return 1;
  double raw = range / 5;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

} // namespace

std::string memoryPlotSvg(const RunTrace &trace, int width, int height) {
  const double left = 96, right = 24, top = 56, bottom = 64;
  const double plotW = width - left - right, plotH = height - top - bottom;
  // X: program points 0 .. numOps (the return), each sample at its
  // point's share split evenly among that point's samples. Without
  // program points (or when they do not increase), the sample index.
  const auto &samples = trace.samples;
  // (A model compiled before ABI v6 has no trace points: every sample
  // then falls on the return.)
  bool byPoint =
      trace.numOps > 0 && std::any_of(samples.begin(), samples.end(),
                                      [&](const RunTrace::Sample &s) {
                                        return s.point < trace.numOps;
                                      });
  for (size_t k = 1; byPoint && k < samples.size(); ++k)
    byPoint = samples[k].point >= samples[k - 1].point;
  double xMax = byPoint ? static_cast<double>(trace.numOps + 1)
                        : std::max<double>(1, samples.size());
  std::vector<double> sx(samples.size());
  if (byPoint) {
    for (size_t k = 0; k < samples.size();) {
      size_t e = k;
      while (e < samples.size() && samples[e].point == samples[k].point)
        ++e;
      for (size_t j = k; j < e; ++j)
        sx[j] = samples[k].point + static_cast<double>(j - k) / (e - k);
      k = e;
    }
  } else {
    for (size_t k = 0; k < samples.size(); ++k)
      sx[k] = static_cast<double>(k);
  }
  double yMaxBytes = static_cast<double>(trace.peakBytes);
  for (int64_t p : trace.predicted)
    yMaxBytes = std::max(yMaxBytes, static_cast<double>(p));
  yMaxBytes = std::max(yMaxBytes, static_cast<double>(trace.limitBytes));
  for (const RunTrace::Sample &s : samples)
    yMaxBytes = std::max(yMaxBytes, static_cast<double>(s.liveBytes));
  // Not a structured binding: the lambdas below capture `div` (a C++20
  // extension for bindings, which clang warns about).
  const auto scale = byteUnit(yMaxBytes);
  const double div = scale.first;
  const auto &unit = scale.second;
  double step = niceStep(yMaxBytes / div * 1.08);
  double yTop = std::max(step, std::ceil(yMaxBytes / div * 1.08 / step) * step);
  auto X = [&](double x) { return left + x / xMax * plotW; };
  auto Y = [&](double bytes) {
    return top + plotH - bytes / div / yTop * plotH;
  };

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
    << "font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int64_t evictions = 0;
  for (const RunTrace::Instant &e : trace.instants)
    evictions += e.kind == "evict";
  o << "<text x=\"" << left << "\" y=\"24\" font-size=\"16\" "
    << "font-weight=\"bold\">"
    << xmlEscape("Memory timeline: " +
                 (trace.model.empty() ? std::string("model") : trace.model))
    << "</text>\n"
    << "<text x=\"" << left << "\" y=\"42\" fill=\"#444\">"
    << xmlEscape("peak " + bytesText(trace.peakBytes) +
                 (trace.predictedPeakBytes >= 0
                      ? ", predicted with nothing evicted " +
                            bytesText(trace.predictedPeakBytes)
                      : std::string()) +
                 (trace.limitBytes > 0
                      ? ", limit " + bytesText(trace.limitBytes)
                      : std::string(", no limit")) +
                 ", " + std::to_string(evictions) + " evictions")
    << "</text>\n";
  // Axes and grid.
  o << "<g id=\"axes\" stroke=\"#ccc\" stroke-width=\"1\">\n";
  for (double v = 0; v <= yTop + step / 2; v += step)
    o << "<line x1=\"" << fmt(left) << "\" x2=\"" << fmt(left + plotW)
      << "\" y1=\"" << fmt(Y(v * div)) << "\" y2=\"" << fmt(Y(v * div))
      << "\"/>\n";
  o << "</g>\n<g id=\"ticks\" fill=\"#333\">\n";
  for (double v = 0; v <= yTop + step / 2; v += step) {
    char buf[32];
    std::snprintf(buf, sizeof buf, step < 1 ? "%.2f" : "%.0f", v);
    o << "<text x=\"" << fmt(left - 8) << "\" y=\"" << fmt(Y(v * div) + 4)
      << "\" text-anchor=\"end\">" << buf << "</text>\n";
  }
  double xStep = niceStep(xMax);
  for (double v = 0; v <= xMax; v += xStep)
    o << "<text x=\"" << fmt(X(v)) << "\" y=\"" << fmt(top + plotH + 18)
      << "\" text-anchor=\"middle\">" << static_cast<int64_t>(v) << "</text>\n";
  o << "</g>\n"
    << "<rect x=\"" << fmt(left) << "\" y=\"" << fmt(top) << "\" width=\""
    << fmt(plotW) << "\" height=\"" << fmt(plotH)
    << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << fmt(left + plotW / 2) << "\" y=\""
    << fmt(top + plotH + 42) << "\" text-anchor=\"middle\">"
    << (byPoint ? "program point (op in the memory model's order)"
                : "allocator event")
    << "</text>\n"
    << "<text transform=\"translate(24 " << fmt(top + plotH / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">live bytes (" << unit
    << ")</text>\n";
  // Evictions and regenerations: a marker each at its program point.
  o << "<g id=\"remat-events\">\n";
  for (const RunTrace::Instant &e : trace.instants) {
    // An evicted buffer is away from the op after its evict point; a
    // regenerated one is back before the op it is regenerated for.
    double x =
        byPoint
            ? X(static_cast<double>(e.point) + (e.kind == "regenerate" ? 0 : 1))
            : -1;
    if (!byPoint) {
      // The first sample at or after the event.
      auto it = std::lower_bound(
          samples.begin(), samples.end(), e.timeUs,
          [](const RunTrace::Sample &s, double t) { return s.timeUs < t; });
      x = X(static_cast<double>(it - samples.begin()));
    }
    std::string title = e.kind + " candidate " + std::to_string(e.candidate) +
                        " " + e.producer + ", " + bytesText(e.bytes) +
                        ", point " + std::to_string(e.point);
    if (e.kind == "evict" || e.kind == "offload") {
      o << "<line x1=\"" << fmt(x) << "\" x2=\"" << fmt(x) << "\" y1=\""
        << fmt(top) << "\" y2=\"" << fmt(top + plotH)
        << "\" stroke=\"#f5a623\" stroke-width=\"0.8\" opacity=\"0.6\"/>\n"
        << "<path class=\"" << e.kind << "-marker\" d=\"M" << fmt(x - 5) << " "
        << fmt(top - 10) << " L" << fmt(x + 5) << " " << fmt(top - 10) << " L"
        << fmt(x) << " " << fmt(top) << " Z\" fill=\""
        << (e.kind == "evict" ? "#e67e00" : "#8e44ad") << "\"><title>"
        << xmlEscape(title) << "</title></path>\n";
    } else {
      o << "<path class=\"regenerate-marker\" d=\"M" << fmt(x - 4) << " "
        << fmt(top + plotH + 8) << " L" << fmt(x + 4) << " "
        << fmt(top + plotH + 8) << " L" << fmt(x) << " " << fmt(top + plotH)
        << " Z\" fill=\"#2e8b57\"><title>" << xmlEscape(title)
        << "</title></path>\n";
    }
  }
  o << "</g>\n";
  // Predicted live bytes (nothing evicted): a step per program point.
  if (byPoint && !trace.predicted.empty()) {
    o << "<polyline id=\"predicted\" fill=\"none\" stroke=\"#1f77b4\" "
         "stroke-width=\"1.2\" stroke-dasharray=\"5 3\" points=\"";
    for (size_t i = 0; i < trace.predicted.size(); ++i) {
      double y = Y(static_cast<double>(trace.predicted[i]));
      o << fmt(X(static_cast<double>(i))) << "," << fmt(y) << " "
        << fmt(X(static_cast<double>(i + 1))) << "," << fmt(y) << " ";
    }
    o << "\"/>\n";
  }
  // Live bytes of the tracked allocator.
  o << "<polyline id=\"live\" fill=\"none\" stroke=\"#222\" "
       "stroke-width=\"1.4\" points=\""
    << fmt(X(0)) << "," << fmt(Y(0)) << " ";
  double prevY = Y(0);
  for (size_t k = 0; k < samples.size(); ++k) {
    double y = Y(static_cast<double>(samples[k].liveBytes));
    o << fmt(X(sx[k])) << "," << fmt(prevY) << " " << fmt(X(sx[k])) << ","
      << fmt(y) << " ";
    prevY = y;
  }
  o << fmt(X(xMax)) << "," << fmt(prevY) << "\"/>\n";
  // The limit.
  if (trace.limitBytes > 0) {
    double y = Y(static_cast<double>(trace.limitBytes));
    o << "<line id=\"limit\" x1=\"" << fmt(left) << "\" x2=\""
      << fmt(left + plotW) << "\" y1=\"" << fmt(y) << "\" y2=\"" << fmt(y)
      << "\" stroke=\"#d62728\" stroke-width=\"1.5\" "
         "stroke-dasharray=\"8 4\"/>\n"
      << "<text x=\"" << fmt(left + plotW - 6) << "\" y=\"" << fmt(y - 6)
      << "\" text-anchor=\"end\" fill=\"#d62728\">"
      << xmlEscape("limit " + bytesText(trace.limitBytes)) << "</text>\n";
  }
  // The peak, labelled with the buffers live there, largest first.
  double px = 0;
  if (!samples.empty()) {
    size_t k = 0;
    while (k + 1 < samples.size() && samples[k].liveBytes != trace.peakBytes)
      ++k;
    px = X(sx[k]);
  }
  double py = Y(static_cast<double>(trace.peakBytes));
  o << "<circle id=\"peak\" cx=\"" << fmt(px) << "\" cy=\"" << fmt(py)
    << "\" r=\"5\" fill=\"#d62728\"/>\n";
  std::vector<std::string> lines;
  lines.push_back("peak " + bytesText(trace.peakBytes) + " at " +
                  (byPoint ? "program point " + std::to_string(trace.peakPoint)
                           : std::string("the marked event")) +
                  ", " + std::to_string(trace.peakTensors.size()) +
                  " buffers live:");
  const size_t kShown = 8;
  int64_t rest = 0;
  for (size_t i = 0; i < trace.peakTensors.size(); ++i) {
    const RunTrace::LiveTensor &t = trace.peakTensors[i];
    if (i < kShown)
      lines.push_back(bytesText(t.bytes) + "  " + t.name);
    else
      rest += t.bytes;
  }
  if (trace.peakTensors.size() > kShown)
    lines.push_back("+" + std::to_string(trace.peakTensors.size() - kShown) +
                    " more, " + bytesText(rest));
  // The label on the side of the peak with more room, below the top.
  const double lineH = 15, boxW = 420;
  double boxH = lineH * lines.size() + 10;
  bool toLeft = px > left + plotW / 2;
  double bx = toLeft ? std::max(left + 4, px - boxW - 14) : px + 14;
  bx = std::min(bx, left + plotW - boxW - 4);
  double by = std::min(std::max(top + 16, py + 10), top + plotH - boxH - 4);
  o << "<line x1=\"" << fmt(px) << "\" y1=\"" << fmt(py) << "\" x2=\""
    << fmt(toLeft ? bx + boxW : bx) << "\" y2=\"" << fmt(by + 6)
    << "\" stroke=\"#d62728\" stroke-width=\"0.8\"/>\n"
    << "<rect x=\"" << fmt(bx) << "\" y=\"" << fmt(by) << "\" width=\""
    << fmt(boxW) << "\" height=\"" << fmt(boxH)
    << "\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#d62728\"/>\n"
    << "<text id=\"peak-label\" x=\"" << fmt(bx + 6) << "\" y=\""
    << fmt(by + 15) << "\" font-size=\"11.5\">";
  for (size_t i = 0; i < lines.size(); ++i)
    o << "<tspan x=\"" << fmt(bx + 6) << "\" dy=\"" << (i == 0 ? 0 : lineH)
      << "\"" << (i == 0 ? " font-weight=\"bold\"" : "") << ">"
      << xmlEscape(lines[i]) << "</tspan>";
  o << "</text>\n";
  // Legend.
  double lx = left + 8, ly = top + plotH - 70;
  if (!toLeft && px < left + plotW / 2)
    lx = left + plotW - 250;
  o << "<g id=\"legend\" font-size=\"11.5\">\n"
    << "<rect x=\"" << fmt(lx) << "\" y=\"" << fmt(ly) << "\" width=\"240\" "
    << "height=\"64\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999\"/>\n"
    << "<line x1=\"" << fmt(lx + 8) << "\" x2=\"" << fmt(lx + 36) << "\" y1=\""
    << fmt(ly + 14) << "\" y2=\"" << fmt(ly + 14)
    << "\" stroke=\"#222\" stroke-width=\"1.4\"/><text x=\"" << fmt(lx + 42)
    << "\" y=\"" << fmt(ly + 18) << "\">live bytes (allocator)</text>\n"
    << "<line x1=\"" << fmt(lx + 8) << "\" x2=\"" << fmt(lx + 36) << "\" y1=\""
    << fmt(ly + 32) << "\" y2=\"" << fmt(ly + 32)
    << "\" stroke=\"#1f77b4\" stroke-dasharray=\"5 3\"/><text x=\""
    << fmt(lx + 42) << "\" y=\"" << fmt(ly + 36)
    << "\">predicted, nothing evicted</text>\n"
    << "<path d=\"M" << fmt(lx + 17) << " " << fmt(ly + 44) << " L"
    << fmt(lx + 27) << " " << fmt(ly + 44) << " L" << fmt(lx + 22) << " "
    << fmt(ly + 54) << " Z\" fill=\"#e67e00\"/><text x=\"" << fmt(lx + 42)
    << "\" y=\"" << fmt(ly + 54) << "\">eviction (regeneration: green)</text>\n"
    << "</g>\n</svg>\n";
  return o.str();
}

namespace {

Status writeText(const std::string &text, const std::string &path,
                 const char *what) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return Status::invalidArgument(std::string(what) + ": cannot open '" +
                                   path + "' for writing");
  f << text;
  f.close();
  if (!f)
    return Status::invalidArgument(std::string(what) + ": cannot write '" +
                                   path + "'");
  return Status::ok();
}

} // namespace

Status writeChromeTrace(const RunTrace &trace, const std::string &path) {
  return writeText(chromeTraceJson(trace), path, "trace");
}

Status writeMemoryPlot(const RunTrace &trace, const std::string &path) {
  return writeText(memoryPlotSvg(trace), path, "memory plot");
}

} // namespace disc
