#include "metrics/exposition.h"

#include <cmath>

#include <fmt/format.h>

namespace weir::metrics {

namespace {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::kCounter: return "counter";
    case Type::kGauge: return "gauge";
    case Type::kHistogram: return "histogram";
  }
  return "untyped";
}

void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

}  // namespace

void append_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void Exposition::family(std::string_view name, Type type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  for (char c : help) {  // HELP escapes only backslash and newline
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name(type);
  out_ += '\n';
}

void Exposition::start(std::string_view name, Labels labels, std::string_view extra_key,
                       std::string_view extra_value) {
  out_ += name;
  if (labels.size() == 0 && extra_key.empty()) {
    out_ += ' ';
    return;
  }
  out_ += '{';
  bool first = true;
  auto label = [&](std::string_view k, std::string_view v) {
    if (!first) out_ += ',';
    first = false;
    out_ += k;
    out_ += "=\"";
    append_label_value(out_, v);
    out_ += '"';
  };
  for (const auto& [k, v] : labels) label(k, v);
  if (!extra_key.empty()) label(extra_key, extra_value);
  out_ += "} ";
}

void Exposition::sample(std::string_view name, Labels labels, std::uint64_t value) {
  start(name, labels);
  fmt::format_to(std::back_inserter(out_), "{}\n", value);
}

void Exposition::sample(std::string_view name, Labels labels, std::int64_t value) {
  start(name, labels);
  fmt::format_to(std::back_inserter(out_), "{}\n", value);
}

void Exposition::sample(std::string_view name, Labels labels, double value) {
  start(name, labels);
  append_double(out_, value);
  out_ += '\n';
}

void Exposition::histogram(std::string_view name, Labels labels, const HistogramSnapshot& h, double scale) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kHistogramBounds.size(); ++i) {
    cumulative += h.counts[i];
    std::string le;
    append_double(le, static_cast<double>(kHistogramBounds[i]) * scale);
    start(bucket, labels, "le", le);
    fmt::format_to(std::back_inserter(out_), "{}\n", cumulative);
  }
  start(bucket, labels, "le", "+Inf");
  fmt::format_to(std::back_inserter(out_), "{}\n", h.count);
  start(std::string(name) + "_sum", labels);
  append_double(out_, static_cast<double>(h.sum) * scale);
  out_ += '\n';
  start(std::string(name) + "_count", labels);
  fmt::format_to(std::back_inserter(out_), "{}\n", h.count);
}

}  // namespace weir::metrics
