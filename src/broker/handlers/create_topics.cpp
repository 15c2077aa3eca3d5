#include "broker/broker.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

boost::asio::awaitable<HandlerResult<CreateTopicsHandler::Response>> CreateTopicsHandler::handle(RequestContext& ctx,
                                                                                                 Request& req) {
  co_return co_await ctx.broker.create_topics(req, ctx.version(), ctx.origin());
}

}  // namespace weir::broker
