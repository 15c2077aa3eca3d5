// Loading a `__consumer_offsets` partition: how one batch read back from the log replays into the
// GroupCoordinator (the host reads the log; this part is pure).
//   - a control batch holding a transaction marker commits or aborts the pending offsets of the
//     batch's producer (other control records are ignored);
//   - a transactional batch's offset records become pending offsets of the batch's producer,
//     until its marker (an open transaction at the end of the log stays pending);
//   - any other batch's records replay as they are.
// Every record replays with its offset in the log, which orders commits (offset_manager.h).
#pragma once

#include <cstddef>

#include "group/coordinator.h"
#include "protocol/record/record_batch.h"

namespace weir::group {

struct BatchReplay {
  std::size_t records = 0;  // records applied
  std::size_t skipped = 0;  // records that did not replay (malformed, unknown key version)
  bool unreadable = false;  // the records section could not be read (decompression, framing)
};

// `max_batch_bytes` bounds the decompressed size of the batch.
[[nodiscard]] BatchReplay replay_batch(GroupCoordinator& coordinator, const record::RecordBatchView& batch,
                                       std::size_t max_batch_bytes);

}  // namespace weir::group
