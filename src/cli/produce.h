// `weir produce TOPIC`: records from stdin or a file, one per line, idempotent by default; keys
// with --key-separator go where Kafka's default partitioner puts them (murmur2). Batches of up to
// --batch-bytes of the input that is there to read, up to 5 unanswered at once (Kafka's
// max.in.flight.requests.per.connection); when the input is slow to come, what was sent is
// answered (and printed with -v) before waiting for more. A batch that fails (after the client's
// retries) ends the command, exit 1, once the others in flight are answered. Idempotent, a retried
// batch cannot land after a later one of its partition (the broker refuses the later one as out of
// sequence); without idempotence it can, as with Kafka's producer.
#pragma once

#include <CLI/CLI.hpp>

namespace weir::cli {

void add_produce_command(CLI::App& app, int& exit_code);

}  // namespace weir::cli
