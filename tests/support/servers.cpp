// The servers the suites run, instantiated here once per policy (loopback.hpp declares them
// extern when SKIFF_TEST_SERVERS_COMPILED is set). Nothing else: a test lives beside its kind.
#include <skiff/skiff.hpp>

template class skiff::basic_server<skiff::single>;
template class skiff::basic_server<skiff::sharded>;
template class skiff::basic_server<skiff::shared>;
