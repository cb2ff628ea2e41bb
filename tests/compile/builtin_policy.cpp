// Must not compile: a built-in told a policy by hand. concurrency_limit takes its server's
// policy when use() installs it; naming one (here `single` on a sharded server, a data race
// before) fails with the static_assert's message, which the test looks for.
#include <skiff/skiff.hpp>

int main() {
    skiff::basic_server<skiff::sharded> app;
    app.use(skiff::concurrency_limit<skiff::single>(8));
}
