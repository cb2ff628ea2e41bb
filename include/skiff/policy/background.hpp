// The thread basic_server::start() serves on. basic_server holds it through background_thread,
// an interface with no thread in it, and names the std::thread-owning serving_thread only
// inside start(): a program that never calls start() instantiates none of it, so a single
// policy program stays free of thread symbols (tests/compile/no_thread_symbols.cmake).
//
// Not here: stopping the server (its runner does that); this only waits for run() to return.
// Invariant: join() returns once the thread has finished, except when called on a thread that
// serves (a handler stopping its server: the serving thread, or a sharded or shared worker,
// which the serving thread is itself waiting for), where it cannot wait and returns at once.
#ifndef SKIFF_POLICY_BACKGROUND_HPP
#define SKIFF_POLICY_BACKGROUND_HPP

#include <memory>   // std::unique_ptr
#include <thread>   // std::thread
#include <utility>  // std::move

namespace skiff::detail {

// True on the threads that run loops for start() or for the sharded and shared workers; set
// by them (runners.hpp and start_background), read by join().
inline bool& on_serving_thread() noexcept {
    static thread_local bool serving = false;
    return serving;
}

class background_thread {
public:
    virtual ~background_thread() = default;
    // Waits for the thread to finish; twice is once.
    virtual void join() noexcept = 0;
};

template <class Fn>
class serving_thread final : public background_thread {
public:
    explicit serving_thread(Fn fn)
        : thread_([fn = std::move(fn)]() mutable {
              on_serving_thread() = true;
              fn();
          }) {}
    serving_thread(const serving_thread&) = delete;
    serving_thread& operator=(const serving_thread&) = delete;
    // On the thread itself it cannot be joined; letting it finish alone beats std::terminate.
    ~serving_thread() override {
        join();
        if (thread_.joinable()) thread_.detach();
    }

    void join() noexcept override {
        if (thread_.joinable() && !on_serving_thread()) thread_.join();
    }

private:
    std::thread thread_;
};

// Runs fn on a new thread. Throws std::system_error when no thread can be created.
template <class Fn>
std::unique_ptr<background_thread> start_background(Fn fn) {
    return std::make_unique<serving_thread<Fn>>(std::move(fn));
}

} // namespace skiff::detail

#endif // SKIFF_POLICY_BACKGROUND_HPP
