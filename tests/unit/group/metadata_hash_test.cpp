// weir's metadata hash (KIP-1101) against the hashes Kafka 4.3.1's own Utils.computeTopicHash and
// ModernGroup.computeMetadataHash give for the table tests/data/metadata_hash_cases.txt
// (tests/data/metadata_hash_golden.txt, made by tests/java/HashVectors.java;
// tests/scenario/test_group_metadata_hash.py checks that it is current). The racks of a
// partition are built as Kafka's KRaftCoordinatorMetadataImage.partitionRacks gives them: one per
// replica whose broker is registered with a rack, in replica order.
#include "group/metadata_hash.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace weir::group {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

Uuid hex_uuid(const std::string& text) {
  const auto colon = text.find(':');
  return Uuid(std::stoull(text.substr(0, colon), nullptr, 16), std::stoull(text.substr(colon + 1), nullptr, 16));
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The table run through weir's hashes, printed as HashVectors prints Kafka's.
std::string run_cases(const std::string& cases) {
  std::map<std::int32_t, std::optional<std::string>> brokers;  // id -> rack
  TopicImage image;
  std::vector<std::string> topic_order;
  TopicHashCache cache;
  std::string out;
  bool topics_printed = false;
  std::istringstream in(cases);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> w;
    std::istringstream words(line);
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w[0] == "broker") {
      brokers[std::stoi(w[1])] = w.size() > 2 ? std::optional<std::string>(w[2]) : std::nullopt;
    } else if (w[0] == "topic") {
      const std::int32_t partitions = std::stoi(w[3]);
      std::vector<std::vector<std::string>> racks(static_cast<std::size_t>(partitions));
      if (w.size() > 4) {
        const auto per_partition = split(w[4], '/');
        for (std::size_t p = 0; p < per_partition.size() && p < racks.size(); ++p) {
          for (const std::string& replica : split(per_partition[p], ',')) {
            auto b = brokers.find(std::stoi(replica));
            if (b != brokers.end() && b->second) racks[p].push_back(*b->second);
          }
        }
      }
      image.add_topic(w[1], hex_uuid(w[2]), partitions, std::move(racks));
      topic_order.push_back(w[1]);
    } else if (w[0] == "group") {
      if (!topics_printed) {
        for (const std::string& name : topic_order) {
          out += "topic " + name + " " + std::to_string(topic_hash(*image.by_name(name))) + "\n";
        }
        topics_printed = true;
      }
      std::set<std::string> names;
      if (w[1] != "-") {
        for (const std::string& n : split(w[1], ',')) names.insert(n);
      }
      out += "group " + w[1] + " " + std::to_string(metadata_hash(names, image, cache)) + "\n";
    } else {
      throw std::runtime_error("unknown line: " + line);
    }
  }
  return out;
}

std::string without_comments(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') out += line + "\n";
  }
  return out;
}

TEST(MetadataHashGolden, TopicAndGroupHashesAreKafkasForEveryCase) {
  const std::string dir = WEIR_GROUP_TEST_DATA;
  const std::string golden = without_comments(read(dir + "/metadata_hash_golden.txt"));
  ASSERT_FALSE(golden.empty());
  const std::string made = run_cases(read(dir + "/metadata_hash_cases.txt"));
  const auto want = split(golden, '\n');
  const auto got = split(made, '\n');
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "line " << i;
}

TEST(MetadataHash, NoSubscribedTopicInTheImageHashesToZero) {
  TopicImage image;
  image.add_topic("orders", Uuid(1, 2), 3);
  TopicHashCache cache;
  EXPECT_EQ(metadata_hash({}, image, cache), 0);
  EXPECT_EQ(metadata_hash({"missing"}, image, cache), 0);
  EXPECT_NE(metadata_hash({"orders"}, image, cache), 0);
  EXPECT_EQ(metadata_hash({"orders", "missing"}, image, cache), metadata_hash({"orders"}, image, cache));
}

TEST(MetadataHash, JavaOrderPutsSupplementaryCharactersBeforeTheEndOfThePlane) {
  // U+1F600 is the surrogates D83D DE00 in UTF-16, below U+FF21; its UTF-8 bytes sort above.
  const std::string emoji = "\xF0\x9F\x98\x80";
  const std::string fullwidth_a = "\xEF\xBC\xA1";
  EXPECT_TRUE(java_string_less(emoji, fullwidth_a));
  EXPECT_FALSE(java_string_less(fullwidth_a, emoji));
  EXPECT_GT(emoji, fullwidth_a);
  EXPECT_TRUE(java_string_less("a", "b"));
  EXPECT_TRUE(java_string_less("a", "ab"));
  EXPECT_FALSE(java_string_less("ab", "ab"));
}

TEST(MetadataHash, Utf8BecomesUtf16CodeUnitsAndMalformedBytesTheReplacementCharacter) {
  EXPECT_EQ(java_utf16("a\xC3\xBC"), std::u16string(u"a\u00FC"));
  EXPECT_EQ(java_utf16("\xF0\x9F\x98\x80"), std::u16string(u"\xD83D\xDE00"));
  EXPECT_EQ(java_utf16("\xFF"
                       "a"),
            std::u16string(u"\uFFFDa"));
  EXPECT_EQ(java_utf16("\xC3"), std::u16string(u"\uFFFD"));                      // truncated
  EXPECT_EQ(java_utf16("\xC0\xAF"), std::u16string(u"\uFFFD\uFFFD"));            // overlong
  EXPECT_EQ(java_utf16("\xED\xA0\x80"), std::u16string(u"\uFFFD\uFFFD\uFFFD"));  // a surrogate
}

TEST(MetadataHash, TheCachedTopicHashFollowsTheTopicsChanges) {
  TopicImage::Topic t{Uuid(7, 8), "orders", 3, {}};
  TopicHashCache cache;
  const std::int64_t three = cache.hash(t);
  EXPECT_EQ(three, topic_hash(t));
  t.partition_count = 4;
  EXPECT_EQ(cache.hash(t), topic_hash(t));
  EXPECT_NE(cache.hash(t), three);
  t.partition_racks = {{"b", "a"}};
  const std::int64_t racked = cache.hash(t);
  EXPECT_EQ(racked, topic_hash(t));
  EXPECT_NE(racked, topic_hash(TopicImage::Topic{Uuid(7, 8), "orders", 4, {}}));
  // Racks are sorted: the replicas' order does not count.
  EXPECT_EQ(racked, topic_hash(TopicImage::Topic{Uuid(7, 8), "orders", 4, {{"a", "b"}}}));
  t.id = Uuid(7, 9);
  EXPECT_NE(cache.hash(t), racked);
  EXPECT_EQ(cache.size(), 1u);

  TopicImage image;
  image.add_topic("payments", Uuid(1, 1), 1);
  cache.retain(image);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace weir::group
