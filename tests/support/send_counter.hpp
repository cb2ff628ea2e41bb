// Counts the server's write system calls on one connection, from inside the test binary.
//
// The integration test executable defines send() and sendmsg() itself (send_counter.cpp), so
// skiff's calls bind to them; they count, then forward to the next definition (libc, or a
// sanitizer's interceptor). Only calls on the server side of the watched connection count:
// the one whose peer is the client's local port.
#ifndef SKIFF_TESTS_SUPPORT_SEND_COUNTER_HPP
#define SKIFF_TESTS_SUPPORT_SEND_COUNTER_HPP

#include <cstdint>

namespace skiff_test {

// Starts counting writes whose peer port is `client_port` (0: stop counting).
void watch_writes_to(std::uint16_t client_port);
// Write calls counted since watch_writes_to().
long counted_writes();

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_SEND_COUNTER_HPP
