// Must not compile: the test passes when the compiler prints the static_assert's message.
#include <skiff/skiff.hpp>

#if defined(SKIFF_TEST_TWO_POLICIES)
struct confused : skiff::single, skiff::shared {};
skiff::basic_server<confused> server;
#else
skiff::basic_server<int> server;
#endif
