// Random sequences of append / roll / read / truncate / delete-records / retention / reopen,
// checked against a simple in-memory model of the log: the list of batches as appended.
#include <gtest/gtest.h>

#include <random>

#include "storage/partition_log.h"
#include "test_util.h"

namespace weir::storage {
namespace {

using testing::make_batch;
using testing::TempDir;

struct ModelBatch {
  std::int64_t base_offset;
  std::int64_t last_offset;
  std::vector<std::byte> bytes;
};

struct Model {
  std::vector<ModelBatch> batches;
  std::int64_t log_start = 0;
  std::int64_t log_end = 0;

  // What read(offset, max_bytes, max_offset, min_one) must return.
  std::vector<const ModelBatch*> read(std::int64_t offset, std::int64_t max_bytes, std::int64_t max_offset,
                                      bool min_one) const {
    std::vector<const ModelBatch*> out;
    if (offset >= log_end || offset >= max_offset) return out;
    std::int64_t total = 0;
    for (const ModelBatch& b : batches) {
      if (b.last_offset < offset) continue;
      if (b.base_offset >= max_offset) break;
      const auto size = static_cast<std::int64_t>(b.bytes.size());
      if (total + size > max_bytes) {
        if (out.empty() && min_one) out.push_back(&b);
        break;
      }
      total += size;
      out.push_back(&b);
    }
    return out;
  }
};

class PropertyTest : public ::testing::TestWithParam<std::uint32_t> {
 protected:
  TempDir tmp;
  PosixFileSystem fs;
  ManualClock clock;
  LogConfig config;
  std::unique_ptr<PartitionLog> log;
  Model model;
  std::mt19937 rng{GetParam()};

  std::filesystem::path dir() const { return tmp.path() / "prop-0"; }
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  }

  void open(RecoveryHint hint) {
    log.reset();
    auto opened = PartitionLog::open(fs, dir(), config, clock, hint);
    ASSERT_TRUE(opened.has_value()) << opened.error();
    log = std::move(*opened);
  }

  void do_append() {
    const int n = static_cast<int>(uniform(1, 3));
    std::vector<std::vector<std::byte>> parts;
    std::vector<std::byte> all;
    for (int i = 0; i < n; ++i) {
      parts.push_back(make_batch(static_cast<int>(uniform(1, 4)), clock.wall_ms(), uniform(1, 300)));
      all.insert(all.end(), parts.back().begin(), parts.back().end());
    }
    auto info = log->append_as_leader(all, 0);
    ASSERT_TRUE(info.has_value()) << info.error();
    ASSERT_EQ(info->first_offset, model.log_end);
    std::size_t at = 0;
    for (const auto& part : parts) {
      std::vector<std::byte> stamped(all.begin() + at, all.begin() + at + part.size());
      auto view = record::RecordBatchView::from(stamped);
      model.batches.push_back(ModelBatch{view->base_offset(), view->last_offset(), stamped});
      at += part.size();
    }
    model.log_end = model.batches.back().last_offset + 1;
    ASSERT_EQ(info->last_offset, model.log_end - 1);
  }

  void do_read() {
    const std::int64_t offset = uniform(model.log_start, model.log_end);
    const std::int64_t max_bytes = uniform(0, 3000);
    const std::int64_t max_offset = uniform(0, 3) == 0 ? uniform(model.log_start, model.log_end) : INT64_MAX;
    const bool min_one = uniform(0, 1) == 1;
    auto read = testing::read_batches(*log, offset, static_cast<std::int32_t>(max_bytes), max_offset, min_one);
    ASSERT_TRUE(read.has_value()) << read.error();
    const auto expected = model.read(offset, max_bytes, max_offset, min_one);
    ASSERT_EQ(read->size(), expected.size()) << "read(" << offset << ", " << max_bytes << ", " << max_offset << ")";
    for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ((*read)[i].bytes, expected[i]->bytes);
    if (offset < model.log_end) {
      ASSERT_EQ(log->read(model.log_end + 1, 100, INT64_MAX, true).error(), Errc::kOffsetOutOfRange);
    }
  }

  // Records of batch b have timestamps wall, wall + 1, ... (make_batch) at offsets base, base + 1, ...
  void do_find_by_timestamp() {
    const std::int64_t wall = clock.wall_ms();
    const std::int64_t target = wall + uniform(0, 4);
    std::optional<TimestampOffset> expected;
    for (const ModelBatch& b : model.batches) {
      for (std::int64_t o = std::max(b.base_offset, model.log_start); o <= b.last_offset && !expected; ++o) {
        if (wall + (o - b.base_offset) >= target) expected = TimestampOffset{wall + (o - b.base_offset), o, 0};
      }
      if (expected) break;
    }
    auto found = log->lookup_offset_by_timestamp(target);
    ASSERT_TRUE(found.has_value()) << found.error();
    ASSERT_EQ(*found, expected) << "timestamp " << target;
  }

  // Only to batch boundaries: then the log end stays where the model says across reopens.
  void do_truncate() {
    std::vector<std::int64_t> points{model.log_end};
    for (const auto& b : model.batches) {
      if (b.base_offset >= model.log_start) points.push_back(b.base_offset);
    }
    const std::int64_t offset =
        points[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(points.size()) - 1))];
    ASSERT_TRUE(log->truncate_to(offset).has_value());
    std::erase_if(model.batches, [&](const ModelBatch& b) { return b.last_offset >= offset; });
    model.log_end = std::min(model.log_end, offset);
  }

  void do_delete_records() {
    const std::int64_t offset = uniform(model.log_start, model.log_end);
    ASSERT_TRUE(log->delete_records_before(offset).has_value());
    model.log_start = offset;
  }

  void do_retention() {
    config.retention_bytes = uniform(0, 6000);
    log->set_config(config);
    log->apply_retention(clock.wall_ms());
    config.retention_bytes = -1;
    log->set_config(config);
    // Whole segments went: the new start is a batch boundary the model knows, or the end.
    const std::int64_t start = log->log_start_offset();
    ASSERT_GE(start, model.log_start);
    if (start > model.log_start) {
      const bool boundary =
          start == model.log_end || std::any_of(model.batches.begin(), model.batches.end(),
                                                [&](const auto& b) { return b.base_offset == start; });
      ASSERT_TRUE(boundary) << start;
      model.log_start = start;
    }
    std::erase_if(model.batches, [&](const ModelBatch& b) { return b.last_offset < model.log_start; });
  }

  void do_reopen() {
    const std::int64_t log_start = log->log_start_offset();
    if (uniform(0, 1) == 0) {
      ASSERT_TRUE(log->close().has_value());
      open({.clean_shutdown = true, .recovery_point = log->log_end_offset(), .log_start_offset = log_start});
    } else {
      const std::int64_t recovery_point = uniform(0, log->log_end_offset());
      open({.clean_shutdown = false, .recovery_point = recovery_point, .log_start_offset = log_start});
    }
  }

  void check_invariants() {
    ASSERT_EQ(log->log_start_offset(), model.log_start);
    ASSERT_EQ(log->log_end_offset(), model.log_end);
  }

  void run(int steps) {
    config.segment_bytes = uniform(4500, 12000);  // an append is at most ~4000 bytes
    config.index_interval_bytes = static_cast<std::int32_t>(uniform(0, 2000));
    config.segment_index_bytes = static_cast<std::int32_t>(uniform(24, 400));
    config.max_message_bytes = 1 << 20;
    open({.clean_shutdown = true});
    for (int step = 0; step < steps; ++step) {
      const std::int64_t op = uniform(0, 99);
      SCOPED_TRACE(::testing::Message() << "seed " << GetParam() << " step " << step << " op " << op);
      if (op < 40) {
        do_append();
      } else if (op < 60) {
        do_read();
      } else if (op < 65) {
        do_find_by_timestamp();
      } else if (op < 70) {
        ASSERT_TRUE(log->roll().has_value());
      } else if (op < 78) {
        do_truncate();
      } else if (op < 84) {
        do_delete_records();
      } else if (op < 90) {
        do_retention();
      } else {
        do_reopen();
      }
      if (HasFatalFailure()) return;
      check_invariants();
      if (HasFatalFailure()) return;
    }
    // Finally every remaining batch reads back exactly.
    std::int64_t next = model.log_start;
    std::vector<std::vector<std::byte>> seen;
    for (const auto& b : testing::read_all(*log)) seen.push_back(b.bytes);
    std::vector<std::vector<std::byte>> expected;
    for (const auto& b : model.batches) {
      if (b.last_offset >= next) expected.push_back(b.bytes);
    }
    EXPECT_EQ(seen, expected);
  }
};

TEST_P(PropertyTest, LogBehavesLikeTheModel) { run(400); }

// A longer soak when WEIR_STORAGE_PROPERTY_STEPS is set (e.g. 20000), for the same seeds.
TEST_P(PropertyTest, LogBehavesLikeTheModelForLong) {
  const char* steps = std::getenv("WEIR_STORAGE_PROPERTY_STEPS");
  if (steps == nullptr) GTEST_SKIP() << "set WEIR_STORAGE_PROPERTY_STEPS to run";
  run(std::atoi(steps));
}

INSTANTIATE_TEST_SUITE_P(Seeds, PropertyTest, ::testing::Range(1u, 9u));

}  // namespace
}  // namespace weir::storage
