#include "group/offsets_load.h"

#include "protocol/record/compression.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record.h"

namespace weir::group {

namespace {

std::span<const std::uint8_t> as_u8(ByteSpan b) { return {reinterpret_cast<const std::uint8_t*>(b.data()), b.size()}; }

}  // namespace

BatchReplay replay_batch(GroupCoordinator& coordinator, const record::RecordBatchView& batch,
                         std::size_t max_batch_bytes) {
  BatchReplay out;
  auto section = record::read_records_section(batch, max_batch_bytes);
  if (!section) {
    out.unreadable = true;
    return out;
  }
  const std::int64_t producer_id = batch.is_transactional() ? batch.producer_id() : -1;
  auto st = record::for_each_record(section->reader(), [&](const record::RecordView& r) {
    if (batch.is_control()) {
      auto key = r.key ? record::parse_control_key(*r.key) : unexpected(record::Errc::invalid_control_record);
      if (!key) {
        ++out.skipped;
      } else if (key->is_transaction_marker()) {
        coordinator.replay_end_transaction(batch.producer_id(), key->is(record::ControlRecordType::commit));
        ++out.records;
      }
      return;
    }
    if (!r.key) return;
    std::optional<std::span<const std::uint8_t>> value;
    if (r.value) value = as_u8(*r.value);
    const RecordContext at{batch.base_offset() + r.offset_delta, producer_id};
    if (coordinator.replay(as_u8(*r.key), value, at)) {
      ++out.records;
    } else {
      ++out.skipped;
    }
  });
  if (!st) out.unreadable = true;
  return out;
}

}  // namespace weir::group
