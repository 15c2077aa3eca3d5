#include "broker/answer_cache.h"

#include "base/assert.h"

namespace weir::broker {

std::shared_ptr<const EncodedAnswer> AnswerCache::find(const std::shared_ptr<const Catalog>& catalog,
                                                       std::int16_t version) const {
  WEIR_ASSERT(catalog != nullptr);
  std::lock_guard lock(mu_);
  if (!holds(catalog)) return nullptr;
  auto it = answers_.find(version);
  return it == answers_.end() ? nullptr : it->second;
}

void AnswerCache::store(const std::shared_ptr<const Catalog>& catalog, std::int16_t version,
                        std::shared_ptr<const EncodedAnswer> answer) {
  WEIR_ASSERT(catalog != nullptr && answer != nullptr);
  std::lock_guard lock(mu_);
  if (!holds(catalog)) {
    if (auto kept = catalog_.lock(); kept != nullptr && kept->version > catalog->version) return;
    answers_.clear();
    catalog_ = catalog;
  }
  answers_[version] = std::move(answer);
}

std::size_t AnswerCache::size() const {
  std::lock_guard lock(mu_);
  return answers_.size();
}

}  // namespace weir::broker
