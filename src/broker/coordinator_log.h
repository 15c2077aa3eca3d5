// Reading a coordinator's internal partition (`__consumer_offsets`, `__transaction_state`) back
// at load: every whole batch from the log start to the log end, in order, for the coordinator to
// replay. Shared by GroupHost and TxnHost.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "protocol/record/record_batch.h"

namespace weir::storage {
class PartitionLog;
}

namespace weir::broker {

// The most bytes of one batch a load decompresses (a coordinator never writes more).
inline constexpr std::size_t kMaxCoordinatorBatchBytes = 64u << 20;

// Calls on_batch for each batch of `log` (topic-index names it in log lines). False, logged, if
// the log could not be read to its end; the batches before the error were passed.
bool read_coordinator_log(storage::PartitionLog& log, std::string_view topic, std::int32_t index,
                          const std::function<void(const record::RecordBatchView&)>& on_batch);

}  // namespace weir::broker
