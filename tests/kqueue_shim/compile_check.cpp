// Compile check of the BSD branch against the macOS declarations of <sys/event.h> (see
// include/sys/event.h): all of skiff, with every threading policy's server instantiated, so
// that every template using the kqueue backend is compiled. Never linked or run.
#include <skiff/skiff.hpp>

#include <type_traits>

static_assert(std::is_same_v<skiff::detail::default_poller, skiff::detail::kqueue_poller>,
              "SKIFF_USE_KQUEUE must select the kqueue backend");

namespace {

template <class Policy>
[[maybe_unused]] int serve_once() {
    skiff::basic_server<Policy> app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("ok"); });
    if (app.listen(0)) return 1;
    app.stop();
    return app.run();
}

} // namespace

// Taking the addresses instantiates the three servers and everything below them.
[[maybe_unused]] int (*const instantiate[])() = {&serve_once<skiff::single>, &serve_once<skiff::sharded>,
                                                 &serve_once<skiff::shared>};
