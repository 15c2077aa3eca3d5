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
  // A reader paused because the request memory budget (queued.max.request.bytes), or the
  // connection's share of it, was spent; it resumed when memory was released.
  metrics::Counter memory_budget_waits;
  // Connections closed by weir.partial.request.timeout.ms and by connections.max.idle.ms.
  metrics::Counter partial_request_timeouts;
  metrics::Counter idle_closes;
  // Connections closed because their partial frame held request memory, and received nothing
  // for kStalledFrameMs, while another reader waited for that memory (connection.h).
  metrics::Counter stalled_frame_reclaims;
  // Written by the accept loops (executor 0 only): connections closed at accept for
  // max.connections.per.ip; times accepting paused at max.connections, or for
  // max.connection.creation.rate; accept(2) failures (EMFILE/ENFILE among them).
  metrics::Counter per_ip_rejections;
  metrics::Counter max_connections_pauses;
  metrics::Counter creation_rate_pauses;
  metrics::Counter accept_errors;
  // Connection-error log lines (one per connection closed on an error), bounded per shard.
  log::RateLimiter close_log{20, 100};
  log::RateLimiter budget_log{1, 5};
  log::RateLimiter accept_log{1, 5};  // executor 0: accept errors and connection-limit lines
};

}  // namespace weir::net
