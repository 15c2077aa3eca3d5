// What the network layer counts, per executor (shard): written only on that executor, by the
// connections it serves; readers sum the executors' instances (see metrics/metric.h).
#pragma once

#include "base/log.h"
#include "metrics/metric.h"

namespace weir::net {

struct alignas(64) ShardStats {
  metrics::Counter connections_opened;
  metrics::Counter connections_closed;
  // A frame above socket.request.max.bytes (or with a negative size) closed its connection.
  metrics::Counter oversized_frames;
  // The reader stopped reading a connection because max.inflight.requests.per.connection
  // requests were waiting for their responses.
  metrics::Counter inflight_limit_hits;
  // Response bytes written from memory (encoded parts, with their size prefixes) and from files
  // with sendfile(2) (record data of Fetch responses).
  metrics::Counter bytes_sent_from_memory;
  metrics::Counter bytes_sent_from_files;
  // Connection-error log lines (one per connection closed on an error), bounded per shard.
  log::RateLimiter close_log{20, 100};
};

}  // namespace weir::net
