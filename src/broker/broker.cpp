#include "broker/broker.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <map>

#include <spdlog/spdlog.h>

#include "base/uuid.h"
#include "broker/handlers/registry.h"
#include "protocol/gen/api_registry.h"
#include "protocol/headers.h"

namespace weir::broker {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

using Body = std::span<const std::uint8_t>;
using HandlerFn = asio::awaitable<net::Reply> (*)(Broker&, const net::ClientInfo&, const protocol::RequestHeader&,
                                                  Body);

template <class Response>
net::Reply encode_reply(std::int16_t api_key, std::int16_t header_version_of, std::int32_t correlation_id,
                        const Response& resp, std::int16_t body_version) {
  net::Reply reply;
  protocol::Writer w(reply.bytes);
  protocol::write_response_header(w, api_key, header_version_of, correlation_id);
  resp.encode(w, body_version);
  return reply;
}

template <class H>
asio::awaitable<net::Reply> run_handler(Broker& broker, const net::ClientInfo& client,
                                        const protocol::RequestHeader& header, Body body) {
  const std::int16_t key = H::Request::kApiKey;
  const std::int16_t version = header.api_version;
  if (version < H::kMinVersion || version > H::kMaxVersion) {
    if constexpr (requires { H::unsupported_version_response(); }) {
      if (version > H::kMaxVersion) {
        co_return encode_reply(key, 0, header.correlation_id, H::unsupported_version_response(), 0);
      }
    }
    co_return net::Reply::close(fmt::format("unsupported version {} of api {} ({}..{} served)", version, key,
                                            H::kMinVersion, H::kMaxVersion));
  }
  typename H::Request req;
  // Bytes after the body are ignored, as Apache Kafka does (librdkafka's Metadata v13 request,
  // for one, carries three).
  protocol::Reader reader(body);
  req.decode(reader, version);
  if (!reader.ok()) {
    std::string head;
    for (std::size_t i = 0; i < body.size() && i < 32; ++i) head += fmt::format("{:02x}", body[i]);
    co_return net::Reply::close(
        fmt::format("malformed {} v{} request body ({} bytes: {})", H::Request::kName, version, body.size(), head));
  }
  RequestContext ctx{broker, client, header};
  auto resp = co_await H::handle(ctx, req);
  if (!resp) co_return net::Reply::none();
  co_return encode_reply(key, version, header.correlation_id, *resp, version);
}

constexpr std::size_t kMaxApiKey = 128;

constexpr std::array<HandlerFn, kMaxApiKey> make_table() {
  std::array<HandlerFn, kMaxApiKey> table{};
  std::apply([&]<class... H>(H...) { ((table[static_cast<std::size_t>(H::Request::kApiKey)] = &run_handler<H>), ...); },
             AllHandlers{});
  return table;
}

constexpr std::array<HandlerFn, kMaxApiKey> kHandlers = make_table();

// meta.properties in the data directory, as Kafka writes it: the cluster id and node id that
// the directory belongs to.
std::map<std::string, std::string> read_properties(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace

Broker::Broker(Config config) : config_(std::move(config)) {
  node_.node_id = config_.node_id;
  if (!config_.advertised_listeners.empty()) {
    node_.host = config_.advertised_listeners.front().host;
    node_.port = config_.advertised_listeners.front().port;
  }
}

std::string Broker::start() {
  std::error_code ec;
  fs::create_directories(config_.log_dir, ec);
  if (ec) return "cannot create log dir " + config_.log_dir + ": " + ec.message();
  const fs::path meta = fs::path(config_.log_dir) / "meta.properties";
  auto props = read_properties(meta);
  if (props.contains("cluster.id")) {
    node_.cluster_id = props["cluster.id"];
    if (props.contains("node.id") && props["node.id"] != std::to_string(node_.node_id)) {
      return "log dir " + config_.log_dir + " belongs to node " + props["node.id"] + ", not " +
             std::to_string(node_.node_id);
    }
  } else {
    node_.cluster_id = Uuid::random().to_string();
    const fs::path tmp = fs::path(config_.log_dir) / "meta.properties.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << "#\n#weir\nnode.id=" << node_.node_id << "\ndirectory.id=" << Uuid::random().to_string()
          << "\nversion=1\ncluster.id=" << node_.cluster_id << "\n";
      if (!out) return "cannot write " + tmp.string();
    }
    fs::rename(tmp, meta, ec);
    if (ec) return "cannot write " + meta.string() + ": " + ec.message();
  }
  return {};
}

void Broker::stop() {}

void Broker::set_bound_port(std::uint16_t port) {
  if (node_.port == 0) node_.port = port;
}

asio::awaitable<net::Reply> Broker::handle(const net::ClientInfo& client, std::shared_ptr<const net::Frame> frame) {
  auto parsed = protocol::parse_request_header(frame->bytes);
  if (!parsed) {
    const auto& h = parsed.error().header;
    const char* why = parsed.error().error == protocol::HeaderError::kUnknownApi ? "unknown api key"
                      : parsed.error().error == protocol::HeaderError::kTruncated ? "truncated request header"
                                                                                  : "malformed request header";
    spdlog::warn("rejected request client={}:{} api_key={} api_version={} correlation_id={} reason=\"{}\"",
                 client.host, client.port, h.api_key, h.api_version, h.correlation_id, why);
    co_return net::Reply::close(why);
  }
  const protocol::RequestHeader& header = *parsed;
  const auto key = static_cast<std::size_t>(static_cast<std::uint16_t>(header.api_key));
  HandlerFn fn = key < kHandlers.size() ? kHandlers[key] : nullptr;
  if (fn == nullptr) {
    spdlog::warn("rejected request client={}:{} api_key={} api_version={} reason=\"api not served\"", client.host,
                 client.port, header.api_key, header.api_version);
    co_return net::Reply::close("api not served");
  }
  Body body = std::span<const std::uint8_t>(frame->bytes).subspan(header.size);
  net::Reply reply = co_await fn(*this, client, header, body);
  if (reply.kind == net::Reply::Kind::kClose) {
    spdlog::warn("rejected request client={}:{} api_key={} api_version={} correlation_id={} reason=\"{}\"",
                 client.host, client.port, header.api_key, header.api_version, header.correlation_id, reply.reason);
  }
  co_return reply;
}

}  // namespace weir::broker
