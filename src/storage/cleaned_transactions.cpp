#include "storage/cleaned_transactions.h"

#include "protocol/record/control_record.h"
#include "storage/batch_filter.h"

namespace weir::storage {

void CleanedTransactions::add_aborted(const std::vector<AbortedTxn>& aborted) {
  for (const AbortedTxn& txn : aborted) aborted_.push(txn);
}

void CleanedTransactions::consume_aborted_up_to(std::int64_t offset) {
  while (!aborted_.empty() && aborted_.top().first_offset <= offset) {
    const AbortedTxn txn = aborted_.top();
    aborted_.pop();
    ongoing_aborted_.try_emplace(txn.producer_id, Ongoing{txn, false});
  }
}

Result<bool, Errc> CleanedTransactions::on_control_batch(const record::RecordBatchView& batch,
                                                         std::size_t max_decompressed_bytes) {
  consume_aborted_up_to(batch.last_offset());
  std::optional<record::ControlRecordKey> key;
  bool first = true;
  auto walked = for_each_stored_record(batch, max_decompressed_bytes, [&](const record::RecordView& r) {
    if (!first) return;
    first = false;
    if (!r.key) return;
    if (auto parsed = record::parse_control_key(*r.key)) key = *parsed;
  });
  if (!walked) return unexpected(walked.error());
  if (first) return true;  // no records: a marker already cleaned
  if (!key) return false;  // unreadable: keep it
  const std::int64_t producer_id = batch.producer_id();
  if (key->is(record::ControlRecordType::abort)) {
    auto it = ongoing_aborted_.find(producer_id);
    if (it == ongoing_aborted_.end()) return true;
    const Ongoing ongoing = it->second;
    ongoing_aborted_.erase(it);
    if (!ongoing.batch_seen) return true;
    // The marker stays, so does its entry: in the cleaned segment, which now holds the marker.
    if (cleaned_index_ != nullptr) {
      if (auto ok = cleaned_index_->append(ongoing.txn); !ok) return unexpected(ok.error());
    }
    return false;
  }
  if (key->is(record::ControlRecordType::commit)) return ongoing_committed_.erase(producer_id) == 0;
  return false;
}

bool CleanedTransactions::on_data_batch(const record::RecordBatchView& batch) {
  consume_aborted_up_to(batch.last_offset());
  if (!batch.is_transactional()) return false;
  if (auto it = ongoing_aborted_.find(batch.producer_id()); it != ongoing_aborted_.end()) {
    it->second.batch_seen = true;
    return true;
  }
  ongoing_committed_.insert(batch.producer_id());
  return false;
}

}  // namespace weir::storage
