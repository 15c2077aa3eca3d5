#include "storage/transaction_index.h"

#include <algorithm>

#include "base/bytes.h"

namespace weir::storage {

namespace {
constexpr std::size_t kVersionAt = 0;
constexpr std::size_t kProducerIdAt = 2;
constexpr std::size_t kFirstOffsetAt = 10;
constexpr std::size_t kLastOffsetAt = 18;
constexpr std::size_t kLastStableOffsetAt = 26;
static_assert(kLastStableOffsetAt + 8 == TransactionIndex::kEntrySize);
}  // namespace

TransactionIndex::TransactionIndex(FileSystem& fs, const std::filesystem::path& path) : fs_(fs), path_(path.native()) {}

TransactionIndex::TransactionIndex(FileSystem& fs, std::string path) noexcept : fs_(fs), path_(std::move(path)) {}

void TransactionIndex::encode_entry(const AbortedTxn& txn, std::byte* out) noexcept {
  store_be(out + kVersionAt, kVersion);
  store_be(out + kProducerIdAt, txn.producer_id);
  store_be(out + kFirstOffsetAt, txn.first_offset);
  store_be(out + kLastOffsetAt, txn.last_offset);
  store_be(out + kLastStableOffsetAt, txn.last_stable_offset);
}

Status<Errc> TransactionIndex::open_existing() {
  auto file = fs_.open(path_, OpenMode::kReadWrite);
  if (!file) {
    if (file.error().not_found()) return {};
    return unexpected(Errc::kStorageError);
  }
  file_ = TrackedFile(std::move(*file));
  entries_.reset();
  return {};
}

Status<Errc> TransactionIndex::open_known(std::int64_t size) {
  auto file = fs_.open_known(path_, OpenMode::kReadWrite, size);
  if (!file) return unexpected(file.error().not_found() ? Errc::kNotFound : Errc::kStorageError);
  file_ = TrackedFile(std::move(*file));
  entries_.reset();
  return {};
}

Status<Errc> TransactionIndex::load() const {
  if (entries_) return {};
  std::vector<AbortedTxn> entries;
  if (file_) {
    const std::int64_t size = file_.file().size();
    std::vector<std::byte> bytes(static_cast<std::size_t>(size));
    auto n = file_.file().pread(0, bytes);
    if (!n) return unexpected(Errc::kStorageError);
    for (std::size_t at = 0; at + kEntrySize <= *n; at += kEntrySize) {
      const std::byte* p = bytes.data() + at;
      if (load_be<std::int16_t>(p + kVersionAt) != kVersion) return unexpected(Errc::kCorruptMessage);
      entries.push_back(AbortedTxn{load_be<std::int64_t>(p + kProducerIdAt), load_be<std::int64_t>(p + kFirstOffsetAt),
                                   load_be<std::int64_t>(p + kLastOffsetAt),
                                   load_be<std::int64_t>(p + kLastStableOffsetAt)});
    }
  }
  entries_ = std::move(entries);
  return {};
}

Status<Errc> TransactionIndex::append(const AbortedTxn& txn) {
  if (auto ok = load(); !ok) return ok;
  if (!entries_->empty() && entries_->back().last_offset >= txn.last_offset) return unexpected(Errc::kInvalidRecord);
  if (!file_) {
    auto file = fs_.open(path_, OpenMode::kCreate);
    if (!file) return unexpected(Errc::kStorageError);
    file_ = TrackedFile(std::move(*file));
  }
  std::byte bytes[kEntrySize];
  encode_entry(txn, bytes);
  const std::int64_t old_size = file_.file().size();
  if (!file_.append(bytes)) {
    (void)file_.truncate(old_size);
    return unexpected(Errc::kStorageError);
  }
  entries_->push_back(txn);
  return {};
}

Result<AbortedTxnSearch, Errc> TransactionIndex::collect(std::int64_t fetch_offset,
                                                         std::int64_t upper_bound_offset) const {
  if (auto ok = load(); !ok) return unexpected(ok.error());
  AbortedTxnSearch result;
  for (const AbortedTxn& txn : *entries_) {
    if (txn.last_offset >= fetch_offset && txn.first_offset < upper_bound_offset) result.aborted.push_back(txn);
    if (txn.last_stable_offset >= upper_bound_offset) {
      result.complete = true;
      break;
    }
  }
  return result;
}

Result<std::vector<AbortedTxn>, Errc> TransactionIndex::all() const {
  if (auto ok = load(); !ok) return unexpected(ok.error());
  return *entries_;
}

Status<Errc> TransactionIndex::truncate_to(std::int64_t offset) {
  if (!file_) return {};
  if (auto ok = load(); !ok) return ok;
  auto it =
      std::find_if(entries_->begin(), entries_->end(), [&](const AbortedTxn& t) { return t.last_offset >= offset; });
  const auto keep = static_cast<std::size_t>(it - entries_->begin());
  if (keep == entries_->size()) return {};
  if (!file_.truncate(static_cast<std::int64_t>(keep * kEntrySize))) return unexpected(Errc::kStorageError);
  entries_->resize(keep);
  return {};
}

Status<Errc> TransactionIndex::clear() {
  if (!file_) return {};
  if (!file_.truncate(0)) return unexpected(Errc::kStorageError);
  entries_ = std::vector<AbortedTxn>();
  return {};
}

}  // namespace weir::storage
