#include "broker/compressed_batches.h"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/assert.h"
#include "broker/request_stats.h"

namespace weir::broker {

namespace asio = boost::asio;

CompressedBatches::CompressedBatches(std::size_t shards, std::size_t threads, record::DecompressionLimits limits)
    : threads_(std::max<std::size_t>(1, threads)), limits_(limits), lines_(shards) {}

CompressedBatches::~CompressedBatches() { stop(); }

void CompressedBatches::start() {
  if (!pool_) pool_ = std::make_unique<asio::thread_pool>(threads_);
}

void CompressedBatches::stop() {
  if (!pool_) return;
  pool_->stop();
  pool_->join();
  pool_.reset();
}

std::string CompressedBatches::error_message(storage::Errc e) const {
  switch (e) {
    case storage::Errc::kDecompressedBatchTooLarge:
      return fmt::format(
          "The compressed record batch decompresses to more than {} bytes "
          "(weir.produce.max.decompressed.batch.bytes)",
          limits_.max_bytes);
    case storage::Errc::kCompressionRatioTooHigh:
      return fmt::format(
          "The compressed record batch decompresses to more than {} times its compressed size "
          "(weir.produce.max.compression.ratio)",
          limits_.max_ratio);
    default:
      return std::string(storage::to_string(e));
  }
}

CompressedBatches::Produce::Produce(CompressedBatches& service, const net::ClientInfo& client, RequestStats& stats)
    : service_(service), client_(client), stats_(stats) {}

CompressedBatches::Produce::~Produce() {
  // Destroyed while waiting for its turn: only when the executors are torn down at shutdown.
  if (has_turn_) release();
}

const storage::RecordsSummaries* CompressedBatches::Produce::add(std::span<const std::byte> records) {
  if (!storage::has_compressed_batch(records)) return nullptr;
  entries_.push_back(Entry{records, {}});
  return &entries_.back().summaries;
}

void CompressedBatches::Produce::summarize() {
  for (Entry& e : entries_) e.summaries = storage::summarize_producer_batches(e.records, service_.limits_);
}

asio::awaitable<void> CompressedBatches::Produce::run() {
  WEIR_ASSERT(!holding_, "run() twice");
  Lines& lines = service_.lines_.at(client_.shard);
  const bool earlier_waiting = lines.contains(client_.connection_id);
  if (entries_.empty() && !earlier_waiting) co_return;
  // Taken before this coroutine first suspends, so tickets follow the requests' arrival order.
  Line& line = lines[client_.connection_id];  // references to map elements survive rehashing
  ticket_ = line.next++;
  holding_ = true;

  if (!entries_.empty()) {
    if (service_.pool_) {
      Produce* self = this;  // trivially destructible capture (see run_on in async.h)
      co_await asio::co_spawn(
          service_.pool_->get_executor(),
          [self]() -> asio::awaitable<void> {
            self->summarize();
            co_return;
          },
          asio::use_awaitable);
    } else {
      summarize();  // not started (unit tests): inline
    }
    for (const Entry& e : entries_) {
      for (const auto& s : e.summaries) {
        if (!s || !s->error) continue;
        if (*s->error == storage::Errc::kDecompressedBatchTooLarge) {
          stats_.limits[static_cast<std::size_t>(Limit::kDecompressedBatchBytes)].inc();
        } else if (*s->error == storage::Errc::kCompressionRatioTooHigh) {
          stats_.limits[static_cast<std::size_t>(Limit::kCompressionRatio)].inc();
        }
      }
    }
  }

  const auto ex = co_await asio::this_coro::executor;
  while (line.serving != ticket_) {
    asio::steady_timer wake(ex, asio::steady_timer::time_point::max());
    line.waiting[ticket_] = &wake;
    boost::system::error_code ec;
    co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    line.waiting.erase(ticket_);
  }
  has_turn_ = true;
}

void CompressedBatches::Produce::release() {
  if (!holding_) return;
  WEIR_ASSERT(has_turn_, "release() before run() completed");
  holding_ = false;
  has_turn_ = false;
  Lines& lines = service_.lines_.at(client_.shard);
  auto it = lines.find(client_.connection_id);
  WEIR_ASSERT(it != lines.end(), "a ticket without its line");
  Line& line = it->second;
  WEIR_ASSERT(line.serving == ticket_, "ticket {} released while serving {}", ticket_, line.serving);
  ++line.serving;
  if (line.serving == line.next) {
    lines.erase(it);  // nobody waits: the connection is back on the fast path
    return;
  }
  // The waiter resumes from the executor's queue, i.e. after this request has posted its appends.
  if (auto w = line.waiting.find(line.serving); w != line.waiting.end()) w->second->cancel();
}

}  // namespace weir::broker
