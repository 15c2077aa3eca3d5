#include "config/java.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/assert.h"

namespace weir::config::java {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_integer(std::string_view s, int bits) noexcept {
  WEIR_ASSERT(bits == 16 || bits == 32 || bits == 64);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  // Accumulate negatively so that the minimum value parses.
  const std::int64_t min = bits == 64   ? std::numeric_limits<std::int64_t>::min()
                           : bits == 32 ? std::numeric_limits<std::int32_t>::min()
                                        : std::numeric_limits<std::int16_t>::min();
  std::int64_t acc = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    if (acc < (min + digit) / 10) return std::nullopt;
    acc = acc * 10 - digit;
  }
  if (negative) return acc;
  if (acc == min) return std::nullopt;
  return -acc;
}

std::optional<double> parse_double(std::string_view s) noexcept {
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  double value = 0;
  if (s == "NaN") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity") {
    value = std::numeric_limits<double>::infinity();
  } else {
    if (!s.empty() && std::string_view("fFdD").find(s.back()) != std::string_view::npos) {
      s.remove_suffix(1);
    }
    // digits [. digits] | . digits, then an optional exponent.
    std::size_t i = 0, int_digits = 0, frac_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
    }
    if (int_digits + frac_digits == 0) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      std::size_t exp_digits = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
      if (exp_digits == 0) return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    const std::string text(s);  // from_chars wants a leading digit; "." forms are fine
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Java rounds to infinity or zero rather than failing.
      const auto e = text.find_first_of("eE");
      const bool big = e != std::string::npos && text[e + 1] != '-';
      value = big ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (ec != std::errc() || ptr != text.data() + text.size()) {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

std::string double_to_string(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Java's layout.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const auto e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exponent);
  std::string out = d < 0 ? "-" : "";
  const double a = std::fabs(d);
  if (a >= 1e-3 && a < 1e7) {
    if (exponent >= 0) {
      const auto int_len = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      std::string frac = digits.substr(int_len);
      out += digits.substr(0, int_len) + "." + (frac.empty() ? "0" : frac);
    } else {
      out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    }
  } else {
    std::string frac = digits.substr(1);
    out += digits.substr(0, 1) + "." + (frac.empty() ? "0" : frac) + "E" + std::to_string(exponent);
  }
  return out;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    while (!item.empty() && is_space(item.front())) item.remove_prefix(1);
    while (!item.empty() && is_space(item.back())) item.remove_suffix(1);
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<bool> parse_boolean(std::string_view trimmed) noexcept {
  auto eq = [&](std::string_view word) {
    return std::ranges::equal(
        trimmed, word, [](char a, char b) { return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b; });
  };
  if (eq("true")) return true;
  if (eq("false")) return false;
  return std::nullopt;
}

}  // namespace weir::config::java
