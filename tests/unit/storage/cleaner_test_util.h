// Helpers for the log cleaner tests: keyed batches, a log's records as (offset, key, value).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/record/compression.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/batch_filter.h"
#include "storage/log_cleaner.h"
#include "test_util.h"

namespace weir::storage::testing {

// A record to write: a missing key is a keyless record, a missing value a tombstone.
struct Kv {
  std::optional<std::string> key;
  std::optional<std::string> value;
};

// One client batch of these records (timestamps ts, ts + 1, ...), compressed with codec.
inline std::vector<std::byte> kv_batch(const std::vector<Kv>& records, std::int64_t ts,
                                       record::BatchOptions options = {},
                                       record::Compression codec = record::Compression::none) {
  record::RecordBatchBuilder builder(options);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Kv& r = records[i];
    std::optional<ByteSpan> key;
    std::optional<ByteSpan> value;
    if (r.key) key = as_bytes(*r.key);
    if (r.value) value = as_bytes(*r.value);
    builder.append(ts + static_cast<std::int64_t>(i), key, value);
  }
  std::vector<std::byte> batch = builder.build();
  if (codec == record::Compression::none) return batch;
  auto view = record::RecordBatchView::from(batch);
  EXPECT_TRUE(view.has_value());
  auto compressed = record::compress_batch(*view, codec);
  EXPECT_TRUE(compressed.has_value());
  return compressed ? *compressed : batch;
}

// A record as stored.
struct Stored {
  std::int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  friend bool operator==(const Stored&, const Stored&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Stored& s) {
    return os << "{" << s.offset << " " << s.key.value_or("<none>") << "=" << s.value.value_or("<null>") << "}";
  }
};

inline std::vector<Stored> records_of(const std::vector<std::byte>& batch) {
  std::vector<Stored> out;
  auto view = record::RecordBatchView::from(batch);
  EXPECT_TRUE(view.has_value());
  if (!view) return out;
  auto ok = for_each_stored_record(*view, kMaxDecompressedBatchBytes, [&](const record::RecordView& r) {
    Stored s{view->record_offset(r), std::nullopt, std::nullopt};
    if (r.key) s.key = std::string(as_string_view(*r.key));
    if (r.value) s.value = std::string(as_string_view(*r.value));
    out.push_back(std::move(s));
  });
  EXPECT_TRUE(ok.has_value());
  return out;
}

// Every record of the log's data batches, in offset order (control batches left out).
inline std::vector<Stored> data_records(const PartitionLog& log) {
  std::vector<Stored> out;
  for (const StoredBatch& b : read_all(log)) {
    auto view = record::RecordBatchView::from(b.bytes);
    if (!view || view->is_control()) continue;
    for (Stored& s : records_of(b.bytes)) out.push_back(std::move(s));
  }
  return out;
}

// The latest value of each key (nullopt: a tombstone) among records.
inline std::map<std::string, std::optional<std::string>> latest_values(const std::vector<Stored>& records) {
  std::map<std::string, std::optional<std::string>> out;
  for (const Stored& s : records) {
    if (s.key) out[*s.key] = s.value;
  }
  return out;
}

// Cleans until the round is done (or nothing is to do); the summed result.
inline CleanResult clean_fully(LogCleaner& cleaner, PartitionLog& log, std::int64_t now_ms,
                               std::int64_t budget_bytes = std::int64_t{1} << 40,
                               const ActiveProducers* producers = nullptr) {
  CleanResult total;
  for (int calls = 0; calls < 100000; ++calls) {
    auto result = cleaner.clean(log, now_ms, budget_bytes, producers);
    EXPECT_TRUE(result.has_value()) << result.error();
    if (!result) return total;
    total.stats += result->stats;
    total.state = result->state;
    total.checkpoint = result->checkpoint;
    if (result->state != CleanState::kInProgress) return total;
  }
  ADD_FAILURE() << "the clean never finished";
  return total;
}

}  // namespace weir::storage::testing
