// InitProducerId for idempotent producers (no transactional id): a fresh producer id from the
// current block (blocks are recorded in the metadata log, so ids are never reused), epoch 0.
#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<InitProducerIdHandler::Response>> InitProducerIdHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp;
  if (req.transactional_id && !req.transactional_id->empty()) {
    // Transactions are not served yet: the coordinator for a transactional id is unavailable,
    // which clients report (and retry) rather than misbehave.
    resp.error_code = code(ErrorCode::kCoordinatorNotAvailable);
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
