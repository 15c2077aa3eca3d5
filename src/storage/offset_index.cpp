#include "storage/offset_index.h"

#include <algorithm>
#include <limits>

#include "base/assert.h"

namespace weir::storage {

namespace {
static_assert(OffsetIndex::kEntrySize == 8, "relative offset (4) + position (4)");
constexpr std::size_t kRelativeOffsetAt = 0;
constexpr std::size_t kPositionAt = 4;
}  // namespace

OffsetIndex::OffsetIndex(TrackedFile file, std::int64_t base_offset, std::int64_t max_entries) noexcept
    : file_(std::move(file)), base_offset_(base_offset), max_entries_(std::max<std::int64_t>(1, max_entries)) {}

void OffsetIndex::encode_entry(std::int32_t relative_offset, std::int32_t position, std::byte* out) noexcept {
  store_be(out + kRelativeOffsetAt, relative_offset);
  store_be(out + kPositionAt, position);
}

Status<Errc> OffsetIndex::load(std::int64_t log_size) {
  const std::int64_t size = file_.file().size();
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  auto n = file_.file().pread(0, bytes);
  if (!n) return unexpected(Errc::kStorageError);
  const std::size_t count = *n / kEntrySize;
  std::vector<Entry> entries;
  entries.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* p = bytes.data() + i * kEntrySize;
    const Entry e{load_be<std::int32_t>(p + kRelativeOffsetAt), load_be<std::int32_t>(p + kPositionAt)};
    if (i > 0 && e.relative_offset == 0 && e.position == 0) break;  // untrimmed preallocated tail
    const bool increasing =
        entries.empty() || (e.relative_offset > entries.back().relative_offset && e.position > entries.back().position);
    if (e.relative_offset < 0 || e.position < 0 || e.position >= log_size || !increasing) {
      return unexpected(Errc::kCorruptMessage);
    }
    entries.push_back(e);
  }
  const auto valid_bytes = static_cast<std::int64_t>(entries.size() * kEntrySize);
  if (valid_bytes != size && !file_.truncate(valid_bytes)) return unexpected(Errc::kStorageError);
  entries_ = std::move(entries);
  loaded_ = true;
  return {};
}

Status<Errc> OffsetIndex::append(std::span<const OffsetPosition> entries) {
  WEIR_ASSERT(loaded_, "append to an index that is not loaded");
  const std::size_t room =
      static_cast<std::size_t>(max_entries_) - std::min<std::size_t>(entries_.size(), max_entries_);
  entries = entries.first(std::min(entries.size(), room));
  if (entries.empty()) return {};
  std::vector<std::byte> bytes(entries.size() * kEntrySize);
  std::optional<OffsetPosition> last = last_entry();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const OffsetPosition& e = entries[i];
    WEIR_ASSERT(e.offset >= base_offset_ && e.offset - base_offset_ <= std::numeric_limits<std::int32_t>::max(),
                "offset {} outside segment {}", e.offset, base_offset_);
    WEIR_ASSERT(e.position >= 0 && e.position <= std::numeric_limits<std::int32_t>::max());
    WEIR_ASSERT(!last || (e.offset > last->offset && e.position > last->position),
                "index entry ({}, {}) not after ({}, {})", e.offset, e.position, last->offset, last->position);
    encode_entry(static_cast<std::int32_t>(e.offset - base_offset_), static_cast<std::int32_t>(e.position),
                 bytes.data() + i * kEntrySize);
    last = e;
  }
  const std::int64_t old_size = file_.file().size();
  if (!file_.append(bytes)) {
    (void)file_.truncate(old_size);
    return unexpected(Errc::kStorageError);
  }
  for (const OffsetPosition& e : entries) {
    entries_.push_back(
        Entry{static_cast<std::int32_t>(e.offset - base_offset_), static_cast<std::int32_t>(e.position)});
  }
  return {};
}

OffsetPosition OffsetIndex::lookup(std::int64_t target) const noexcept {
  WEIR_ASSERT(loaded_);
  const std::int64_t relative = target - base_offset_;
  if (relative < 0) return {base_offset_, 0};
  // First entry with relative offset > target, then step back.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), relative,
                             [](std::int64_t value, const Entry& e) { return value < e.relative_offset; });
  if (it == entries_.begin()) return {base_offset_, 0};
  --it;
  return {base_offset_ + it->relative_offset, it->position};
}

std::optional<OffsetPosition> OffsetIndex::last_whole_within(std::int64_t end_limit, std::int64_t below_offset,
                                                             std::int64_t log_end) const noexcept {
  WEIR_ASSERT(loaded_);
  // Entries whose batch is known to end by end_limit: those followed by an entry at or before it
  // (all but the last of the entries at or before it), and the last entry if the log ends by then.
  auto known = std::upper_bound(entries_.begin(), entries_.end(), end_limit,
                                [](std::int64_t limit, const Entry& e) { return limit < e.position; });
  if (known != entries_.end() || log_end > end_limit) {
    if (known == entries_.begin()) return std::nullopt;
    --known;
  }
  // Of those, the ones whose last offset is below the bound (offsets increase with positions).
  const std::int64_t relative_bound = below_offset - base_offset_;
  auto below = std::lower_bound(entries_.begin(), known, relative_bound,
                                [](const Entry& e, std::int64_t bound) { return e.relative_offset < bound; });
  if (below == entries_.begin()) return std::nullopt;
  --below;
  return OffsetPosition{base_offset_ + below->relative_offset, below->position};
}

std::optional<OffsetPosition> OffsetIndex::last_entry() const noexcept {
  if (entries_.empty()) return std::nullopt;
  return OffsetPosition{base_offset_ + entries_.back().relative_offset, entries_.back().position};
}

Status<Errc> OffsetIndex::truncate_to(std::int64_t offset) {
  WEIR_ASSERT(loaded_);
  const std::int64_t relative = offset - base_offset_;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), relative,
                             [](const Entry& e, std::int64_t value) { return e.relative_offset < value; });
  const auto keep = static_cast<std::size_t>(it - entries_.begin());
  if (keep == entries_.size()) return {};
  if (!file_.truncate(static_cast<std::int64_t>(keep * kEntrySize))) return unexpected(Errc::kStorageError);
  entries_.resize(keep);
  return {};
}

Status<Errc> OffsetIndex::reset(std::span<const OffsetPosition> entries) {
  if (!file_.truncate(0)) return unexpected(Errc::kStorageError);
  entries_.clear();
  loaded_ = true;
  return append(entries);
}

}  // namespace weir::storage
