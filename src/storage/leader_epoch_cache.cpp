#include "storage/leader_epoch_cache.h"

#include <algorithm>

#include "base/assert.h"
#include "base/log.h"

namespace weir::storage {

LeaderEpochCache::LeaderEpochCache(FileSystem& fs, std::filesystem::path path) noexcept
    : fs_(fs), path_(path.native()) {}

Status<Errc> LeaderEpochCache::load() {
  auto entries = read_leader_epoch_checkpoint(fs_, path_);
  if (!entries) {
    if (entries.error() == Errc::kNotFound) return {};
    if (entries.error() == Errc::kStorageError) return unexpected(Errc::kStorageError);
    log::get("storage")->warn("event=leader_epoch_checkpoint_malformed {}", log::kv("path", path_));
    entries_.clear();
    dirty_ = true;
    return {};
  }
  // Keep only a strictly increasing prefix; anything else is not something we wrote.
  entries_.clear();
  for (const EpochEntry& e : *entries) {
    if (e.epoch < 0 || e.start_offset < 0) break;
    if (!entries_.empty() && (e.epoch <= entries_.back().epoch || e.start_offset < entries_.back().start_offset)) break;
    entries_.push_back(e);
  }
  dirty_ = entries_.size() != entries->size();
  return {};
}

bool LeaderEpochCache::assign(std::int32_t epoch, std::int64_t start_offset) {
  WEIR_ASSERT(epoch >= 0 && start_offset >= 0, "epoch {} start offset {}", epoch, start_offset);
  if (!entries_.empty()) {
    const EpochEntry& last = entries_.back();
    if (last.epoch == epoch && start_offset >= last.start_offset) return false;
  }
  while (!entries_.empty() && (entries_.back().epoch >= epoch || entries_.back().start_offset >= start_offset)) {
    entries_.pop_back();
  }
  entries_.push_back(EpochEntry{epoch, start_offset});
  dirty_ = true;
  return true;
}

bool LeaderEpochCache::truncate_from_end(std::int64_t end_offset) {
  bool changed = false;
  while (!entries_.empty() && entries_.back().start_offset >= end_offset) {
    entries_.pop_back();
    changed = true;
  }
  dirty_ = dirty_ || changed;
  return changed;
}

bool LeaderEpochCache::truncate_from_start(std::int64_t start_offset) {
  auto first_kept = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const EpochEntry& e) { return e.start_offset > start_offset; });
  if (first_kept == entries_.begin()) return false;
  EpochEntry moved = *(first_kept - 1);
  if (first_kept - entries_.begin() == 1 && moved.start_offset == start_offset) return false;
  moved.start_offset = start_offset;
  entries_.erase(entries_.begin(), first_kept);
  entries_.insert(entries_.begin(), moved);
  dirty_ = true;
  return true;
}

std::optional<std::pair<std::int32_t, std::int64_t>> LeaderEpochCache::end_offset_for(
    std::int32_t epoch, std::int64_t log_end_offset) const {
  if (epoch < 0 || entries_.empty()) return std::nullopt;
  if (entries_.back().epoch == epoch) return std::pair{epoch, log_end_offset};
  auto higher = std::find_if(entries_.begin(), entries_.end(), [&](const EpochEntry& e) { return e.epoch > epoch; });
  if (higher == entries_.end()) return std::nullopt;
  if (higher == entries_.begin()) return std::pair{epoch, higher->start_offset};
  return std::pair{(higher - 1)->epoch, higher->start_offset};
}

std::optional<EpochEntry> LeaderEpochCache::latest() const noexcept {
  if (entries_.empty()) return std::nullopt;
  return entries_.back();
}

Status<Errc> LeaderEpochCache::write_if_dirty() {
  if (!dirty_) return {};
  if (auto ok = write_leader_epoch_checkpoint(fs_, path_, entries_); !ok) return ok;
  dirty_ = false;
  return {};
}

}  // namespace weir::storage
