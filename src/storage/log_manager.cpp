#include "storage/log_manager.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "base/assert.h"
#include "base/log.h"
#include "storage/log_summary.h"
#include "storage/parallel.h"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMetadataLogDir = "__cluster_metadata-0";
// Kafka's clean-shutdown marker holds JSON; weir writes the same shape (no broker epoch yet).
// Kafka's CleanShutdownFileHandler content: {"version":0,"brokerEpoch":N}.
std::string clean_shutdown_content(std::int64_t broker_epoch) {
  return R"({"version":0,"brokerEpoch":)" + std::to_string(broker_epoch) + "}";
}

// The brokerEpoch of a clean-shutdown file; -1 when it has none (or is not JSON we can read).
std::int64_t clean_shutdown_epoch(std::string_view text) {
  const std::size_t key = text.find("\"brokerEpoch\"");
  if (key == std::string_view::npos) return -1;
  std::size_t i = text.find(':', key);
  if (i == std::string_view::npos) return -1;
  ++i;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  std::int64_t epoch = -1;
  const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), epoch);
  if (ec != std::errc{}) return -1;
  return epoch;
}

// Reads a dir-level checkpoint; a missing file is empty, a malformed one is reported and empty.
OffsetCheckpoint read_dir_checkpoint(FileSystem& fs, const fs::path& path, bool* malformed) {
  auto offsets = read_offset_checkpoint(fs, path);
  if (offsets) return std::move(*offsets);
  if (offsets.error() != Errc::kNotFound) {
    log::get("storage")->warn("event=checkpoint_unreadable {} {}", log::kv("path", path.string()),
                              log::kv("error", to_string(offsets.error())));
    if (malformed != nullptr) *malformed = true;
  }
  return {};
}

// The log dir's summary, if it is there and intact; a damaged one is reported and not used.
std::optional<LogSummary> read_summary_file(FileSystem& fs, const fs::path& path) {
  constexpr std::size_t kMaxSummaryBytes = std::size_t{1} << 31;
  auto bytes = read_file(fs, path, kMaxSummaryBytes);
  if (!bytes) {
    if (!bytes.error().not_found()) {
      log::get("storage")->warn("event=log_summary_unreadable {} {}", log::kv("path", path.string()),
                                log::kv("error", to_string(bytes.error())));
    }
    return std::nullopt;
  }
  auto summary = decode_log_summary(as_bytes(*bytes));
  if (!summary) log::get("storage")->warn("event=log_summary_corrupt {}", log::kv("path", path.string()));
  return summary;
}

struct TopicPartitionHash {
  std::size_t operator()(const TopicPartition& tp) const noexcept {
    return std::hash<std::string_view>{}(tp.topic) * 31 + static_cast<std::size_t>(tp.partition);
  }
};

// Each partition's values from the four checkpoints, found with one hash lookup (a start looks
// up every partition of the directory; the checkpoints' ordered maps cost a string comparison a
// level).
std::unordered_map<TopicPartition, RecoveryHint, TopicPartitionHash> hints_of(bool clean,
                                                                              const OffsetCheckpoint& recovery,
                                                                              const OffsetCheckpoint& starts,
                                                                              const OffsetCheckpoint& watermarks,
                                                                              const OffsetCheckpoint& cleaner) {
  std::unordered_map<TopicPartition, RecoveryHint, TopicPartitionHash> hints;
  hints.reserve(recovery.size());
  const auto at = [&](const TopicPartition& tp) -> RecoveryHint& {
    auto [it, added] = hints.try_emplace(tp);
    if (added) it->second.clean_shutdown = clean;
    return it->second;
  };
  for (const auto& [tp, offset] : recovery) at(tp).recovery_point = offset;
  for (const auto& [tp, offset] : starts) at(tp).log_start_offset = offset;
  for (const auto& [tp, offset] : watermarks) at(tp).high_watermark = offset;
  for (const auto& [tp, offset] : cleaner) at(tp).cleaner_checkpoint = offset;
  return hints;
}

}  // namespace

LogManager::LogManager(std::shared_ptr<FileCache> files, fs::path dir, const Clock& clock, LogManagerOptions options)
    : files_(std::move(files)),
      fs_(*files_),
      dir_(std::move(dir)),
      clock_(clock),
      options_(std::move(options)),
      cleaner_(options_.cleaner) {}

LogManager::~LogManager() = default;

LogConfig LogManager::config_for(std::string_view topic) const {
  return options_.config_for ? options_.config_for(topic) : options_.default_config;
}

Result<std::unique_ptr<LogManager>, Errc> LogManager::open(FileSystem& fs, fs::path dir, const Clock& clock,
                                                           LogManagerOptions options) {
  auto exists = fs.exists(dir);
  if (!exists) return unexpected(Errc::kStorageError);
  if (!*exists) {
    const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
    if (!fs.create_directory(dir) || !fs.sync_directory(parent)) return unexpected(Errc::kStorageError);
  }
  const std::size_t capacity = options.max_open_files > 0 ? options.max_open_files : FileCache::default_capacity();
  auto files = FileCache::create(fs, capacity, options.on_disk_failure);  // before options moves
  std::unique_ptr<LogManager> manager(new LogManager(std::move(files), std::move(dir), clock, std::move(options)));
  if (auto ok = manager->load(); !ok) return unexpected(ok.error());
  return manager;
}

Status<Errc> LogManager::load() {
  const auto started = std::chrono::steady_clock::now();
  const auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count();
  };
  const fs::path marker = dir_ / kCleanShutdownFile;
  auto clean = fs_.exists(marker);
  if (!clean) return unexpected(Errc::kStorageError);
  bool malformed = false;
  const OffsetCheckpoint recovery_points = read_dir_checkpoint(fs_, dir_ / kRecoveryPointCheckpointFile, &malformed);
  const OffsetCheckpoint log_starts = read_dir_checkpoint(fs_, dir_ / kLogStartOffsetCheckpointFile, nullptr);
  const OffsetCheckpoint high_watermarks = read_dir_checkpoint(fs_, dir_ / kReplicationOffsetCheckpointFile, nullptr);
  cleaner_checkpoint_written_ = read_dir_checkpoint(fs_, dir_ / kCleanerOffsetCheckpointFile, nullptr);
  // Without trustworthy recovery points a clean shutdown cannot be relied on either.
  had_clean_shutdown_ = *clean && !malformed;
  if (had_clean_shutdown_) {
    // KIP-966: the epoch the broker had when it shut down cleanly (its next registration's
    // PreviousBrokerEpoch); an unreadable file counts as none.
    if (auto text = read_file(fs_, marker, 4096)) clean_shutdown_broker_epoch_ = clean_shutdown_epoch(*text);
  }

  // The clean shutdown's summary of every log (log_summary.h), trusted only with the marker it
  // was written after.
  const fs::path summary_path = dir_ / kLogSummaryFile;
  std::optional<LogSummary> summary;
  if (had_clean_shutdown_) summary = read_summary(summary_path);
  if (summary) {
    auto identity = fs_.identity(marker);
    if (!identity || *identity != summary->marker) {
      log::get("storage")->info("event=log_summary_not_used {} reason=another_clean_shutdown_marker",
                                log::kv("path", summary_path.string()));
      summary.reset();
    }
  }
  std::unordered_map<std::string_view, const PartitionSummary*> summarized;
  if (summary) {
    summarized.reserve(summary->partitions.size());
    for (const PartitionSummary& p : summary->partitions) summarized.emplace(p.dir_name, &p);
  }

  auto entries = fs_.list(dir_);
  if (!entries) return unexpected(Errc::kStorageError);
  struct Found {
    std::string name;
    TopicPartition tp;
    const LogConfig* config;  // in `configs`
    std::optional<Result<std::unique_ptr<PartitionLog>, Errc>> log;
    std::optional<Uuid> topic_id;
    const PartitionSummary* summary = nullptr;
  };
  std::vector<Found> found;
  std::map<std::string, LogConfig, std::less<>> configs;  // per topic: config_for() resolves them
  for (const DirEntry& e : *entries) {
    if (!e.is_directory || e.name == kMetadataLogDir) continue;
    const std::string_view name = e.name;
    if (name.ends_with("-delete")) {
      log::get("storage")->info("event=removing_deleted_partition {}", log::kv("dir", e.name));
      if (!remove_all(fs_, dir_ / e.name)) return unexpected(Errc::kStorageError);
      continue;
    }
    if (name.ends_with("-future") || name.ends_with("-stray")) {
      log::get("storage")->warn("event=partition_dir_skipped {}", log::kv("dir", e.name));
      continue;
    }
    std::optional<TopicPartition> tp = parse_partition_dir_name(name);
    if (!tp) {
      log::get("storage")->warn("event=not_a_partition_dir {}", log::kv("dir", e.name));
      continue;
    }
    auto config = configs.find(tp->topic);
    if (config == configs.end()) config = configs.emplace(tp->topic, config_for(tp->topic)).first;
    const auto summarized_as = summarized.find(name);
    found.push_back(Found{e.name, std::move(*tp), &config->second, std::nullopt, std::nullopt,
                          summarized_as == summarized.end() ? nullptr : summarized_as->second});
  }
  const auto hints =
      hints_of(had_clean_shutdown_, recovery_points, log_starts, high_watermarks, cleaner_checkpoint_written_);
  std::atomic<std::size_t> restored{0};
  const std::int64_t read_ms = ms_since(started);  // the checkpoints, the summary and the listing
  const auto opening = std::chrono::steady_clock::now();
  // The logs are independent: open them from several threads (the file cache is thread-safe).
  parallel_for(found.size(), std::max<std::size_t>(1, options_.load_threads), [&](std::size_t i) {
    Found& f = found[i];
    const auto hinted = hints.find(f.tp);
    RecoveryHint hint = hinted == hints.end() ? RecoveryHint{.clean_shutdown = had_clean_shutdown_} : hinted->second;
    const fs::path dir = dir_ / f.name;
    // The summary holds for a directory that is the one it describes, unchanged since.
    if (f.summary != nullptr) {
      auto identity = fs_.identity(dir);
      if (!identity || *identity != f.summary->dir_identity) f.summary = nullptr;
    }
    hint.summary = f.summary;
    f.log = PartitionLog::open(fs_, dir, *f.config, clock_, hint);
    if (!*f.log) return;
    if (f.summary != nullptr) {
      f.topic_id = f.summary->topic_id;  // partition.metadata is as it was (the directory did not change)
      restored.fetch_add(1, std::memory_order_relaxed);
    } else if (auto id = read_partition_metadata(fs_, dir / kPartitionMetadataFile)) {
      f.topic_id = *id;
    }
  });
  for (Found& f : found) {
    if (!*f.log) {
      log::get("storage")->error("event=partition_open_failed {} {}", log::kv("dir", f.name),
                                 log::kv("error", to_string(f.log->error())));
      return unexpected(f.log->error());
    }
    logs_.emplace(std::move(f.tp), Entry{std::move(**f.log), f.topic_id});
  }
  loaded_from_summary_ = restored.load();
  const std::int64_t open_ms = ms_since(opening);
  // The summary describes the directories as they were: from here on they change.
  if (auto ok = fs_.remove(summary_path); !ok && !ok.error().not_found()) return unexpected(Errc::kStorageError);
  if (*clean) {
    // From here on a crash is unclean again.
    if (!fs_.remove(marker) || !fs_.sync_directory(dir_)) return unexpected(Errc::kStorageError);
  }
  log::get("storage")->info("event=log_dir_loaded {} {} {} {} {} {} {}", log::kv("dir", dir_.string()),
                            log::kv("partitions", logs_.size()), log::kv("clean_shutdown", had_clean_shutdown_),
                            log::kv("from_summary", loaded_from_summary_), log::kv("read_ms", read_ms),
                            log::kv("open_ms", open_ms), log::kv("total_ms", ms_since(started)));
  return {};
}

PartitionLog* LogManager::get(const TopicPartition& tp) const {
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second.log.get();
}

std::optional<Uuid> LogManager::topic_id(const TopicPartition& tp) const {
  auto it = logs_.find(tp);
  return it == logs_.end() ? std::nullopt : it->second.topic_id;
}

std::vector<TopicPartition> LogManager::partitions() const {
  std::vector<TopicPartition> out;
  out.reserve(logs_.size());
  for (const auto& [tp, entry] : logs_) out.push_back(tp);
  return out;
}

Result<PartitionLog*, Errc> LogManager::create(const TopicPartition& tp, const Uuid& topic_id, LogConfig config) {
  WEIR_ASSERT(!closed_);
  if (PartitionLog* existing = get(tp)) return existing;
  const fs::path dir = dir_ / to_string(tp);
  auto existed = fs_.exists(dir);
  // A directory prepare() made is used as it is (writing partition.metadata again could fail
  // where the first write fit).
  if (!prepared_.contains(tp)) {
    if (auto ok = prepare(tp, topic_id); !ok) return unexpected(ok.error());
  }
  prepared_.erase(tp);
  FileCache::clear_last_failure();
  auto log = PartitionLog::open(fs_, dir, config, clock_, RecoveryHint{.clean_shutdown = true});
  if (!log) {
    create_failed(tp, dir, existed && !*existed, log.error());
    return unexpected(log.error());
  }
  PartitionLog* out = log->get();
  logs_.emplace(tp, Entry{std::move(*log), topic_id});
  return out;
}

Result<void, Errc> LogManager::prepare(const TopicPartition& tp, const Uuid& topic_id) {
  const Prepared p = prepare({{tp, topic_id}}).front();
  if (p.ok()) return {};
  return unexpected(*p.error);
}

std::vector<LogManager::Prepared> LogManager::prepare(const std::vector<std::pair<TopicPartition, Uuid>>& partitions,
                                                      const std::vector<std::int32_t>& leader_epochs) {
  WEIR_ASSERT(!closed_);
  struct Made {
    bool made_dir = false;
    std::vector<std::pair<fs::path, std::string>> files;  // (path, content) still to be put in place
  };
  std::vector<Prepared> out(partitions.size());
  std::vector<Made> made(partitions.size());
  const auto fail = [&](std::size_t i, Errc error) {
    out[i].error = error;
    out[i].failure = FileCache::take_last_failure();
  };
  // Many new partitions at once: their files are written without syncs and made durable, with the
  // new directories, by one syncfs (instead of four fsyncs a partition: a 1,000-partition
  // CreateTopics made 4,000). A file is written in place in a directory made here: until that
  // syncfs returns nothing records the partition, and a crash before it leaves at most a
  // directory no metadata names, as a crash between mkdir and the first write always could. In a
  // directory a crash left (it may hold a log) the files are written aside, renamed into place
  // after the syncfs, and the renames made durable by a second one. Few: each on its own.
  std::unique_ptr<FileSystemSync> whole;
  const auto absent = static_cast<std::size_t>(
      std::ranges::count_if(partitions, [&](const auto& p) { return get(p.first) == nullptr; }));
  if (!syncfs_failed_ && absent >= options_.syncfs_min_partitions) {
    if (auto opened = fs_.open_filesystem_sync(dir_)) whole = std::move(*opened);  // before the writes
  }
  // Each partition's directory and files on several threads, so that their syncs (if any)
  // overlap; the logs are not touched meanwhile. A failure's details are per thread.
  parallel_for(partitions.size(), kParallelSyncThreads, [&](std::size_t i) {
    const auto& [tp, topic_id] = partitions[i];
    if (get(tp) != nullptr) return;
    const fs::path dir = dir_ / to_string(tp);
    FileCache::clear_last_failure();
    auto existed = fs_.exists(dir);
    auto make = [&]() -> Status<Errc> {
      if (!existed || !fs_.create_directory(dir)) return unexpected(Errc::kStorageError);
      made[i].made_dir = !*existed;
      if (made[i].made_dir) {
        // The first (empty) segment now, so that the directory syncs below make its files durable
        // too: otherwise the partition's first acks=all write also syncs the directory. (The
        // files are empty whatever the topic's index settings; the log opens them later.)
        auto first = Segment::create(fs_, dir, 0, SegmentConfig{}, clock_.wall_ms());
        if (!first) return unexpected(first.error());
      }
      // Only in a directory made here: one a crash left behind may hold a log already.
      const bool epoch = i < leader_epochs.size() && leader_epochs[i] >= 0 && made[i].made_dir;
      if (whole == nullptr) {
        if (auto ok = write_partition_metadata(fs_, dir / kPartitionMetadataFile, topic_id); !ok) return ok;
        if (!epoch) return {};
        return write_leader_epoch_checkpoint(fs_, dir / kLeaderEpochCheckpointFile, {EpochEntry{leader_epochs[i], 0}});
      }
      made[i].files.emplace_back(dir / kPartitionMetadataFile, encode_partition_metadata(topic_id));
      if (epoch) {
        made[i].files.emplace_back(dir / kLeaderEpochCheckpointFile,
                                   encode_leader_epoch_checkpoint({EpochEntry{leader_epochs[i], 0}}));
      }
      for (const auto& [path, content] : made[i].files) {
        if (auto ok = write_unsynced(made[i].made_dir ? path : temporary_path(path), content); !ok) return ok;
      }
      return {};
    };
    if (auto ok = make(); !ok) fail(i, ok.error());
  });
  // The partitions whose files are written and not yet durable; those of them written aside.
  std::vector<std::size_t> pending;
  std::vector<std::size_t> aside;
  if (whole != nullptr) {
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      if (!out[i].ok() || made[i].files.empty()) continue;
      pending.push_back(i);
      if (!made[i].made_dir) aside.push_back(i);
    }
  }
  bool synced_everything = false;
  if (!pending.empty()) {
    if (!sync_filesystem(*whole)) {
      parallel_for(pending.size(), kParallelSyncThreads, [&](std::size_t k) {
        const std::size_t i = pending[k];
        FileCache::clear_last_failure();
        for (const auto& [path, content] : made[i].files) {
          auto file = fs_.open(made[i].made_dir ? path : temporary_path(path), OpenMode::kReadWrite);
          if (!file || !(*file)->sync()) return fail(i, Errc::kStorageError);
        }
      });
    }
    parallel_for(aside.size(), kParallelSyncThreads, [&](std::size_t k) {
      const std::size_t i = aside[k];
      if (!out[i].ok()) return;
      FileCache::clear_last_failure();
      for (const auto& [path, content] : made[i].files) {
        if (!fs_.rename(temporary_path(path), path)) return fail(i, Errc::kStorageError);
      }
    });
    // The new directories and segment files (and the renames): the first syncfs, one more, or
    // each directory.
    synced_everything = !syncfs_failed_ && (aside.empty() || sync_filesystem(*whole));
    if (!synced_everything) {
      parallel_for(pending.size(), kParallelSyncThreads, [&](std::size_t k) {
        const std::size_t i = pending[k];
        if (!out[i].ok()) return;
        FileCache::clear_last_failure();
        if (!fs_.sync_directory(dir_ / to_string(partitions[i].first))) fail(i, Errc::kStorageError);
      });
    }
    for (std::size_t i : aside) {
      if (out[i].ok()) continue;
      // A directory a crash left: only this call's files go.
      for (const auto& [path, content] : made[i].files) (void)fs_.remove(temporary_path(path));
    }
  }
  // One sync of the log dir makes every new directory in it durable.
  const bool any_made = std::ranges::any_of(made, [](const Made& m) { return m.made_dir; });
  if (any_made && !synced_everything) {
    FileCache::clear_last_failure();
    if (!fs_.sync_directory(dir_)) {
      const std::optional<IoFailure> failure = FileCache::take_last_failure();
      for (std::size_t i = 0; i < partitions.size(); ++i) {
        if (out[i].ok() && get(partitions[i].first) == nullptr) {
          out[i].error = Errc::kStorageError;
          out[i].failure = failure;
        }
      }
    }
  }
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const TopicPartition& tp = partitions[i].first;
    if (out[i].ok()) {
      if (get(tp) == nullptr) prepared_.insert(tp);
      continue;
    }
    create_failed(tp, dir_ / to_string(tp), made[i].made_dir, *out[i].error, out[i].failure);
  }
  return out;
}

fs::path LogManager::temporary_path(const fs::path& path) {
  fs::path tmp = path;
  tmp += ".tmp";  // write_file_atomically's name: a crash's leftover is the same kind of file
  return tmp;
}

Status<Errc> LogManager::write_unsynced(const fs::path& path, std::string_view content) {
  auto file = fs_.open(path, OpenMode::kCreateTruncate);
  if (file && (*file)->append(as_bytes(content))) return {};
  (void)fs_.remove(path);  // best effort: do not leave a partial file holding space
  return unexpected(Errc::kStorageError);
}

bool LogManager::sync_filesystem(FileSystemSync& whole) {
  if (auto ok = whole.sync(); !ok) {
    // It cannot say which file lost data, and Linux reports a write-back error once: the files
    // are synced one by one now, and from now on (as the Flusher does).
    log::get("storage")->error("event=syncfs_failed {} action=sync_each_file_from_now_on",
                               log::kv("error", to_string(ok.error())));
    syncfs_failed_ = true;
    return false;
  }
  return true;
}

void LogManager::create_failed(const TopicPartition& tp, const fs::path& dir, bool made_dir, Errc error) {
  create_failed(tp, dir, made_dir, error, FileCache::take_last_failure());
}

void LogManager::create_failed(const TopicPartition& tp, const fs::path& dir, bool made_dir, Errc error,
                               const std::optional<IoFailure>& failure) {
  const bool removed = made_dir && remove_all(fs_, dir).has_value();
  log::get("storage")->error("event=partition_create_failed {} {} {} {} {}", log::kv("partition", tp),
                             log::kv("op", failure ? failure->op : std::string("-")),
                             log::kv("path", failure ? failure->path.string() : dir.string()),
                             log::kv("error", failure ? to_string(failure->error) : std::string(to_string(error))),
                             log::kv("dir_removed", removed));
  last_create_failure_ = failure;
}

void LogManager::discard_prepared(const TopicPartition& tp) {
  WEIR_ASSERT(!closed_);
  prepared_.erase(tp);
  if (get(tp) != nullptr) return;
  const fs::path dir = dir_ / to_string(tp);
  if (auto ok = remove_all(fs_, dir); !ok && !ok.error().not_found()) {
    log::get("storage")->warn("event=partition_dir_remove_failed {} {}", log::kv("path", dir.string()),
                              log::kv("error", to_string(ok.error())));
  }
}

Result<void, Errc> LogManager::remove(const TopicPartition& tp) {
  WEIR_ASSERT(!closed_);
  auto it = logs_.find(tp);
  if (it == logs_.end()) return unexpected(Errc::kNotFound);
  auto removed = it->second.log->remove();
  logs_.erase(it);
  uncleanable_.erase(tp);
  return removed;
}

std::vector<TopicPartition> LogManager::cleanable(std::int64_t now_ms) {
  WEIR_ASSERT(!closed_);
  std::vector<TopicPartition> in_progress;
  std::vector<std::pair<double, TopicPartition>> dirty;
  for (const auto& [tp, entry] : logs_) {
    PartitionLog& log = *entry.log;
    if (!log.config().cleanup_compact || log.failed() || uncleanable_.contains(tp)) continue;
    if (log.cleaning_in_progress()) {
      in_progress.push_back(tp);
      continue;
    }
    auto info = LogCleaner::examine(log, now_ms);
    if (!info) {
      log::get("storage")->error("event=clean_examine_failed {} {}", log::kv("partition", tp),
                                 log::kv("error", to_string(info.error())));
      uncleanable_.insert(tp);
      continue;
    }
    if (info->needs_cleaning) dirty.emplace_back(info->dirty_ratio, tp);
  }
  std::stable_sort(dirty.begin(), dirty.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [ratio, tp] : dirty) in_progress.push_back(std::move(tp));
  return in_progress;
}

Result<CleanResult, Errc> LogManager::clean(const TopicPartition& tp, std::int64_t now_ms, std::int64_t budget_bytes,
                                            const ActiveProducers* producers) {
  WEIR_ASSERT(!closed_);
  PartitionLog* log = get(tp);
  if (log == nullptr) return unexpected(Errc::kNotFound);
  if (uncleanable_.contains(tp)) return CleanResult{};
  auto result = cleaner_.clean(*log, now_ms, budget_bytes, producers);
  if (!result) {
    uncleanable_.insert(tp);
    return result;
  }
  if (result->state == CleanState::kCompleted) {
    if (auto ok = write_cleaner_checkpoint(cleaner_checkpoints()); !ok) {
      // The cleaned segments are in place; an old checkpoint only means cleaning again.
      log::get("storage")->warn("event=cleaner_checkpoint_deferred {}", log::kv("dir", dir_.string()));
    }
  }
  return result;
}

Status<Errc> LogManager::write_cleaner_checkpoint(OffsetCheckpoint checkpoints) {
  if (checkpoints == cleaner_checkpoint_written_) return {};
  if (auto ok = write_offset_checkpoint(fs_, dir_ / kCleanerOffsetCheckpointFile, checkpoints); !ok) return ok;
  cleaner_checkpoint_written_ = std::move(checkpoints);
  return {};
}

Result<void, Errc> LogManager::write_checkpoints() {
  CheckpointValues values;
  for (const auto& [tp, entry] : logs_) {
    values.recovery_points[tp] = entry.log->recovery_point();
    values.log_starts[tp] = entry.log->log_start_offset();
    values.high_watermarks[tp] = entry.log->high_watermark();
  }
  values.cleaner = cleaner_checkpoints();
  return write_checkpoints(std::move(values));
}

OffsetCheckpoint LogManager::cleaner_checkpoints() const {
  OffsetCheckpoint checkpoints;
  for (const auto& [tp, entry] : logs_) {
    if (auto offset = entry.log->cleaner_checkpoint()) checkpoints[tp] = *offset;
  }
  return checkpoints;
}

Status<Errc> LogManager::write_if_changed(const fs::path& path, const OffsetCheckpoint& offsets,
                                          std::optional<WrittenText>& written) {
  // A file whose values did not change is not written again, so an idle broker's periodic round
  // writes and syncs nothing (each file written is synced, and its directory: six syncs a
  // minute otherwise). Kept as a hash, not the text (megabytes at 100,000 partitions): should two
  // different texts hash alike, the file keeps its previous values, which are older and valid,
  // as after a crash between two rounds.
  std::string text = encode_offset_checkpoint(offsets);
  const WrittenText now{std::hash<std::string_view>{}(text), text.size()};
  if (written == now) return {};
  written.reset();  // unknown if the write fails part way
  if (auto ok = write_offset_checkpoint_text(fs_, path, text); !ok) return ok;
  written = now;
  return {};
}

Result<void, Errc> LogManager::write_checkpoints(CheckpointValues values) {
  if (auto ok = write_if_changed(dir_ / kRecoveryPointCheckpointFile, values.recovery_points, recovery_points_written_);
      !ok) {
    return ok;
  }
  if (auto ok = write_if_changed(dir_ / kLogStartOffsetCheckpointFile, values.log_starts, log_starts_written_); !ok) {
    return ok;
  }
  if (auto ok =
          write_if_changed(dir_ / kReplicationOffsetCheckpointFile, values.high_watermarks, high_watermarks_written_);
      !ok) {
    return ok;
  }
  return write_cleaner_checkpoint(std::move(values.cleaner));
}

std::optional<LogSummary> LogManager::read_summary(const fs::path& path) { return read_summary_file(fs_, path); }

void LogManager::write_summary(const fs::path& path, const LogSummary& summary) {
  const std::vector<std::byte> bytes = encode_log_summary(summary);
  if (auto ok = write_file_atomically(fs_, path, as_string_view(bytes)); !ok) {
    // Only the next start's speed depends on it: it reads every log's files instead.
    log::get("storage")->warn("event=log_summary_not_written {} {}", log::kv("path", path.string()),
                              log::kv("error", to_string(ok.error())));
    (void)fs_.remove(path);
  }
}

Result<void, Errc> LogManager::close(std::int64_t broker_epoch) {
  if (closed_) return {};
  // Each log syncs its files as it closes: many logs close at once, so their syncs overlap
  // (parallel.h). The logs share nothing but the file cache, which is thread-safe.
  std::vector<std::pair<const TopicPartition*, const Entry*>> logs;
  logs.reserve(logs_.size());
  for (const auto& [tp, entry] : logs_) logs.emplace_back(&tp, &entry);
  std::atomic<bool> failed{false};
  // What the next start needs to build each log without reading it (log_summary.h); a log whose
  // directory cannot be identified is left out (the next start reads it).
  std::vector<std::optional<PartitionSummary>> summaries(logs.size());
  parallel_for(logs.size(), kParallelSyncThreads, [&](std::size_t i) {
    PartitionLog& log = *logs[i].second->log;
    if (auto ok = log.close(); !ok) {
      log::get("storage")->error("event=partition_close_failed {} {}", log::kv("partition", *logs[i].first),
                                 log::kv("error", to_string(ok.error())));
      failed = true;
      return;
    }
    auto summary = log.summary();
    if (!summary) return;
    auto identity = fs_.identity(log.dir());
    if (!identity) return;
    PartitionSummary& s = summaries[i].emplace(std::move(*summary));
    s.dir_name = log.dir().filename().string();
    s.dir_identity = *identity;
    s.topic_id = logs[i].second->topic_id;
  });
  if (failed) return unexpected(Errc::kStorageError);  // no marker: the next start recovers
  if (auto ok = write_checkpoints(); !ok) return ok;
  if (!write_file_atomically(fs_, dir_ / kCleanShutdownFile, clean_shutdown_content(broker_epoch))) {
    return unexpected(Errc::kStorageError);
  }
  closed_ = true;
  // After the marker, naming it: a crash before the summary is complete leaves none (the next
  // start reads the logs' files), and a marker another broker writes later is not this one.
  if (auto marker = fs_.identity(dir_ / kCleanShutdownFile)) {
    LogSummary summary{*marker, {}};
    summary.partitions.reserve(summaries.size());
    for (auto& s : summaries) {
      if (s) summary.partitions.push_back(std::move(*s));
    }
    write_summary(dir_ / kLogSummaryFile, summary);
  }
  return {};
}

}  // namespace weir::storage
