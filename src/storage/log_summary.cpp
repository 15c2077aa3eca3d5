#include "storage/log_summary.h"

#include <limits>

#include "base/crc32c.h"

namespace weir::storage {

namespace {

constexpr std::string_view kMagic = "WEIRLSUM";
constexpr std::int16_t kVersion = 1;

void put_segment(ByteBuffer& out, const SegmentSummary& s) {
  for (std::int64_t v :
       {s.base_offset, s.log_bytes, s.offset_index_bytes, s.time_index_bytes, s.txn_index_bytes, s.next_offset,
        s.max_timestamp, s.max_timestamp_offset, s.first_batch_timestamp, s.bytes_since_index_entry}) {
    out.append_be<std::int64_t>(v);
  }
}

std::optional<SegmentSummary> get_segment(ByteReader& in) {
  SegmentSummary s;
  for (std::int64_t* v :
       {&s.base_offset, &s.log_bytes, &s.offset_index_bytes, &s.time_index_bytes, &s.txn_index_bytes, &s.next_offset,
        &s.max_timestamp, &s.max_timestamp_offset, &s.first_batch_timestamp, &s.bytes_since_index_entry}) {
    auto x = in.read_be<std::int64_t>();
    if (!x) return std::nullopt;
    *v = *x;
  }
  // Sizes a file can have; anything else is not a summary weir wrote.
  if (s.base_offset < 0 || s.log_bytes < 0 || s.offset_index_bytes < 0 || s.time_index_bytes < 0 ||
      s.txn_index_bytes < -1) {
    return std::nullopt;
  }
  return s;
}

// A count of items of at least min_item_bytes each that the rest of the input could hold.
std::optional<std::size_t> get_count(ByteReader& in, std::size_t min_item_bytes) {
  auto n = in.read_be<std::int32_t>();
  if (!n || *n < 0 || static_cast<std::size_t>(*n) > in.remaining() / min_item_bytes) return std::nullopt;
  return static_cast<std::size_t>(*n);
}

std::optional<PartitionSummary> get_partition(ByteReader& in) {
  PartitionSummary p;
  auto name_length = in.read_be<std::int16_t>();
  if (!name_length || *name_length <= 0) return std::nullopt;
  auto name = in.read_bytes(static_cast<std::size_t>(*name_length));
  if (!name) return std::nullopt;
  p.dir_name.assign(as_string_view(*name));
  auto device = in.read_be<std::uint64_t>();
  auto inode = in.read_be<std::uint64_t>();
  auto changed = in.read_be<std::int64_t>();
  auto has_id = in.read_be<std::int8_t>();
  if (!device || !inode || !changed || !has_id) return std::nullopt;
  p.dir_identity = FileIdentity{*device, *inode, *changed};
  if (*has_id != 0) {
    auto msb = in.read_be<std::uint64_t>();
    auto lsb = in.read_be<std::uint64_t>();
    if (!msb || !lsb) return std::nullopt;
    p.topic_id = Uuid(*msb, *lsb);
  }
  auto epochs = get_count(in, 12);
  if (!epochs) return std::nullopt;
  for (std::size_t i = 0; i < *epochs; ++i) {
    auto epoch = in.read_be<std::int32_t>();
    auto start = in.read_be<std::int64_t>();
    if (!epoch || !start) return std::nullopt;
    p.epochs.push_back(EpochEntry{*epoch, *start});
  }
  auto segments = get_count(in, 80);
  if (!segments || *segments == 0) return std::nullopt;
  for (std::size_t i = 0; i < *segments; ++i) {
    auto s = get_segment(in);
    if (!s || (!p.segments.empty() && s->base_offset <= p.segments.back().base_offset)) return std::nullopt;
    p.segments.push_back(*s);
  }
  auto has_producers = in.read_be<std::int8_t>();
  if (!has_producers) return std::nullopt;
  if (*has_producers != 0) {
    CarriedProducerState c;
    auto snapshots = get_count(in, 8);
    if (!snapshots) return std::nullopt;
    for (std::size_t i = 0; i < *snapshots; ++i) c.snapshot_offsets.push_back(*in.read_be<std::int64_t>());
    auto carried = in.read_be<std::int64_t>();
    auto length = get_count(in, 1);
    if (!carried || !length) return std::nullopt;
    auto bytes = in.read_bytes(*length);
    if (!bytes) return std::nullopt;
    c.carried_offset = *carried;
    c.carried_bytes.assign(bytes->begin(), bytes->end());
    p.producers = std::move(c);
  }
  return p;
}

}  // namespace

std::vector<std::byte> encode_log_summary(const LogSummary& summary) {
  ByteBuffer out;
  out.append(kMagic);
  out.append_be<std::int16_t>(kVersion);
  out.append_be<std::uint64_t>(summary.marker.device);
  out.append_be<std::uint64_t>(summary.marker.inode);
  out.append_be<std::int64_t>(summary.marker.change_time_ns);
  out.append_be<std::int32_t>(static_cast<std::int32_t>(summary.partitions.size()));
  for (const PartitionSummary& p : summary.partitions) {
    out.append_be<std::int16_t>(static_cast<std::int16_t>(p.dir_name.size()));
    out.append(p.dir_name);
    out.append_be<std::uint64_t>(p.dir_identity.device);
    out.append_be<std::uint64_t>(p.dir_identity.inode);
    out.append_be<std::int64_t>(p.dir_identity.change_time_ns);
    out.append_be<std::int8_t>(p.topic_id ? 1 : 0);
    if (p.topic_id) {
      out.append_be<std::uint64_t>(p.topic_id->msb());
      out.append_be<std::uint64_t>(p.topic_id->lsb());
    }
    out.append_be<std::int32_t>(static_cast<std::int32_t>(p.epochs.size()));
    for (const EpochEntry& e : p.epochs) {
      out.append_be<std::int32_t>(e.epoch);
      out.append_be<std::int64_t>(e.start_offset);
    }
    out.append_be<std::int32_t>(static_cast<std::int32_t>(p.segments.size()));
    for (const SegmentSummary& s : p.segments) put_segment(out, s);
    out.append_be<std::int8_t>(p.producers ? 1 : 0);
    if (p.producers) {
      out.append_be<std::int32_t>(static_cast<std::int32_t>(p.producers->snapshot_offsets.size()));
      for (std::int64_t o : p.producers->snapshot_offsets) out.append_be<std::int64_t>(o);
      out.append_be<std::int64_t>(p.producers->carried_offset);
      out.append_be<std::int32_t>(static_cast<std::int32_t>(p.producers->carried_bytes.size()));
      out.append(p.producers->carried_bytes);
    }
  }
  out.append_be<std::uint32_t>(crc32c(out.span()));
  return out.release();
}

std::optional<LogSummary> decode_log_summary(ByteSpan bytes) {
  if (bytes.size() < kMagic.size() + 2 + 24 + 4 + 4) return std::nullopt;
  const ByteSpan body = bytes.first(bytes.size() - 4);
  if (crc32c(body) != load_be<std::uint32_t>(bytes.data() + body.size())) return std::nullopt;
  ByteReader in(body);
  auto magic = in.read_bytes(kMagic.size());
  if (!magic || as_string_view(*magic) != kMagic) return std::nullopt;
  auto version = in.read_be<std::int16_t>();
  if (!version || *version != kVersion) return std::nullopt;
  auto device = in.read_be<std::uint64_t>();
  auto inode = in.read_be<std::uint64_t>();
  auto changed = in.read_be<std::int64_t>();
  auto count = get_count(in, 1);
  if (!device || !inode || !changed || !count) return std::nullopt;
  LogSummary out{FileIdentity{*device, *inode, *changed}, {}};
  out.partitions.reserve(*count);
  for (std::size_t i = 0; i < *count; ++i) {
    auto p = get_partition(in);
    if (!p) return std::nullopt;
    out.partitions.push_back(std::move(*p));
  }
  if (!in.empty()) return std::nullopt;
  return out;
}

}  // namespace weir::storage
