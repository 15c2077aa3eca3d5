// CleanedTransactions: what the log cleaner knows about transactions while it walks a log in
// offset order (Kafka's CleanedTransactionMetadata). It decides which batches of aborted
// transactions and which transaction markers may go:
//
//  - The aborted transactions of the range walked (from the .txnindex files) are added as the
//    walk reaches them. A data batch of a producer with an aborted transaction open at its
//    offsets belongs to it: it can be discarded.
//  - An ABORT marker can be discarded once no batch of its transaction is left; while some are,
//    the marker stays and its AbortedTxn entry is written to the cleaned segment's .txnindex.
//  - A COMMIT marker can be discarded when the walk saw no batch of its transaction (they were
//    all cleaned away before).
//  - Any other control record stays; a control batch without records (already cleaned) can go.
//
// Single-threaded: owned by one clean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.h"
#include "protocol/record/record_batch.h"
#include "storage/errc.h"
#include "storage/transaction_index.h"

namespace weir::storage {

class CleanedTransactions {
 public:
  void add_aborted(const std::vector<AbortedTxn>& aborted);
  // Where entries of ABORT markers that stay are written (the cleaned segment's .txnindex); null
  // while building the offset map.
  void set_cleaned_index(TransactionIndex* index) noexcept { cleaned_index_ = index; }

  // A control batch walked: true if it can be discarded. Reads its first record (decompressing at
  // most max_decompressed_bytes); kCorruptMessage if that fails, kStorageError if writing the
  // cleaned index does.
  [[nodiscard]] Result<bool, Errc> on_control_batch(const record::RecordBatchView& batch,
                                                    std::size_t max_decompressed_bytes);
  // A data batch walked: true if it belongs to an aborted transaction.
  [[nodiscard]] bool on_data_batch(const record::RecordBatchView& batch);

 private:
  struct Ongoing {
    AbortedTxn txn;
    bool batch_seen = false;  // a batch of it was walked (and so is still in the log)
  };
  struct LaterFirstOffset {
    bool operator()(const AbortedTxn& a, const AbortedTxn& b) const noexcept { return a.first_offset > b.first_offset; }
  };

  void consume_aborted_up_to(std::int64_t offset);

  std::priority_queue<AbortedTxn, std::vector<AbortedTxn>, LaterFirstOffset> aborted_;  // by first offset
  std::unordered_map<std::int64_t, Ongoing> ongoing_aborted_;                           // by producer id
  std::unordered_set<std::int64_t> ongoing_committed_;                                 // producer ids
  TransactionIndex* cleaned_index_ = nullptr;
};

}  // namespace weir::storage
