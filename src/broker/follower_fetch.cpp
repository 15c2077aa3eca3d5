#include "broker/follower_fetch.h"

#include "broker/errors.h"

namespace weir::broker {

FollowerPosition follower_position(const Partition& p) {
  return FollowerPosition{p.log().log_end_offset(), p.last_fetched_epoch(), p.log().log_start_offset()};
}

FollowerOutcome apply_leader_answer(Partition& p, const LeaderAnswer& answer) {
  FollowerOutcome out;
  if (answer.error == code(ErrorCode::kOffsetOutOfRange)) {
    out.step = FollowerStep::kOutOfRange;
    return out;
  }
  if (answer.error != 0) {
    out.step = FollowerStep::kBackOff;
    out.error = answer.error;
    return out;
  }
  if (answer.diverging_epoch >= 0) {
    out.step = FollowerStep::kTruncated;
    if (const std::int16_t e = p.truncate_to_leader(answer.diverging_epoch, answer.diverging_end_offset); e != 0) {
      out.step = FollowerStep::kBackOff;
      out.error = e;
    }
    return out;
  }
  const FollowerAppend a = p.append_from_leader(answer.records, answer.high_watermark, answer.log_start_offset);
  if (a.error != 0) {
    out.step = FollowerStep::kBackOff;
    out.error = a.error;
    out.message = a.error_message;
    return out;
  }
  out.caught_up = answer.high_watermark <= p.log().log_end_offset();
  return out;
}

}  // namespace weir::broker
