#include "config/properties.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

namespace weir::config {
namespace {

bool is_blank(char16_t c) { return c == ' ' || c == '\t' || c == '\f'; }

// java.util.Properties.LineReader: the next logical line (continuations joined), or false at
// the end of input.
class LineReader {
 public:
  explicit LineReader(std::string_view bytes) : in_(bytes) {}

  bool read(std::u16string& line) {
    line.clear();
    bool skip_blank = true;
    bool appended_line_begin = false;
    bool preceding_backslash = false;
    while (true) {
      if (pos_ >= in_.size()) {
        if (line.empty()) return false;
        if (preceding_backslash) line.pop_back();
        return true;
      }
      const char16_t c = static_cast<unsigned char>(in_[pos_++]);  // ISO-8859-1
      if (skip_blank) {
        if (is_blank(c)) continue;
        if (!appended_line_begin && (c == '\r' || c == '\n')) continue;
        skip_blank = false;
        appended_line_begin = false;
      }
      if (line.empty() && (c == '#' || c == '!')) {
        // A comment: skip to the end of the natural line.
        while (pos_ < in_.size() && in_[pos_] != '\n' && in_[pos_] != '\r') ++pos_;
        skip_blank = true;
        continue;
      }
      if (c != '\n' && c != '\r') {
        line.push_back(c);
        preceding_backslash = c == '\\' ? !preceding_backslash : false;
        continue;
      }
      // End of a natural line.
      if (line.empty()) {
        skip_blank = true;
        continue;
      }
      if (!preceding_backslash) return true;
      line.pop_back();  // the continuation backslash
      skip_blank = true;
      appended_line_begin = true;
      preceding_backslash = false;
      if (c == '\r' && pos_ < in_.size() && in_[pos_] == '\n') ++pos_;
    }
  }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
};

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// UTF-16 to UTF-8 as String.getBytes(UTF_8): pairs joined, lone surrogates become '?'.
std::string to_utf8(const std::u16string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char16_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      append_utf8(out, 0x10000 + ((static_cast<char32_t>(c) - 0xD800) << 10) + (s[i + 1] - 0xDC00));
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      out += '?';
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

int hex_digit(char16_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Properties.loadConvert.
Result<std::string, std::string> unescape(std::u16string_view in) {
  std::u16string out;
  std::size_t i = 0;
  while (i < in.size()) {
    char16_t c = in[i++];
    if (c != '\\' || i >= in.size()) {
      out.push_back(c);
      continue;
    }
    c = in[i++];
    if (c == 'u') {
      if (in.size() - i < 4) return unexpected(std::string("Malformed \\uxxxx encoding."));
      char16_t v = 0;
      for (int k = 0; k < 4; ++k) {
        const int d = hex_digit(in[i++]);
        if (d < 0) return unexpected(std::string("Malformed \\uxxxx encoding."));
        v = static_cast<char16_t>((v << 4) | d);
      }
      out.push_back(v);
    } else if (c == 't') {
      out.push_back('\t');
    } else if (c == 'r') {
      out.push_back('\r');
    } else if (c == 'n') {
      out.push_back('\n');
    } else if (c == 'f') {
      out.push_back('\f');
    } else {
      out.push_back(c);
    }
  }
  return to_utf8(out);
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>, std::string> parse_properties(std::string_view bytes) {
  std::vector<std::pair<std::string, std::string>> out;
  LineReader reader(bytes);
  std::u16string line;
  while (reader.read(line)) {
    std::size_t key_len = 0;
    std::size_t value_start = line.size();
    bool has_sep = false;
    bool preceding_backslash = false;
    while (key_len < line.size()) {
      const char16_t c = line[key_len];
      if ((c == '=' || c == ':') && !preceding_backslash) {
        value_start = key_len + 1;
        has_sep = true;
        break;
      }
      if (is_blank(c) && !preceding_backslash) {
        value_start = key_len + 1;
        break;
      }
      preceding_backslash = c == '\\' ? !preceding_backslash : false;
      ++key_len;
    }
    while (value_start < line.size()) {
      const char16_t c = line[value_start];
      if (!is_blank(c)) {
        if (!has_sep && (c == '=' || c == ':')) {
          has_sep = true;
        } else {
          break;
        }
      }
      ++value_start;
    }
    const std::u16string_view view(line);
    auto key = unescape(view.substr(0, key_len));
    if (!key) return unexpected(key.error());
    auto value = unescape(view.substr(value_start));
    if (!value) return unexpected(value.error());
    out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>, std::string> load_properties_file(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    return unexpected("cannot read config file " + path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return unexpected("cannot read config file " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected("cannot read config file " + path + ": " + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return unexpected("cannot read config file " + path + ": read failed");
  auto entries = parse_properties(bytes);
  if (!entries) return unexpected("config file " + path + ": " + entries.error());
  return entries;
}

}  // namespace weir::config
