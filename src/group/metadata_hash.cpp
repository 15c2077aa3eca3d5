#include "group/metadata_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

namespace weir::group {

namespace {

constexpr std::uint8_t kTopicHashMagic = 0;
constexpr char16_t kReplacement = 0xFFFD;

// The code point of the UTF-8 sequence at s[i] and its length, or nullopt when malformed
// (truncated, overlong, a surrogate, past U+10FFFF).
std::optional<std::pair<char32_t, std::size_t>> decode_utf8(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = b(0);
  if (lead < 0x80) return std::pair{char32_t{lead}, std::size_t{1}};
  // Sequence length, the lead byte's payload bits, and the least code point of that length.
  struct Form {
    std::size_t n;
    unsigned char mask;
    char32_t min;
  };
  Form f{};
  if ((lead & 0xE0) == 0xC0) {
    f = {2, 0x1F, 0x80};
  } else if ((lead & 0xF0) == 0xE0) {
    f = {3, 0x0F, 0x800};
  } else if ((lead & 0xF8) == 0xF0) {
    f = {4, 0x07, 0x10000};
  } else {
    return std::nullopt;
  }
  const std::size_t n = f.n;
  char32_t cp = lead & f.mask;
  if (i + n > s.size()) return std::nullopt;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < f.min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  return std::pair{cp, n};
}

// What hash4j's HashStream64 puts, gathered little-endian and hashed at the end.
class HashStream {
 public:
  HashStream& put_byte(std::uint8_t v) {
    bytes_.push_back(v);
    return *this;
  }
  HashStream& put_int(std::int32_t v) { return put_le(static_cast<std::uint32_t>(v), 4); }
  HashStream& put_long(std::int64_t v) { return put_le(static_cast<std::uint64_t>(v), 8); }
  // hash4j's putString: the UTF-16 code units, then their count.
  HashStream& put_string(std::string_view utf8) {
    const std::u16string units = java_utf16(utf8);
    for (const char16_t u : units) put_le(u, 2);
    return put_int(static_cast<std::int32_t>(units.size()));
  }
  [[nodiscard]] std::int64_t get_as_long() const {
    return static_cast<std::int64_t>(XXH3_64bits(bytes_.data(), bytes_.size()));
  }

 private:
  HashStream& put_le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }

  std::vector<std::uint8_t> bytes_;
};

}  // namespace

std::u16string java_utf16(std::string_view utf8) {
  std::u16string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    const auto cp = decode_utf8(utf8, i);
    if (!cp) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    const auto [c, n] = *cp;
    if (c < 0x10000) {
      out.push_back(static_cast<char16_t>(c));
    } else {
      out.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
    }
    i += n;
  }
  return out;
}

bool java_string_less(std::string_view a, std::string_view b) {
  // ASCII byte order is UTF-16 order; anything else goes through UTF-16 (byte order is code
  // point order, which differs from it for supplementary characters and malformed bytes).
  const auto ascii = [](std::string_view s) {
    return std::ranges::all_of(s, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  };
  if (ascii(a) && ascii(b)) return a < b;
  return java_utf16(a) < java_utf16(b);
}

std::int64_t topic_hash(const TopicImage::Topic& topic) {
  HashStream h;
  h.put_byte(kTopicHashMagic)
      .put_long(static_cast<std::int64_t>(topic.id.msb()))
      .put_long(static_cast<std::int64_t>(topic.id.lsb()))
      .put_string(topic.name)
      .put_int(topic.partition_count);
  for (std::int32_t p = 0; p < topic.partition_count; ++p) {
    h.put_int(p);
    if (static_cast<std::size_t>(p) >= topic.partition_racks.size()) continue;
    std::vector<std::string> racks = topic.partition_racks[static_cast<std::size_t>(p)];
    std::ranges::sort(racks, java_string_less);
    for (const std::string& rack : racks) {
      h.put_int(static_cast<std::int32_t>(java_utf16(rack).size())).put_string(rack);
    }
  }
  return h.get_as_long();
}

std::int64_t group_hash(const std::map<std::string, std::int64_t>& topic_hashes) {
  if (topic_hashes.empty()) return 0;
  std::vector<std::pair<std::string_view, std::int64_t>> sorted(topic_hashes.begin(), topic_hashes.end());
  std::ranges::sort(sorted, [](const auto& a, const auto& b) { return java_string_less(a.first, b.first); });
  HashStream h;
  for (const auto& [name, hash] : sorted) h.put_long(hash);
  return h.get_as_long();
}

std::int64_t TopicHashCache::hash(const TopicImage::Topic& topic) {
  auto it = entries_.find(topic.name);
  if (it != entries_.end() && it->second.topic == topic) return it->second.hash;
  const std::int64_t h = topic_hash(topic);
  entries_.insert_or_assign(topic.name, Entry{.topic = topic, .hash = h});
  return h;
}

void TopicHashCache::retain(const TopicImage& topics) {
  std::erase_if(entries_, [&](const auto& e) { return topics.by_name(e.first) == nullptr; });
}

std::int64_t metadata_hash(const std::set<std::string>& names, const TopicImage& topics, TopicHashCache& cache) {
  std::map<std::string, std::int64_t> hashes;
  for (const std::string& name : names) {
    if (const TopicImage::Topic* t = topics.by_name(name)) hashes.emplace(name, cache.hash(*t));
  }
  return group_hash(hashes);
}

}  // namespace weir::group
