// Expected failures are values: a function that can fail for reasons outside the program's
// control (bad input, a full disk, a closed socket) returns Result<T, E>, where E is the error
// enum of its module (record::Errc, VarintError, ...). Kafka error codes appear only at the
// protocol edge, where a module's error enum is mapped to them.
//
//   Result<Decoded<int32_t>, VarintError> r = decode_varint(bytes);
//   if (!r) return std::unexpected(r.error());
//
// Conventions:
//  - E is a small enum class (cheap to copy, no allocation on the error path); give it a
//    to_string() for logs.
//  - Use Status<E> (= Result<void, E>) for operations with no value.
//  - Bugs are not errors: use WEIR_ASSERT (assert.h) for broken invariants.
#pragma once

#include <expected>

namespace weir {

template <class T, class E>
using Result = std::expected<T, E>;

template <class E>
using Status = std::expected<void, E>;

using std::unexpected;

}  // namespace weir
