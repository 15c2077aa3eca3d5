// The broker's metrics in the Prometheus text format (served on metrics.listener).
//
// Every shard is visited once per scrape by a task posted to it, which copies what the shard
// owns (request counters, its partitions' offsets and traffic, its group coordinators' groups
// and committed offsets) and returns; merging (sums over shards, consumer lag against the log
// end offsets) and formatting happen on the caller's executor, never on a shard.
//
// Names follow Kafka's metrics where they have one, Prometheus style:
//   weir_requests_total{api}, weir_request_errors_total{api}, weir_errors_total{api,error,code,scope},
//   weir_request_bytes_total{api}, weir_response_bytes_total{api}, weir_requests_in_flight{api},
//   weir_request_latency_seconds{api} (histogram), weir_request_latency_quantile_seconds{api,quantile},
//   weir_connections_{opened,closed}_total, weir_connections_active,
//   weir_malformed_requests_total{reason}, weir_limit_hits_total{limit}, weir_log_lines_dropped_total{event},
//   weir_partition_{log_start_offset,log_end_offset,high_watermark,segments,size_bytes}{topic,partition},
//   weir_partition_{bytes_in,messages_in,bytes_out}_total{topic,partition},
//   weir_group_state{group,state}, weir_group_{members,generation,last_rebalance_seconds}{group},
//   weir_group_rebalances_total{group}, weir_group_committed_offset{group,topic,partition},
//   weir_group_lag{group,topic,partition},
//   weir_fetch_sessions, weir_fetch_session_partitions, weir_fetch_session_evictions_total,
//   weir_incremental_fetches_total,
//   weir_transactions_ongoing, weir_transactions_{committed,aborted,timed_out}_total,
//   weir_transaction_oldest_ongoing_age_seconds.
#pragma once

#include <string>

#include <boost/asio/awaitable.hpp>

namespace weir::net {
class Server;
}

namespace weir::broker {

class Broker;

// Call on an executor that is not a shard's. `server` supplies the connection counters; both
// must outlive the call, and the shards must be running.
boost::asio::awaitable<std::string> render_metrics(Broker& broker, const net::Server& server);

}  // namespace weir::broker
