// TxnVerifier: KIP-890, the broker asking the transaction coordinator whether partitions are in
// a producer's ongoing transaction before their first transactional batch is appended (part 1:
// Kafka's AddPartitionsToTxn v4 with verifyOnly), or, for a transaction version 2 client
// (Produce v12+, TxnOffsetCommit v5+), adding them to it (part 2: the client sends no
// AddPartitionsToTxn). The partition service holds a pointer to one; null means nothing is
// verified. The transaction coordinator's host implements it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "broker/partition_service.h"

namespace weir::broker {

class TxnVerifier {
 public:
  virtual ~TxnVerifier() = default;
  // One error code per partition, in order: 0 when the partition is in the producer's ongoing
  // transaction (this id, producer id and epoch), else the coordinator's error
  // (INVALID_TXN_STATE / TRANSACTION_ABORTABLE for a partition not added, NOT_COORDINATOR,
  // COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
  // INVALID_PRODUCER_EPOCH, PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING, ...). `add`: add the
  // partitions to the transaction (starting it if there is none) instead of checking them.
  virtual boost::asio::awaitable<std::vector<std::int16_t>> verify(std::string transactional_id,
                                                                   std::int64_t producer_id,
                                                                   std::int16_t producer_epoch,
                                                                   std::vector<PartitionRef> partitions,
                                                                   bool add) = 0;
};

}  // namespace weir::broker
