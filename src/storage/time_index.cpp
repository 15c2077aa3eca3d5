#include "storage/time_index.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"

namespace weir::storage {

namespace {
static_assert(TimeIndex::kEntrySize == 12, "timestamp (8) + relative offset (4)");
constexpr std::size_t kTimestampAt = 0;
constexpr std::size_t kRelativeOffsetAt = 8;
}  // namespace

TimeIndex::TimeIndex(TrackedFile file, std::int64_t base_offset, std::int64_t max_entries) noexcept
    : file_(std::move(file)), base_offset_(base_offset), max_entries_(std::max<std::int64_t>(1, max_entries)) {}

void TimeIndex::encode_entry(std::int64_t timestamp, std::int32_t relative_offset, std::byte* out) noexcept {
  store_be(out + kTimestampAt, timestamp);
  store_be(out + kRelativeOffsetAt, relative_offset);
}

Status<Errc> TimeIndex::load() {
  const std::int64_t size = file_.file().size();
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  auto n = file_.file().pread(0, bytes);
  if (!n) return unexpected(Errc::kStorageError);
  const std::size_t count = *n / kEntrySize;
  std::vector<Entry> entries;
  entries.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* p = bytes.data() + i * kEntrySize;
    const Entry e{load_be<std::int64_t>(p + kTimestampAt), load_be<std::int32_t>(p + kRelativeOffsetAt)};
    if (i > 0 && e.timestamp == 0 && e.relative_offset == 0) break;  // untrimmed preallocated tail
    const bool ordered = entries.empty() || (e.timestamp > entries.back().timestamp &&
                                             e.relative_offset >= entries.back().relative_offset);
    if (e.relative_offset < 0 || !ordered) return unexpected(Errc::kCorruptMessage);
    entries.push_back(e);
  }
  const auto valid_bytes = static_cast<std::int64_t>(entries.size() * kEntrySize);
  if (valid_bytes != size && !file_.truncate(valid_bytes)) return unexpected(Errc::kStorageError);
  entries_ = std::move(entries);
  loaded_ = true;
  return {};
}

Result<std::optional<TimestampOffsetEntry>, Errc> TimeIndex::read_last_entry() const {
  if (loaded_) return last_entry();
  const std::int64_t size = file_.file().size();
  if (size < static_cast<std::int64_t>(kEntrySize)) return std::optional<TimestampOffsetEntry>();
  std::byte bytes[kEntrySize];
  const std::int64_t at = (size / static_cast<std::int64_t>(kEntrySize) - 1) * static_cast<std::int64_t>(kEntrySize);
  auto n = file_.file().pread(at, bytes);
  if (!n || *n != kEntrySize) return unexpected(Errc::kStorageError);
  const std::int64_t timestamp = load_be<std::int64_t>(bytes + kTimestampAt);
  const std::int32_t relative = load_be<std::int32_t>(bytes + kRelativeOffsetAt);
  if (relative < 0) return unexpected(Errc::kCorruptMessage);
  if (at > 0 && timestamp == 0 && relative == 0) return unexpected(Errc::kCorruptMessage);  // untrimmed
  return std::optional<TimestampOffsetEntry>(TimestampOffsetEntry{timestamp, base_offset_ + relative});
}

bool TimeIndex::would_append(std::int64_t timestamp, std::span<const TimestampOffsetEntry> pending) const noexcept {
  std::int64_t last = -1;  // Kafka's NO_TIMESTAMP: an entry needs a real timestamp
  if (!pending.empty()) {
    last = pending.back().timestamp;
  } else if (!entries_.empty()) {
    last = entries_.back().timestamp;
  }
  return timestamp > last;
}

Status<Errc> TimeIndex::append(std::span<const TimestampOffsetEntry> entries, bool ignore_full) {
  WEIR_ASSERT(loaded_, "append to a time index that is not loaded");
  if (!ignore_full) {
    const std::size_t room =
        static_cast<std::size_t>(max_entries_) - std::min<std::size_t>(entries_.size(), max_entries_);
    entries = entries.first(std::min(entries.size(), room));
  }
  if (entries.empty()) return {};
  std::vector<std::byte> bytes(entries.size() * kEntrySize);
  std::optional<TimestampOffsetEntry> last = last_entry();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const TimestampOffsetEntry& e = entries[i];
    WEIR_ASSERT(e.offset >= base_offset_ && e.offset - base_offset_ <= std::numeric_limits<std::int32_t>::max());
    WEIR_ASSERT(!last || (e.timestamp > last->timestamp && e.offset >= last->offset),
                "time index entry ({}, {}) not after ({}, {})", e.timestamp, e.offset, last->timestamp, last->offset);
    encode_entry(e.timestamp, static_cast<std::int32_t>(e.offset - base_offset_), bytes.data() + i * kEntrySize);
    last = e;
  }
  const std::int64_t old_size = file_.file().size();
  if (!file_.append(bytes)) {
    (void)file_.truncate(old_size);
    return unexpected(Errc::kStorageError);
  }
  for (const TimestampOffsetEntry& e : entries) {
    entries_.push_back(Entry{e.timestamp, static_cast<std::int32_t>(e.offset - base_offset_)});
  }
  return {};
}

TimestampOffsetEntry TimeIndex::lookup(std::int64_t target) const noexcept {
  WEIR_ASSERT(loaded_);
  auto it = std::upper_bound(entries_.begin(), entries_.end(), target,
                             [](std::int64_t value, const Entry& e) { return value < e.timestamp; });
  if (it == entries_.begin()) return {-1, base_offset_};
  --it;
  return {it->timestamp, base_offset_ + it->relative_offset};
}

std::optional<TimestampOffsetEntry> TimeIndex::last_entry() const noexcept {
  if (entries_.empty()) return std::nullopt;
  return TimestampOffsetEntry{entries_.back().timestamp, base_offset_ + entries_.back().relative_offset};
}

Status<Errc> TimeIndex::truncate_to(std::int64_t offset) {
  WEIR_ASSERT(loaded_);
  const std::int64_t relative = offset - base_offset_;
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.relative_offset >= relative; });
  const auto keep = static_cast<std::size_t>(it - entries_.begin());
  if (keep == entries_.size()) return {};
  if (!file_.truncate(static_cast<std::int64_t>(keep * kEntrySize))) return unexpected(Errc::kStorageError);
  entries_.resize(keep);
  return {};
}

Status<Errc> TimeIndex::reset(std::span<const TimestampOffsetEntry> entries) {
  if (!file_.truncate(0)) return unexpected(Errc::kStorageError);
  entries_.clear();
  loaded_ = true;
  return append(entries, /*ignore_full=*/true);
}

}  // namespace weir::storage
