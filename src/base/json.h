// A JSON text built in order: objects, arrays, keys and scalar values, with the commas placed for
// the caller. Strings are escaped as RFC 8259 requires (quote, backslash, control characters);
// other bytes, UTF-8 included, pass through. For tools that print JSON (the CLI, test probes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::int32_t v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(bool v);
  JsonWriter& null();
  // The value, or null when there is none.
  template <class T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }
  // An array of integers.
  JsonWriter& ints(const std::vector<std::int32_t>& v);
  [[nodiscard]] const std::string& str() const { return out_; }

  // s as a JSON string literal, quotes included.
  [[nodiscard]] static std::string quote(std::string_view s);

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace weir
