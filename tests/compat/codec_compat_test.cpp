// Byte-compatibility proof of the generated codec.
//
// Reads samples made by independent implementations (franz-go's kmsg, and Apache Kafka's own
// schema classes from kafka-clients 4.3.1; see scripts/gen-vectors.sh), decodes each with weir's
// codec and encodes it again, and requires the exact same bytes. Every (API, version) pair the
// codec defines must be covered, request and response both.
//
// Input: the directory in $WEIR_VECTORS_DIR holding *.txt files with lines
//   req|resp <api_key> <version> <hex>      or      data <MessageName> <version> <hex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "protocol/gen/api_registry.h"
#include "protocol/gen/record_registry.h"

namespace {

using weir::protocol::Bytes;

std::optional<Bytes> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  Bytes out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + i, "%2x", &v) != 1) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(v));
  }
  return out;
}

std::string to_hex(const Bytes& b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s.push_back(digits[c >> 4]);
    s.push_back(digits[c & 15]);
  }
  return s;
}

struct Tally {
  int samples = 0;
  int failures = 0;
};

TEST(CodecCompat, EverySampleReencodesByteForByteAndEveryVersionIsCovered) {
  const char* dir = std::getenv("WEIR_VECTORS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "WEIR_VECTORS_DIR not set (run via `make compat`)";
  std::map<std::tuple<bool, int, int>, Tally> api_tally;  // (is_request, key, version)
  std::map<std::pair<std::string, int>, Tally> record_tally;
  std::map<std::string, int> per_source;
  int total = 0;
  int shown = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string kind, key, hex;
      int version = 0;
      ls >> kind >> key >> version >> hex;
      auto body = from_hex(hex);
      ASSERT_TRUE(body.has_value()) << "bad hex in " << entry.path() << ": " << line.substr(0, 80);
      std::optional<Bytes> again;
      Tally* t = nullptr;
      if (kind == "data") {
        again = weir::protocol::reencode_record(key, static_cast<std::int16_t>(version), *body);
        t = &record_tally[{key, version}];
      } else {
        const bool is_req = kind == "req";
        const int api_key = std::stoi(key);
        again = weir::protocol::reencode(static_cast<std::int16_t>(api_key), is_req,
                                         static_cast<std::int16_t>(version), *body);
        t = &api_tally[{is_req, api_key, version}];
      }
      ++t->samples;
      ++total;
      ++per_source[entry.path().filename().string()];
      if (!again || *again != *body) {
        ++t->failures;
        if (shown++ < 20) {
          ADD_FAILURE() << entry.path().filename() << ": " << kind << " " << key << " v" << version
                        << (again ? " re-encoded differently" : " did not decode") << "\n  in:  " << hex
                        << "\n  out: " << (again ? to_hex(*again) : std::string("-"));
        }
      }
    }
  }
  ASSERT_GT(total, 0) << "no samples found in " << dir;

  int proven_pairs = 0;
  int missing = 0;
  for (const auto& d : weir::protocol::kApiDescriptors) {
    const int lo = d.key == 0 ? 3 : d.min_version;  // Produce v0-2 are advertised but not defined
    for (int v = lo; v <= d.max_version; ++v) {
      bool both = true;
      for (bool is_req : {true, false}) {
        auto it = api_tally.find({is_req, d.key, v});
        if (it == api_tally.end()) {
          both = false;
          ++missing;
          ADD_FAILURE() << "no samples for " << d.name << (is_req ? " request" : " response") << " v" << v;
        } else if (it->second.failures) {
          both = false;
        }
      }
      if (both) ++proven_pairs;
    }
  }
  int records_ok = 0;
  for (const auto& [k, t] : record_tally) records_ok += t.failures == 0;
  std::printf("codec compat: %d samples", total);
  for (const auto& [src, n] : per_source) std::printf(", %s=%d", src.c_str(), n);
  std::printf("\ncodec compat: %d (API, version) pairs proven byte-for-byte (requests and responses), "
              "%d missing; %zu internal record (name, version) pairs, %d clean\n",
              proven_pairs, missing, record_tally.size(), records_ok);
}

}  // namespace
