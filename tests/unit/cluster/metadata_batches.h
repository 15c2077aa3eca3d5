// Metadata record batches for the cluster tests: what a KRaft leader sends (RecordBatch v2 of
// framed metadata records, control batches), and their decoded form.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "cluster/metadata_follower_state.h"
#include "metadata/metadata_record.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::cluster::test_batches {

using Bytes = std::vector<std::uint8_t>;

inline Bytes to_bytes(const std::vector<std::byte>& v) {
  Bytes out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
  return out;
}

// A metadata batch at base_offset holding one TopicRecord per name.
inline Bytes data_batch(std::int64_t base_offset, std::int32_t epoch, const std::vector<std::string>& names) {
  record::RecordBatchBuilder b({.base_offset = base_offset, .partition_leader_epoch = epoch});
  for (const auto& n : names) {
    metadata::TopicRecord t;
    t.name = n;
    t.topic_id = Uuid(1, 2);
    const Bytes value = metadata::encode_record(t);
    b.append(0, std::nullopt, ByteSpan(reinterpret_cast<const std::byte*>(value.data()), value.size()));
  }
  return to_bytes(b.build());
}

inline Bytes control_batch(std::int64_t base_offset, std::int32_t epoch, record::ControlRecordType type) {
  record::RecordBatchBuilder b({.base_offset = base_offset, .partition_leader_epoch = epoch, .control = true});
  const auto key = record::encode_control_key(type);
  const std::array<std::byte, 4> value{};
  b.append(0, ByteSpan(key), ByteSpan(value));
  return to_bytes(b.build());
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// One batch's bytes decoded as the follower decodes what it fetches.
inline MetadataBatch decoded(const Bytes& bytes) {
  auto view = record::RecordBatchView::from(ByteSpan(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  EXPECT_TRUE(view);
  std::vector<RecordError> errors;
  auto b = decode_metadata_batch(*view, errors);
  EXPECT_TRUE(b);
  return *b;
}

// The TopicRecord names of a decoded batch.
inline std::vector<std::string> topic_names(const MetadataBatch& b) {
  std::vector<std::string> out;
  for (const auto& r : b.records) out.push_back(std::get<metadata::TopicRecord>(r.record).name);
  return out;
}

}  // namespace weir::cluster::test_batches
