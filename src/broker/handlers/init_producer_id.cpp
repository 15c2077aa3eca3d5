// InitProducerId. Without a transactional id (idempotent producers): a fresh producer id from the
// current block (blocks are recorded in the metadata log, so ids are never reused), epoch 0. With
// one: the transaction coordinator of its `__transaction_state` partition (TxnService).
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"
#include "broker/txn_host.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<InitProducerIdHandler::Response>> InitProducerIdHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp;
  // As KafkaApis: a producer id without an epoch (or the reverse) is malformed.
  if ((req.producer_id == -1) != (req.producer_epoch == -1)) {
    resp.error_code = code(ErrorCode::kInvalidRequest);
    resp.producer_epoch = -1;
    co_return resp;
  }
  if (req.transactional_id) {
    const txn::Answer a = co_await ctx.broker.txns().init_producer_id(*req.transactional_id, req.transaction_timeout_ms,
                                                                      req.producer_id, req.producer_epoch);
    // PRODUCER_FENCED is new in v4: older clients know it as INVALID_PRODUCER_EPOCH.
    resp.error_code = a.error == txn::Error::kProducerFenced && ctx.version() < 4
                          ? code(ErrorCode::kInvalidProducerEpoch)
                          : txn::code(a.error);
    resp.producer_id = a.producer_id;
    resp.producer_epoch = a.producer_epoch;
    co_return resp;
  }
  auto id = co_await ctx.broker.allocate_producer_id();
  if (!id) {
    resp.error_code = code(id.error());
    co_return resp;
  }
  resp.producer_id = *id;
  resp.producer_epoch = 0;
  co_return resp;
}

}  // namespace weir::broker
