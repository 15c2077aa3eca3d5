// DescribeLogDirs (kafka-log-dirs --describe): the one log directory (the first of log.dirs), with
// the size on disk of each partition's log (its segments' .log files, as Kafka's UnifiedLog.size)
// and, from v4, the file system's total and usable bytes (statvfs: blocks and blocks available
// to unprivileged users, times the fragment size, as Java's FileStore reports them).
//
// As Kafka: a null topic list means every partition hosted here; otherwise only the requested
// (topic, partition) pairs that exist, unknown ones silently left out, and a topic with none left
// is not listed. One replica: the offset lag is 0 and no log is a "future" one (no replica moves
// between directories); no directory is cordoned. The directory is named by its absolute path.
#include <sys/statvfs.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "broker/async.h"
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

struct HostedLog {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t size_bytes = 0;
};

struct FileSystemSpace {
  std::int64_t total_bytes = -1;
  std::int64_t usable_bytes = -1;
};

// Java's Paths.get(dir).toAbsolutePath(): relative to the working directory, without repeated
// or trailing separators ("." and ".." are kept).
std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(dir, ec);
  const std::string raw = ec ? dir : p.string();
  std::string out;
  for (const char c : raw) {
    if (c != '/' || out.empty() || out.back() != '/') {
      out.push_back(c);
    }
  }
  while (out.size() > 1 && out.back() == '/') {
    out.pop_back();
  }
  return out;
}

std::optional<FileSystemSpace> file_system_space(const std::string& dir) {
  struct statvfs st{};
  if (::statvfs(dir.c_str(), &st) != 0) {
    return std::nullopt;
  }
  const auto fragment = static_cast<std::int64_t>(st.f_frsize);
  return FileSystemSpace{.total_bytes = static_cast<std::int64_t>(st.f_blocks) * fragment,
                         .usable_bytes = static_cast<std::int64_t>(st.f_bavail) * fragment};
}

}  // namespace

boost::asio::awaitable<HandlerResult<DescribeLogDirsHandler::Response>> DescribeLogDirsHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  ShardSet& shards = broker.shards();

  // Every shard lists the logs it owns.
  FanOut<std::vector<HostedLog>> fan;
  for (std::size_t shard = 0; shard < shards.count(); ++shard) {
    fan.add(shards.executor(shard), [&shards, shard]() {
      std::vector<HostedLog> logs;
      shards.table(shard).for_each([&logs](Partition& p) {
        logs.push_back(HostedLog{.topic = p.topic(), .partition = p.index(), .size_bytes = p.log().size_bytes()});
      });
      return logs;
    });
  }
  auto per_shard = co_await fan.run();

  std::set<std::pair<std::string, std::int32_t>> wanted;
  if (req.topics) {
    for (const auto& t : *req.topics) {
      for (const std::int32_t p : t.partitions) {
        wanted.emplace(t.topic, p);
      }
    }
  }
  // topic -> partition -> size, ordered for a stable answer.
  std::map<std::string, std::map<std::int32_t, std::int64_t>> by_topic;
  for (const auto& logs : per_shard) {
    for (const auto& log : logs) {
      if (!req.topics || wanted.contains({log.topic, log.partition})) {
        by_topic[log.topic][log.partition] = log.size_bytes;
      }
    }
  }

  Response resp;
  auto& dir = resp.results.emplace_back();
  dir.log_dir = absolute_dir(broker.config().log_dir);
  const auto space = file_system_space(broker.config().log_dir);
  if (!space) {
    // Kafka answers a directory it cannot inspect with the error alone.
    dir.error_code = code(ErrorCode::kKafkaStorageError);
    co_return resp;
  }
  dir.total_bytes = space->total_bytes;
  dir.usable_bytes = space->usable_bytes;
  for (const auto& [topic, partitions] : by_topic) {
    auto& out_topic = dir.topics.emplace_back();
    out_topic.name = topic;
    for (const auto& [index, size] : partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = index;
      out.partition_size = size;
      out.offset_lag = 0;
      out.is_future_key = false;
    }
  }
  co_return resp;
}

}  // namespace weir::broker
