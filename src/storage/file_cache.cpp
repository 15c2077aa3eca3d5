#include "storage/file_cache.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>

#include "base/assert.h"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

thread_local std::optional<IoFailure> last_failure;

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A file that was opened with creation or truncation reopens as an existing file.
OpenMode reopen_mode_of(OpenMode mode) { return mode == OpenMode::kRead ? OpenMode::kRead : OpenMode::kReadWrite; }

bool out_of_descriptors(IoError e) { return e.code == EMFILE || e.code == ENFILE; }

// A name key() leaves as it is, once joined to a normal directory.
bool plain_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

}  // namespace

// ------------------------------------------------------------------------------------ FileCache

bool is_disk_failure(const IoError& error) noexcept {
  return error.code != 0 && !error.not_found() && !out_of_descriptors(error) && error.code != EINTR &&
         error.code != EAGAIN;
}

std::shared_ptr<FileCache> FileCache::create(FileSystem& base, std::size_t capacity,
                                             DiskFailureObserver on_disk_failure) {
  return std::shared_ptr<FileCache>(new FileCache(base, capacity, std::move(on_disk_failure)));
}

FileCache::FileCache(FileSystem& base, std::size_t capacity, DiskFailureObserver on_disk_failure)
    : base_(base), capacity_(capacity), on_disk_failure_(std::move(on_disk_failure)) {
  WEIR_ASSERT(capacity_ >= 1);
  stats_.capacity = capacity_;
}

FileCache::~FileCache() {
  // Files hold a shared_ptr to the cache, so none is left.
  WEIR_ASSERT(by_parent_.empty() && lru_head_ == nullptr);
}

std::size_t FileCache::default_capacity() {
  struct rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::size_t{1} << 20;
  return std::max<std::size_t>(kMinCapacity, static_cast<std::size_t>(limit.rlim_cur / 8 * 3));
}

std::string FileCache::key(const fs::path& path) {
  const std::string& given = path.native();
  // Most paths are built normal (a directory, '/', a name): no need to take them apart.
  const bool normal = !given.empty() && given.find("//") == std::string::npos &&
                      given.find("/.") == std::string::npos && !given.starts_with("./") && !given.starts_with("../") &&
                      given != "." && given != ".." && given.back() != '/';
  if (normal) return given;
  std::string k = path.lexically_normal().string();
  while (k.size() > 1 && k.back() == '/') k.pop_back();
  return k;
}

std::optional<IoFailure> FileCache::take_last_failure() { return std::exchange(last_failure, std::nullopt); }

void FileCache::clear_last_failure() { last_failure.reset(); }

void FileCache::fail(std::string_view op, const fs::path& path, IoError error, bool of_file) {
  last_failure = IoFailure{std::string(op), path, error};
  {
    std::lock_guard lock(mutex_);
    ++stats_.failures;
  }
  {
    std::lock_guard lock(log_mutex_);
    if (failure_lines_.allow(monotonic_ms())) {
      // A file's directory is its partition's (segments, indexes, checkpoints).
      const std::string partition = of_file ? path.parent_path().filename().string() : std::string();
      log::get("storage")->error("event=storage_io_failed {} {} {} {} dropped_lines={}", log::kv("op", op),
                                 log::kv("partition", partition), log::kv("path", path.string()),
                                 log::kv("error", to_string(error)), failure_lines_.take_dropped());
    }
  }
  if (on_disk_failure_ && is_disk_failure(error)) on_disk_failure_(*last_failure);
}

FileCache::Stats FileCache::stats() const {
  std::lock_guard lock(mutex_);
  Stats s = stats_;
  s.open = open_;
  return s;
}

void FileCache::unlink_lru_locked(CachedFile& f) {
  if (!f.in_lru_) return;
  f.in_lru_ = false;
  (f.newer_ != nullptr ? f.newer_->older_ : lru_head_) = f.older_;
  (f.older_ != nullptr ? f.older_->newer_ : lru_tail_) = f.newer_;
  f.newer_ = f.older_ = nullptr;
}

void FileCache::touch_locked(CachedFile& f) {
  WEIR_ASSERT(f.open_ != nullptr);
  if (lru_head_ == &f) return;
  unlink_lru_locked(f);
  f.older_ = lru_head_;
  if (lru_head_ != nullptr) lru_head_->newer_ = &f;
  lru_head_ = &f;
  if (lru_tail_ == nullptr) lru_tail_ = &f;
  f.in_lru_ = true;
}

void FileCache::close_locked(CachedFile& f) {
  if (f.open_ == nullptr) return;
  unlink_lru_locked(f);
  f.open_.reset();  // closes the descriptor unless a handle still holds it
  --open_;
}

void FileCache::evict_locked(std::size_t target) {
  // From the least recently used end; a file in use (an operation or a handle holds its open
  // File) moves to the front instead, so each file is looked at once.
  std::size_t looked = open_;
  CachedFile* f = lru_tail_;
  while (open_ > target && f != nullptr && looked-- > 0) {
    CachedFile* newer = f->newer_;
    if (f->open_.use_count() == 1) {
      close_locked(*f);
      ++stats_.evictions;
    } else {
      touch_locked(*f);
    }
    f = newer;
  }
}

IoResult<std::shared_ptr<File>> FileCache::open_base_locked(const std::string& path, OpenMode mode) {
  auto file = base_.open(path, mode);
  if (!file && out_of_descriptors(file.error()) && open_ > 0) {
    evict_locked(open_ / 2);
    file = base_.open(path, mode);
  }
  if (file) ++stats_.opens;
  return file;
}

IoResult<std::shared_ptr<File>> FileCache::acquire_locked(CachedFile& f, bool for_handle) {
  if (f.open_ != nullptr) {
    touch_locked(f);
    if (!for_handle || open_ <= capacity_) return f.open_;
    // Operations took the cache past its capacity; a handle would keep this descriptor open
    // beyond it (a Fetch over many partitions reads each one's file, then asks for a handle).
    // Idle files close first; if that is not enough, the handle is refused.
    evict_locked(capacity_);
    if (f.open_ != nullptr && open_ <= capacity_) return f.open_;
    if (f.open_ != nullptr) {
      ++stats_.refused_handles;
      return unexpected(IoError{EMFILE});
    }
    // This file was the idle one closed: opening it again is refused below at the capacity.
  }
  if (f.unlinked_) return unexpected(IoError{ENOENT});
  if (open_ >= capacity_) evict_locked(capacity_ - 1);
  if (for_handle && open_ >= capacity_) {
    ++stats_.refused_handles;
    return unexpected(IoError{EMFILE});
  }
  auto file = open_base_locked(f.at_.parent->first + f.at_.dir->first + f.name_->first, f.reopen_mode_);
  if (!file) return unexpected(file.error());
  // The file as the cache knows it: bytes of a failed append past the logical size go (the next
  // append would have overwritten them); a file shorter than that was changed behind our back.
  const std::int64_t size = f.size_.load(std::memory_order_relaxed);
  if ((*file)->size() < size) return unexpected(IoError{EIO});
  if ((*file)->size() > size) {
    if (auto cut = (*file)->truncate(size); !cut) return unexpected(cut.error());
  }
  f.open_ = std::move(*file);
  ++open_;
  touch_locked(f);
  return f.open_;
}

IoResult<std::shared_ptr<File>> FileCache::acquire(CachedFile& f, bool for_handle) {
  std::lock_guard lock(mutex_);
  return acquire_locked(f, for_handle);
}

void FileCache::forget(CachedFile& f) {
  std::lock_guard lock(mutex_);
  close_locked(f);
  unlink_path_locked(f);
}

FileCache::Place FileCache::place_of(std::string_view path) {
  const auto last = path.rfind('/');
  if (last == std::string_view::npos) return {{}, {}, path};
  const auto before = last == 0 ? std::string_view::npos : path.rfind('/', last - 1);
  const std::size_t dir_start = before == std::string_view::npos ? 0 : before + 1;
  return {path.substr(0, dir_start), path.substr(dir_start, last + 1 - dir_start), path.substr(last + 1)};
}

FileCache::DirRef FileCache::dir_locked(std::string_view parent, std::string_view dir) {
  auto p = by_parent_.find(parent);
  if (p == by_parent_.end()) p = by_parent_.emplace(std::string(parent), Dirs{}).first;
  auto d = p->second.find(dir);
  if (d == p->second.end()) d = p->second.emplace(std::string(dir), Names{}).first;
  return {p, &*d};
}

void FileCache::link_locked(CachedFile& f, DirRef at, std::string_view name) {
  f.name_ = at.dir->second.emplace(std::string(name), &f);
  f.at_ = at;
  f.linked_ = true;
}

void FileCache::link_locked(CachedFile& f, std::string_view path) {
  const Place p = place_of(path);
  link_locked(f, dir_locked(p.parent, p.dir), p.name);
}

void FileCache::unlink_path_locked(CachedFile& f) {
  if (!f.linked_) return;
  f.linked_ = false;
  Names& names = f.at_.dir->second;
  names.erase(f.name_);
  if (!names.empty()) return;
  Dirs& dirs = f.at_.parent->second;
  dirs.erase(dirs.find(f.at_.dir->first));
  if (dirs.empty()) by_parent_.erase(f.at_.parent);
}

void FileCache::merge_names_locked(Names& from, DirRef to) {
  while (!from.empty()) {
    auto node = from.extract(from.begin());
    CachedFile* c = node.mapped();
    c->name_ = to.dir->second.insert(std::move(node));
    c->at_ = to;
  }
}

std::vector<CachedFile*> FileCache::files_at_locked(std::string_view path) {
  std::vector<CachedFile*> out;
  const Place p = place_of(path);
  const auto parent = by_parent_.find(p.parent);
  if (parent == by_parent_.end()) return out;
  const auto dir = parent->second.find(p.dir);
  if (dir == parent->second.end()) return out;
  for (auto [it, end] = dir->second.equal_range(p.name); it != end; ++it) out.push_back(it->second);
  return out;
}

IoResult<std::shared_ptr<File>> FileCache::open(const fs::path& path, OpenMode mode) {
  const std::string k = key(path);
  std::unique_lock lock(mutex_);
  if (open_ >= capacity_) evict_locked(capacity_ - 1);
  auto file = open_base_locked(k, mode);
  if (!file) {
    lock.unlock();
    // A missing file opened as existing is an answer, not an I/O failure (the checkpoints of a
    // new data directory): the caller decides what it means.
    const bool expected_absence =
        file.error().not_found() && (mode == OpenMode::kRead || mode == OpenMode::kReadWrite);
    if (!expected_absence) fail("open", path, file.error(), true);
    return unexpected(file.error());
  }
  auto cached = std::make_shared<CachedFile>(shared_from_this(), reopen_mode_of(mode), (*file)->size());
  cached->open_ = std::move(*file);
  link_locked(*cached, k);
  ++open_;
  touch_locked(*cached);
  return std::shared_ptr<File>(std::move(cached));
}

IoResult<std::shared_ptr<File>> FileCache::open_known(const fs::path& path, OpenMode mode, std::int64_t size) {
  WEIR_ASSERT(size >= 0);
  const std::string k = key(path);
  auto cached = std::make_shared<CachedFile>(shared_from_this(), reopen_mode_of(mode), size);
  std::lock_guard lock(mutex_);
  link_locked(*cached, k);
  return std::shared_ptr<File>(std::move(cached));
}

IoResult<std::vector<std::shared_ptr<File>>> FileCache::open_known_in(const fs::path& dir,
                                                                      std::span<const KnownFile> files) {
  std::vector<std::shared_ptr<File>> out;
  if (files.empty()) return out;
  // The directory's key from the first file's (key() may rewrite the directory's path).
  const std::string first = key(dir / files.front().name);
  const Place place = place_of(first);
  std::vector<std::shared_ptr<CachedFile>> made;
  made.reserve(files.size());
  for (const KnownFile& f : files) {
    WEIR_ASSERT(f.size >= 0);
    made.push_back(std::make_shared<CachedFile>(shared_from_this(), reopen_mode_of(f.mode), f.size));
  }
  {
    std::lock_guard lock(mutex_);
    const DirRef at = dir_locked(place.parent, place.dir);
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (i == 0 || plain_name(files[i].name)) {
        link_locked(*made[i], at, i == 0 ? place.name : files[i].name);
      } else {
        link_locked(*made[i], key(dir / files[i].name));
      }
    }
  }
  out.reserve(made.size());
  for (auto& c : made) out.push_back(std::move(c));
  return out;
}

IoResult<FileIdentity> FileCache::identity(const fs::path& path) {
  auto id = base_.identity(path);
  if (!id && !id.error().not_found() && id.error().code != ENOTSUP) fail("stat", path, id.error(), false);
  return id;
}

Status<IoError> FileCache::rename(const fs::path& from, const fs::path& to) {
  const std::string f = key(from);
  const std::string t = key(to);
  std::unique_lock lock(mutex_);
  if (auto ok = base_.rename(f, t); !ok) {
    lock.unlock();
    fail("rename", from, ok.error(), false);
    return ok;
  }
  // Whatever `to` was is gone; what was `from` (or under it, for a directory) is now under `to`.
  for (CachedFile* c : files_at_locked(t)) {
    c->unlinked_ = true;
    if (c->open_.use_count() == 1) close_locked(*c);
  }
  for (CachedFile* c : files_at_locked(f)) {
    unlink_path_locked(*c);
    link_locked(*c, t);
  }
  // The directory `from` moves with its entry: the files in it keep their names, and directories
  // below it (their parent's key starts with its path) get their parent's new key.
  const std::string from_dir = f + "/";
  const std::string to_dir = t + "/";
  const Place from_place = place_of(from_dir);
  const Place to_place = place_of(to_dir);
  if (auto parent = by_parent_.find(from_place.parent); parent != by_parent_.end()) {
    if (auto d = parent->second.find(from_place.dir); d != parent->second.end()) {
      auto node = parent->second.extract(d);
      if (parent->second.empty()) by_parent_.erase(parent);
      auto target = by_parent_.find(to_place.parent);
      if (target == by_parent_.end()) target = by_parent_.emplace(std::string(to_place.parent), Dirs{}).first;
      if (auto there = target->second.find(to_place.dir); there != target->second.end()) {
        merge_names_locked(node.mapped(), DirRef{target, &*there});  // unlinked files still registered there
      } else {
        node.key() = std::string(to_place.dir);
        const DirRef moved{target, &*target->second.insert(std::move(node)).position};
        for (auto& named : moved.dir->second) named.second->at_ = moved;
      }
    }
  }
  std::vector<Parents::iterator> under;
  for (auto it = by_parent_.lower_bound(from_dir); it != by_parent_.end() && it->first.starts_with(from_dir); ++it) {
    under.push_back(it);
  }
  for (Parents::iterator it : under) {
    std::string renamed = to_dir + it->first.substr(from_dir.size());
    auto node = by_parent_.extract(it);
    auto there = by_parent_.find(renamed);
    if (there == by_parent_.end()) {
      node.key() = std::move(renamed);
      there = by_parent_.insert(std::move(node)).position;
      for (auto& dir : there->second) {
        for (auto& named : dir.second) named.second->at_.parent = there;
      }
      continue;
    }
    Dirs& dirs = node.mapped();
    while (!dirs.empty()) {
      auto dir = dirs.extract(dirs.begin());
      if (auto same = there->second.find(dir.key()); same != there->second.end()) {
        merge_names_locked(dir.mapped(), DirRef{there, &*same});
      } else {
        const DirRef moved{there, &*there->second.insert(std::move(dir)).position};
        for (auto& named : moved.dir->second) named.second->at_ = moved;
      }
    }
  }
  return {};
}

Status<IoError> FileCache::remove(const fs::path& path) {
  const std::string k = key(path);
  std::unique_lock lock(mutex_);
  if (auto ok = base_.remove(k); !ok) {
    lock.unlock();
    if (!ok.error().not_found()) fail("remove", path, ok.error(), false);
    return ok;
  }
  for (CachedFile* c : files_at_locked(k)) {
    c->unlinked_ = true;
    if (c->open_.use_count() == 1) close_locked(*c);
  }
  return {};
}

Status<IoError> FileCache::create_directory(const fs::path& path) {
  auto ok = base_.create_directory(path);
  if (!ok) fail("create_directory", path, ok.error(), false);
  return ok;
}

IoResult<std::vector<DirEntry>> FileCache::list(const fs::path& dir) {
  auto entries = base_.list(dir);
  if (!entries && !entries.error().not_found() && entries.error().code != ENOTDIR)
    fail("list", dir, entries.error(), false);
  return entries;
}

Status<IoError> FileCache::sync_directory(const fs::path& dir) {
  auto ok = base_.sync_directory(dir);
  if (!ok) fail("sync_directory", dir, ok.error(), false);
  return ok;
}

IoResult<std::unique_ptr<FileSystemSync>> FileCache::open_filesystem_sync(const fs::path& dir) {
  return base_.open_filesystem_sync(dir);
}

IoResult<bool> FileCache::exists(const fs::path& path) {
  auto ok = base_.exists(path);
  if (!ok) fail("exists", path, ok.error(), false);
  return ok;
}

// ----------------------------------------------------------------------------------- CachedFile

CachedFile::CachedFile(std::shared_ptr<FileCache> cache, OpenMode reopen_mode, std::int64_t size) noexcept
    : cache_(std::move(cache)), size_(size), reopen_mode_(reopen_mode) {}

CachedFile::~CachedFile() { cache_->forget(*this); }

std::string CachedFile::path() const {
  std::lock_guard lock(cache_->mutex_);
  return at_.parent->first + at_.dir->first + name_->first;
}

// The cache's bookkeeping in a file is the cache's, even through a const file.
IoResult<std::shared_ptr<File>> CachedFile::use(std::string_view op) const {
  auto file = cache_->acquire(const_cast<CachedFile&>(*this), false);
  if (!file) cache_->fail(op, path(), file.error(), true);
  return file;
}

IoResult<std::size_t> CachedFile::pread(std::int64_t position, MutableByteSpan out) const {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  auto n = (*file)->pread(position, out);
  if (!n) cache_->fail("read", path(), n.error(), true);
  return n;
}

Status<IoError> CachedFile::append(ByteSpan data) {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  auto ok = (*file)->append(data);
  if (!ok) {
    cache_->fail("append", path(), ok.error(), true);
    return ok;
  }
  size_.store((*file)->size(), std::memory_order_relaxed);  // while the file is held
  return {};
}

Status<IoError> CachedFile::sync() {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  auto ok = (*file)->sync();
  if (!ok) cache_->fail("sync", path(), ok.error(), true);
  return ok;
}

Status<IoError> CachedFile::truncate(std::int64_t size) {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  auto ok = (*file)->truncate(size);
  if (!ok) {
    cache_->fail("truncate", path(), ok.error(), true);
    return ok;
  }
  size_.store(size, std::memory_order_relaxed);
  return {};
}

int CachedFile::fd() const noexcept {
  std::lock_guard lock(cache_->mutex_);
  return open_ != nullptr ? open_->fd() : -1;
}

IoResult<std::int64_t> CachedFile::modified_time_ms() const {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  return (*file)->modified_time_ms();
}

Status<IoError> CachedFile::set_modified_time_ms(std::int64_t time_ms) {
  auto file = use("open");
  if (!file) return unexpected(file.error());
  auto ok = (*file)->set_modified_time_ms(time_ms);
  if (!ok) cache_->fail("set_modified_time", path(), ok.error(), true);
  return ok;
}

IoResult<std::shared_ptr<const File>> CachedFile::open_handle() const {
  auto file = cache_->acquire(const_cast<CachedFile&>(*this), true);
  if (!file) {
    if (file.error().code != EMFILE) cache_->fail("open", path(), file.error(), true);
    return unexpected(file.error());
  }
  return std::shared_ptr<const File>(std::move(*file));
}

}  // namespace weir::storage
