// The Prometheus text exposition format (version 0.0.4): families with HELP and TYPE lines, then
// their samples, one per line:
//
//   # HELP weir_requests_total Requests received.
//   # TYPE weir_requests_total counter
//   weir_requests_total{api="Produce"} 12
//
// Label values are escaped (\\, \", \n); a family is declared once, before its samples.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "metrics/histogram.h"

namespace weir::metrics {

using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

enum class Type { kCounter, kGauge, kHistogram };

class Exposition {
 public:
  void family(std::string_view name, Type type, std::string_view help);
  void sample(std::string_view name, Labels labels, std::uint64_t value);
  void sample(std::string_view name, Labels labels, std::int64_t value);
  void sample(std::string_view name, Labels labels, double value);
  // name_bucket{...,le="..."} cumulative counts, name_sum and name_count. Bounds and sum are
  // multiplied by `scale` (e.g. 1e-6 to turn microseconds into seconds).
  void histogram(std::string_view name, Labels labels, const HistogramSnapshot& h, double scale);

  [[nodiscard]] const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void start(std::string_view name, Labels labels, std::string_view extra_key = {},
             std::string_view extra_value = {});

  std::string out_;
};

// Appends `value` to out with Prometheus' label-value escaping.
void append_label_value(std::string& out, std::string_view value);

}  // namespace weir::metrics
