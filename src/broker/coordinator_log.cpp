#include "broker/coordinator_log.h"

#include <spdlog/spdlog.h>

#include <span>
#include <vector>

#include "protocol/record/batch_splitter.h"
#include "storage/errc.h"
#include "storage/partition_log.h"

namespace weir::broker {

namespace {
constexpr std::int32_t kLoadReadBytes = 1 << 20;
}  // namespace

bool read_coordinator_log(storage::PartitionLog& log, std::string_view topic, std::int32_t index,
                          const std::function<void(const record::RecordBatchView&)>& on_batch) {
  std::int64_t offset = log.log_start_offset();
  const std::int64_t end = log.log_end_offset();
  std::vector<std::uint8_t> buf;
  while (offset < end) {
    auto read = log.read(offset, kLoadReadBytes, end, true);
    if (!read) {
      spdlog::error("cannot read {}-{} at offset {}: {}", topic, index, offset, storage::to_string(read.error()));
      return false;
    }
    buf.clear();
    if (auto copied = read->append_to(buf); !copied) {
      spdlog::error("cannot read {}-{} at offset {}: {}", topic, index, offset, storage::to_string(copied.error()));
      return false;
    }
    if (buf.empty()) break;
    record::BatchSplitter splitter(std::as_bytes(std::span<const std::uint8_t>(buf)));
    const std::int64_t before = offset;
    for (;;) {
      auto next = splitter.next();
      if (!next || !*next) break;
      const record::RecordBatchView& batch = **next;
      offset = batch.base_offset() + batch.last_offset_delta() + 1;
      on_batch(batch);
    }
    if (offset <= before) break;  // no whole batch: nothing more to read
  }
  return true;
}

}  // namespace weir::broker
