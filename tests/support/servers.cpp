// The servers the suites run, compiled here once per policy (loopback.hpp declares them
// extern when SKIFF_TEST_SERVERS_COMPILED is set), through skiff's separate compilation
// (app/compiled.hpp) as a project of many files would. Nothing else: a test lives beside its kind.
#include <skiff/skiff.hpp>

SKIFF_COMPILE_SERVER(skiff::single);
SKIFF_COMPILE_SERVER(skiff::sharded);
SKIFF_COMPILE_SERVER(skiff::shared);
