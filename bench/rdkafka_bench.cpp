// A small librdkafka (C API, Debian's librdkafka-dev) load driver for bench/run.py, so the
// benchmark does not measure a Python or JVM client. Prints one JSON object on stdout.
//
//   rdkafka_bench produce -b HOST:PORT -t TOPIC -n RECORDS [-s SIZE] [-a ACKS] [-l LINGER_MS]
//   rdkafka_bench consume -b HOST:PORT -t TOPIC -p PARTITIONS -n RECORDS
//   rdkafka_bench latency -b HOST:PORT -t TOPIC -r RATE -d SECONDS [-s SIZE] [-a ACKS] [-l LINGER_MS]
//   any mode: [-X key=value]... more client settings (e.g. debug=fetch), applied after the others
//
// produce: as fast as the client can queue, then waits for every delivery report; consume: reads
// partitions 0..P-1 from offset 0 (assign, no group) until RECORDS arrived; latency: one producer
// at a fixed rate (records/s) into partition 0 and a consumer of that partition in the same
// process; each record carries its send time, so it reports produce latency (send to delivery
// report) and end-to-end latency (send to consume) percentiles. Exit code 1 on any error.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct Options {
  std::string mode, bootstrap, topic, acks = "1";
  std::vector<std::pair<std::string, std::string>> extra;  // -X key=value, applied last
  long records = 0, size = 1024, linger_ms = 5, partitions = 1, rate = 1000;
  double seconds = 10;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "rdkafka_bench: %s\n", msg.c_str());
  std::exit(1);
}

Options parse(int argc, char** argv) {
  if (argc < 2) die("usage: rdkafka_bench produce|consume|latency -b BOOTSTRAP -t TOPIC ...");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "-b") o.bootstrap = v;
    else if (k == "-t") o.topic = v;
    else if (k == "-a") o.acks = v;
    else if (k == "-n") o.records = std::atol(v);
    else if (k == "-s") o.size = std::atol(v);
    else if (k == "-l") o.linger_ms = std::atol(v);
    else if (k == "-p") o.partitions = std::atol(v);
    else if (k == "-r") o.rate = std::atol(v);
    else if (k == "-d") o.seconds = std::atof(v);
    else if (k == "-X") {
      const std::string kv = v;
      const auto eq = kv.find('=');
      if (eq == std::string::npos) die("-X wants key=value");
      o.extra.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else
      die("unknown option " + k);
  }
  if (o.bootstrap.empty() || o.topic.empty()) die("-b and -t are required");
  if (o.size < 8) o.size = 8;  // room for the send time
  return o;
}

void set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) die(err);
}

struct ProduceState {
  std::atomic<long> delivered{0};
  std::atomic<long> failed{0};
  std::mutex mu;
  std::vector<double> latencies_ms;  // latency mode only
  bool record_latency = false;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* st = static_cast<ProduceState*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (st->failed.fetch_add(1) < 3) std::fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
    return;
  }
  st->delivered.fetch_add(1);
  if (st->record_latency && m->len >= 8) {
    std::int64_t sent = 0;
    std::memcpy(&sent, m->payload, 8);
    std::lock_guard lock(st->mu);
    st->latencies_ms.push_back(static_cast<double>(now_ns() - sent) / 1e6);
  }
}

rd_kafka_t* make_producer(const Options& o, ProduceState* st) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", o.bootstrap);
  set(conf, "acks", o.acks);
  set(conf, "linger.ms", std::to_string(o.linger_ms));
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  for (const auto& [k, v] : o.extra) set(conf, k.c_str(), v);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, st);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) die(err);
  const struct rd_kafka_metadata* md = nullptr;  // connect and learn leaders before the clock starts
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);
  if (rd_kafka_metadata(rk, 0, t, &md, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) die("metadata request failed");
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);
  return rk;
}

void produce_one(rd_kafka_t* rk, const Options& o, std::vector<char>& payload, std::int32_t partition) {
  const std::int64_t sent = now_ns();
  std::memcpy(payload.data(), &sent, 8);
  for (;;) {
    const rd_kafka_resp_err_t e =
        rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(o.topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                          RD_KAFKA_V_VALUE(payload.data(), payload.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                          RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die(std::string("produce: ") + rd_kafka_err2str(e));
    rd_kafka_poll(rk, 10);
  }
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), p / 100.0 * static_cast<double>(v.size())));
  return v[i];
}

int produce(const Options& o) {
  ProduceState st;
  rd_kafka_t* rk = make_producer(o, &st);
  std::vector<char> payload(static_cast<std::size_t>(o.size), 'x');
  const auto t0 = Clock::now();
  for (long i = 0; i < o.records; ++i) {
    produce_one(rk, o, payload, RD_KAFKA_PARTITION_UA);
    if (i % 1000 == 0) rd_kafka_poll(rk, 0);
  }
  if (rd_kafka_flush(rk, 300000) != RD_KAFKA_RESP_ERR_NO_ERROR) die("flush timed out");
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  rd_kafka_destroy(rk);
  if (st.failed > 0 || st.delivered != o.records) die("not every record was delivered");
  std::printf("{\"records\": %ld, \"seconds\": %.3f, \"rps\": %.1f, \"mbps\": %.2f}\n", o.records, dt,
              static_cast<double>(o.records) / dt, static_cast<double>(o.records * o.size) / dt / 1048576.0);
  return 0;
}

rd_kafka_t* make_consumer(const Options& o) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", o.bootstrap);
  set(conf, "group.id", "weir-bench-unused");  // assign() only: no group traffic
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.auto.offset.store", "false");
  set(conf, "fetch.max.bytes", "52428800");
  set(conf, "fetch.wait.max.ms", "100");
  for (const auto& [k, v] : o.extra) set(conf, k.c_str(), v);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) die(err);
  rd_kafka_poll_set_consumer(rk);
  return rk;
}

void assign(rd_kafka_t* rk, const Options& o, long partitions, std::int64_t offset) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions));
  for (long p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, o.topic.c_str(), static_cast<std::int32_t>(p))->offset = offset;
  }
  if (rd_kafka_assign(rk, list) != RD_KAFKA_RESP_ERR_NO_ERROR) die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
}

int consume(const Options& o) {
  rd_kafka_t* rk = make_consumer(o);
  assign(rk, o, o.partitions, 0);
  long count = 0;
  std::int64_t bytes = 0;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::seconds(300);
  while (count < o.records && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 1000);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++count;
      bytes += static_cast<std::int64_t>(m->len);
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      die(std::string("consume: ") + rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (count != o.records) die("consumed " + std::to_string(count) + " of " + std::to_string(o.records));
  std::printf("{\"records\": %ld, \"seconds\": %.3f, \"rps\": %.1f, \"mbps\": %.2f}\n", count, dt,
              static_cast<double>(count) / dt, static_cast<double>(bytes) / dt / 1048576.0);
  return 0;
}

int latency(const Options& o) {
  ProduceState st;
  st.record_latency = true;
  rd_kafka_t* producer = make_producer(o, &st);
  rd_kafka_t* consumer = make_consumer(o);
  // From the current end, looked up before the first send, so no measured record is skipped.
  std::int64_t low = 0;
  std::int64_t high = 0;
  if (rd_kafka_query_watermark_offsets(consumer, o.topic.c_str(), 0, &low, &high, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    die("watermark query failed");
  }
  assign(consumer, o, 1, high);
  std::vector<char> payload(static_cast<std::size_t>(o.size), 'x');
  const long total = std::max<long>(1, static_cast<long>(static_cast<double>(o.rate) * o.seconds));
  std::vector<double> e2e;
  e2e.reserve(static_cast<std::size_t>(total));
  std::atomic<bool> producing{true};
  std::thread sender([&] {
    const auto period = std::chrono::nanoseconds(1'000'000'000LL / std::max<long>(1, o.rate));
    auto next = Clock::now();
    for (long i = 0; i < total; ++i) {
      std::this_thread::sleep_until(next);
      next += period;
      produce_one(producer, o, payload, 0);
      rd_kafka_poll(producer, 0);
    }
    rd_kafka_flush(producer, 60000);
    producing = false;
  });
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.seconds + 60);
  while (static_cast<long>(e2e.size()) < total && Clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->len >= 8) {
      std::int64_t sent = 0;
      std::memcpy(&sent, m->payload, 8);
      e2e.push_back(static_cast<double>(now_ns() - sent) / 1e6);
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      die(std::string("consume: ") + rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  sender.join();
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  rd_kafka_destroy(producer);
  if (st.failed > 0 || st.delivered != total) die("not every record was delivered");
  if (static_cast<long>(e2e.size()) != total) {
    die("consumed " + std::to_string(e2e.size()) + " of " + std::to_string(total));
  }
  std::vector<double> produced;
  {
    std::lock_guard lock(st.mu);
    produced = st.latencies_ms;
  }
  std::printf(
      "{\"records\": %ld, \"rate\": %ld, \"produce_p50_ms\": %.3f, \"produce_p99_ms\": %.3f, "
      "\"produce_p999_ms\": %.3f, \"e2e_p50_ms\": %.3f, \"e2e_p99_ms\": %.3f, \"e2e_p999_ms\": %.3f}\n",
      total, o.rate, percentile(produced, 50), percentile(produced, 99), percentile(produced, 99.9),
      percentile(e2e, 50), percentile(e2e, 99), percentile(e2e, 99.9));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.mode == "produce") return produce(o);
  if (o.mode == "consume") return consume(o);
  if (o.mode == "latency") return latency(o);
  die("unknown mode " + o.mode);
}
