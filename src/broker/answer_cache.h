// Encoded answers that depend on nothing but the catalog snapshot and the version they are
// encoded at (Metadata of every topic), kept while that snapshot is the current one and reused
// for every such request meanwhile. At 100,000 partitions that answer is 2.6 MB and about 100 ms
// of CPU to build and encode; a copy of the kept bytes is a fraction of a millisecond (issue 18).
//
// Holds the answers of one catalog at a time, at most one per version (so its memory is at most
// one encoded answer per version in use); an answer stored for a newer catalog drops the others.
// The catalog is held weakly: the cache keeps no snapshot alive, and an answer is found only with
// the very snapshot it was built from (a snapshot's identity, not its contents or version number,
// is the key). Thread-safe; the lock is never held while an answer is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "broker/catalog.h"

namespace weir::broker {

struct EncodedAnswer {
  std::vector<std::uint8_t> body;  // the response body at its version, without the response header
  // (error code, at the request level?) -> occurrences in the response, for the request counters.
  std::map<std::pair<std::int16_t, bool>, std::uint64_t> errors;
};

class AnswerCache {
 public:
  // The answer kept for exactly this snapshot at this version, or null.
  [[nodiscard]] std::shared_ptr<const EncodedAnswer> find(const std::shared_ptr<const Catalog>& catalog,
                                                          std::int16_t version) const;
  // Keeps `answer` as that of (catalog, version), replacing the answers of another snapshot,
  // unless that other snapshot is still alive and newer (a late answer of an older snapshot is
  // not kept).
  void store(const std::shared_ptr<const Catalog>& catalog, std::int16_t version,
             std::shared_ptr<const EncodedAnswer> answer);
  // How many answers are kept (every one of the same snapshot).
  [[nodiscard]] std::size_t size() const;

 private:
  [[nodiscard]] bool holds(const std::shared_ptr<const Catalog>& catalog) const {
    return !catalog_.owner_before(catalog) && !catalog.owner_before(catalog_);
  }

  mutable std::mutex mu_;
  std::weak_ptr<const Catalog> catalog_;                                  // the snapshot the answers are of
  std::map<std::int16_t, std::shared_ptr<const EncodedAnswer>> answers_;  // by version
};

}  // namespace weir::broker
