// Helpers for running work on the executor that owns it (share-nothing: every partition log and
// coordinator is touched only by its owner executor).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace weir::broker {

// Runs f() on `owner` and resumes the caller on its own executor with the result.
// f must be trivially destructible (capture references or pointers): GCC 12 may destroy a
// callable argument of a coroutine twice.
template <class F>
auto run_on(boost::asio::any_io_executor owner, F f) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
  static_assert(std::is_trivially_destructible_v<F>, "see run_on");
  using R = std::invoke_result_t<F&>;
  co_return co_await boost::asio::co_spawn(
      owner, [fn = std::move(f)]() mutable -> boost::asio::awaitable<R> { co_return fn(); },
      boost::asio::use_awaitable);
}

// Starts every task at once (each posted to its owner executor, in order, before any suspension,
// so work sent by pipelined requests to the same owner keeps its order) and waits for all.
// A task either returns its R (add) or is handed a Done to call with its R, once, later and from
// any thread (add_async: work that completes after more I/O, such as an acks=all append waiting
// for its flush). Results come back in task order.
template <class R>
class FanOut {
  struct State;

 public:
  // Delivers one task's result to the waiting coroutine's executor.
  class Done {
   public:
    Done(std::shared_ptr<State> state, std::size_t index) : state_(std::move(state)), index_(index) {}
    void operator()(R r) const {
      boost::asio::post(state_->timer.get_executor(), [state = state_, i = index_, r = std::move(r)]() mutable {
        state->results[i] = std::move(r);
        if (--state->pending == 0) state->timer.cancel();
      });
    }

   private:
    std::shared_ptr<State> state_;
    std::size_t index_;
  };

  template <class F>
  void add(boost::asio::any_io_executor owner, F f) {
    tasks_.push_back(
        Task{std::move(owner), std::function<void(Done)>([fn = std::move(f)](Done done) mutable { done(fn()); })});
  }
  template <class F>
  void add_async(boost::asio::any_io_executor owner, F f) {
    tasks_.push_back(Task{std::move(owner), std::function<void(Done)>(std::move(f))});
  }

  boost::asio::awaitable<std::vector<R>> run() {
    auto ex = co_await boost::asio::this_coro::executor;
    auto state = std::make_shared<State>(ex, tasks_.size());
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      boost::asio::post(tasks_[i].owner,
                        [done = Done(state, i), fn = std::move(tasks_[i].fn)]() mutable { fn(std::move(done)); });
    }
    while (state->pending > 0) {
      boost::system::error_code ec;
      co_await state->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
    co_return std::move(state->results);
  }

 private:
  struct Task {
    boost::asio::any_io_executor owner;
    std::function<void(Done)> fn;
  };
  struct State {
    State(boost::asio::any_io_executor ex, std::size_t n) : timer(ex), results(n), pending(n) {
      timer.expires_at(boost::asio::steady_timer::time_point::max());
    }
    boost::asio::steady_timer timer;
    std::vector<R> results;
    std::size_t pending;
  };
  std::vector<Task> tasks_;
};

}  // namespace weir::broker
