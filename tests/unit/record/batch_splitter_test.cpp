#include "protocol/record/batch_splitter.h"

#include <gtest/gtest.h>

#include "protocol/record/record_batch_builder.h"
#include "test_util.h"

namespace weir::record {
namespace {

std::vector<std::byte> batch_with(int records, std::int64_t base_offset) {
  RecordBatchBuilder builder({.base_offset = base_offset});
  for (int i = 0; i < records; ++i) builder.append(100 + i, std::nullopt, as_bytes("value"));
  return builder.build();
}

std::vector<std::byte> concatenation() {
  std::vector<std::byte> out;
  testing::append(out, batch_with(1, 0));
  testing::append(out, batch_with(3, 1));
  testing::append(out, batch_with(2, 4));
  return out;
}

std::vector<std::int64_t> base_offsets(BatchSplitter& splitter) {
  std::vector<std::int64_t> out;
  for (;;) {
    auto next = splitter.next();
    EXPECT_TRUE(next.has_value());
    if (!next || !*next) return out;
    EXPECT_TRUE((*next)->validate().has_value());
    out.push_back((*next)->base_offset());
  }
}

TEST(BatchSplitterTest, SplitsConcatenatedBatches) {
  const auto bytes = concatenation();
  BatchSplitter splitter(bytes);
  EXPECT_EQ(base_offsets(splitter), (std::vector<std::int64_t>{0, 1, 4}));
  EXPECT_EQ(splitter.consumed_bytes(), bytes.size());
  EXPECT_TRUE(splitter.remaining().empty());
}

TEST(BatchSplitterTest, EmptyBufferHasNoBatches) {
  BatchSplitter splitter({});
  auto next = splitter.next();
  ASSERT_TRUE(next.has_value());
  EXPECT_FALSE(next->has_value());
}

TEST(BatchSplitterTest, StopsCleanlyAtAPartialTrailingBatch) {
  const auto bytes = concatenation();
  const std::size_t first_two = batch_with(1, 0).size() + batch_with(3, 1).size();
  // Cut the last batch at every possible point, including inside its 12-byte framing.
  for (std::size_t cut = first_two; cut < bytes.size(); ++cut) {
    BatchSplitter splitter(ByteSpan(bytes).first(cut));
    EXPECT_EQ(base_offsets(splitter), (std::vector<std::int64_t>{0, 1})) << cut;
    EXPECT_EQ(splitter.consumed_bytes(), first_two);
    EXPECT_EQ(splitter.remaining().size(), cut - first_two);
  }
}

TEST(BatchSplitterTest, ImpossibleBatchLengthStopsWithAnError) {
  auto bytes = concatenation();
  const std::size_t second = batch_with(1, 0).size();
  store_be<std::int32_t>(bytes.data() + second + kBatchLengthOffset, 3);
  BatchSplitter splitter(bytes);
  auto first = splitter.next();
  ASSERT_TRUE(first.has_value() && first->has_value());
  EXPECT_EQ(splitter.next().error(), Errc::length_mismatch);
  EXPECT_EQ(splitter.next().error(), Errc::length_mismatch);
  EXPECT_EQ(splitter.consumed_bytes(), second);
}

TEST(BatchSplitterTest, SplitsByFramingEvenWhenContentsAreCorrupt) {
  auto bytes = concatenation();
  bytes[kMagicOffset] = std::byte{9};
  BatchSplitter splitter(bytes);
  auto first = splitter.next();
  ASSERT_TRUE(first.has_value() && first->has_value());
  EXPECT_EQ((*first)->validate().error(), Errc::bad_magic);
  auto second = splitter.next();
  ASSERT_TRUE(second.has_value() && second->has_value());
  EXPECT_EQ((*second)->base_offset(), 1);
}

}  // namespace
}  // namespace weir::record
