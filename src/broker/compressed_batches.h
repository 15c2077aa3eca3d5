// CompressedBatches: Produce validates compressed batches off the executors.
//
// Checking a compressed batch means decompressing it (storage/records_summary.h), which may take
// as long as decompressing weir.produce.max.decompressed.batch.bytes: on a shard's executor that
// would stall every other client of the shard. So a Produce request whose record sets hold a
// compressed batch hands them to a small pool of worker threads (weir.decompression.threads),
// which compute their RecordsSummaries; the request resumes on its connection's shard and posts
// its appends as usual, each carrying its summaries, so the owner shard applies the topic's rules
// to them without decompressing. A request with no compressed batch takes no thread hop.
//
// Ordering: appends to a partition must keep the order of their requests on a connection (and
// an idempotent producer's sequence checks rely on it). Today that order comes for free: each
// request posts its appends before it first suspends, and requests start in arrival order. A
// request that waits for the pool would let later requests of its connection overtake it, so
// such a request takes a ticket (per connection, in arrival order) and every later request of
// the connection, compressed or not, takes one too while any earlier ticket is unserved; a
// ticket holder posts its appends only when its turn comes, and passes the turn on right before
// it posts them. Requests of other connections never wait for one another. A connection with no
// ticket outstanding pays nothing.
//
// Threading: the tickets of a connection live on its shard (ClientInfo::shard) and are touched
// only there; the pool only reads record bytes and writes the summaries of the request it runs.
// Memory: each worker holds one stream's window, one record and the codec's state at a time
// (protocol/record/record_stream.h); queued requests hold only their already-read bytes (bounded
// by max.inflight.requests.per.connection per connection).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/request_sink.h"
#include "protocol/record/record_stream.h"
#include "storage/errc.h"
#include "storage/records_summary.h"

namespace weir::broker {

struct RequestStats;

class CompressedBatches {
 public:
  CompressedBatches(std::size_t shards, std::size_t threads, record::DecompressionLimits limits);
  ~CompressedBatches();
  CompressedBatches(const CompressedBatches&) = delete;
  CompressedBatches& operator=(const CompressedBatches&) = delete;

  // The worker threads run from start() to stop(); stop() waits for the one running job each.
  void start();
  void stop();

  [[nodiscard]] const record::DecompressionLimits& limits() const noexcept { return limits_; }
  // The error message a refused append answers with (which limit, for the decompression ones).
  [[nodiscard]] std::string error_message(storage::Errc e) const;

  // The compressed batches of one Produce request, on its connection's shard:
  //
  //   CompressedBatches::Produce batches(service, ctx.client, stats);
  //   for each partition: summaries = batches.add(records);  // handed to append_as_leader
  //   co_await batches.run();      // before any other suspension of the handler
  //   batches.release();           // right before the appends are posted
  class Produce {
   public:
    Produce(CompressedBatches& service, const net::ClientInfo& client, RequestStats& stats);
    ~Produce();
    Produce(const Produce&) = delete;
    Produce& operator=(const Produce&) = delete;

    // The summaries run() fills in for `records` (a partition's record set, alive until the
    // appends are done), or null if it holds no compressed batch.
    [[nodiscard]] const storage::RecordsSummaries* add(std::span<const std::byte> records);
    // Decompresses on the pool what add() collected, then waits for the connection's turn.
    // Returns at once when there is nothing to decompress and no earlier request waiting.
    boost::asio::awaitable<void> run();
    // Passes the connection's turn on (the next request resumes after this one's appends are
    // posted); also done on destruction.
    void release();

   private:
    struct Entry {
      std::span<const std::byte> records;
      storage::RecordsSummaries summaries;
    };
    void summarize();

    CompressedBatches& service_;
    const net::ClientInfo& client_;
    RequestStats& stats_;
    std::deque<Entry> entries_;  // a deque: add() hands out pointers into it
    std::uint64_t ticket_ = 0;
    bool holding_ = false;   // a ticket taken
    bool has_turn_ = false;  // and its turn come
  };

 private:
  // A connection's tickets: those below `serving` have posted their appends.
  struct Line {
    std::uint64_t next = 0;
    std::uint64_t serving = 0;
    std::unordered_map<std::uint64_t, boost::asio::steady_timer*> waiting;  // ticket -> its waiter
  };
  using Lines = std::unordered_map<std::uint64_t, Line>;  // by connection id

  std::size_t threads_;
  record::DecompressionLimits limits_;
  std::vector<Lines> lines_;  // per shard, touched only on that shard
  std::unique_ptr<boost::asio::thread_pool> pool_;
};

}  // namespace weir::broker
