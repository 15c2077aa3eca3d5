#include "storage/checkpoint.h"

#include <charconv>

#include "base/log.h"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kVersionLine = "0";

// The lines of text; a final '\n' does not start another line.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Fields separated by runs of whitespace; leading whitespace gives an empty first field, as
// Java's Pattern.split does.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i <= line.size()) {
    std::size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    fields.push_back(line.substr(i, j - i));
    while (j < line.size() && is_space(line[j])) ++j;
    if (j >= line.size()) break;
    i = j;
  }
  return fields;
}

template <class T>
std::optional<T> parse_int(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Checks the version and count lines; returns the entry lines.
Result<std::vector<std::string_view>, Errc> entry_lines(std::string_view text) {
  std::vector<std::string_view> lines = split_lines(text);
  if (lines.empty()) return lines;  // an empty file is an empty checkpoint (Kafka reads it so)
  if (parse_int<std::int32_t>(lines[0]) != 0) return unexpected(Errc::kCorruptMessage);
  if (lines.size() < 2) return unexpected(Errc::kCorruptMessage);
  auto count = parse_int<std::int64_t>(lines[1]);
  if (!count || *count != static_cast<std::int64_t>(lines.size() - 2)) return unexpected(Errc::kCorruptMessage);
  lines.erase(lines.begin(), lines.begin() + 2);
  return lines;
}

Status<Errc> write_text(FileSystem& fs, const fs::path& path, std::string_view text) {
  if (auto ok = write_file_atomically(fs, path, text); !ok) {
    log::get("storage")->warn("event=checkpoint_write_failed {} {}", log::kv("path", path.string()),
                              log::kv("error", to_string(ok.error())));
    return unexpected(Errc::kStorageError);
  }
  return {};
}

Result<std::string, Errc> read_text(FileSystem& fs, const fs::path& path) {
  auto text = read_file(fs, path, kMaxCheckpointBytes);
  if (!text) return unexpected(text.error().not_found() ? Errc::kNotFound : Errc::kStorageError);
  return std::move(*text);
}

}  // namespace

std::string to_string(const TopicPartition& tp) { return fmt::format("{}-{}", tp.topic, tp.partition); }

std::optional<TopicPartition> parse_partition_dir_name(std::string_view name) {
  const std::size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  const std::string_view digits = name.substr(dash + 1);
  if (digits.front() == '+' || digits.front() == '-') return std::nullopt;
  auto partition = parse_int<std::int32_t>(digits);
  if (!partition || *partition < 0) return std::nullopt;
  return TopicPartition{std::string(name.substr(0, dash)), *partition};
}

std::string encode_offset_checkpoint(const OffsetCheckpoint& offsets) {
  std::string out = fmt::format("{}\n{}\n", kVersionLine, offsets.size());
  for (const auto& [tp, offset] : offsets) out += fmt::format("{} {} {}\n", tp.topic, tp.partition, offset);
  return out;
}

Result<OffsetCheckpoint, Errc> decode_offset_checkpoint(std::string_view text) {
  auto lines = entry_lines(text);
  if (!lines) return unexpected(lines.error());
  OffsetCheckpoint offsets;
  for (std::string_view line : *lines) {
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.size() != 3 || fields[0].empty()) return unexpected(Errc::kCorruptMessage);
    auto partition = parse_int<std::int32_t>(fields[1]);
    auto offset = parse_int<std::int64_t>(fields[2]);
    if (!partition || !offset) return unexpected(Errc::kCorruptMessage);
    offsets[TopicPartition{std::string(fields[0]), *partition}] = *offset;
  }
  return offsets;
}

std::string encode_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries) {
  std::string out = fmt::format("{}\n{}\n", kVersionLine, entries.size());
  for (const EpochEntry& e : entries) out += fmt::format("{} {}\n", e.epoch, e.start_offset);
  return out;
}

Result<std::vector<EpochEntry>, Errc> decode_leader_epoch_checkpoint(std::string_view text) {
  auto lines = entry_lines(text);
  if (!lines) return unexpected(lines.error());
  std::vector<EpochEntry> entries;
  for (std::string_view line : *lines) {
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields.size() != 2) return unexpected(Errc::kCorruptMessage);
    auto epoch = parse_int<std::int32_t>(fields[0]);
    auto offset = parse_int<std::int64_t>(fields[1]);
    if (!epoch || !offset) return unexpected(Errc::kCorruptMessage);
    entries.push_back(EpochEntry{*epoch, *offset});
  }
  return entries;
}

std::string encode_partition_metadata(const Uuid& topic_id) {
  return fmt::format("version: 0\ntopic_id: {}", topic_id.to_string());
}

Result<Uuid, Errc> decode_partition_metadata(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  if (lines.size() < 2) return unexpected(Errc::kCorruptMessage);
  const std::vector<std::string_view> version = split_fields(lines[0]);
  if (version.size() != 2 || version[0] != "version:" || parse_int<std::int32_t>(version[1]) != 0) {
    return unexpected(Errc::kCorruptMessage);
  }
  const std::vector<std::string_view> id = split_fields(lines[1]);
  if (id.size() != 2 || id[0] != "topic_id:") return unexpected(Errc::kCorruptMessage);
  auto uuid = Uuid::from_string(id[1]);
  if (!uuid) return unexpected(Errc::kCorruptMessage);
  return *uuid;
}

Status<Errc> write_offset_checkpoint(FileSystem& fs, const fs::path& path, const OffsetCheckpoint& offsets) {
  return write_text(fs, path, encode_offset_checkpoint(offsets));
}

Status<Errc> write_offset_checkpoint_text(FileSystem& fs, const fs::path& path, std::string_view text) {
  return write_text(fs, path, text);
}

Result<OffsetCheckpoint, Errc> read_offset_checkpoint(FileSystem& fs, const fs::path& path) {
  auto text = read_text(fs, path);
  if (!text) return unexpected(text.error());
  return decode_offset_checkpoint(*text);
}

Status<Errc> write_leader_epoch_checkpoint(FileSystem& fs, const fs::path& path,
                                           const std::vector<EpochEntry>& entries) {
  return write_text(fs, path, encode_leader_epoch_checkpoint(entries));
}

Result<std::vector<EpochEntry>, Errc> read_leader_epoch_checkpoint(FileSystem& fs, const fs::path& path) {
  auto text = read_text(fs, path);
  if (!text) return unexpected(text.error());
  return decode_leader_epoch_checkpoint(*text);
}

Status<Errc> write_partition_metadata(FileSystem& fs, const fs::path& path, const Uuid& topic_id) {
  return write_text(fs, path, encode_partition_metadata(topic_id));
}

Result<Uuid, Errc> read_partition_metadata(FileSystem& fs, const fs::path& path) {
  auto text = read_text(fs, path);
  if (!text) return unexpected(text.error());
  return decode_partition_metadata(*text);
}

}  // namespace weir::storage
