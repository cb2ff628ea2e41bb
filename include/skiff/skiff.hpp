// skiff: a header-only HTTP/1.1 server for C++17. This umbrella includes the parts in
// dependency order and nothing else; tools/amalgamate.py inlines them, in this order, into
// single_include/skiff/skiff.hpp.
#ifndef SKIFF_SKIFF_HPP
#define SKIFF_SKIFF_HPP

#include "skiff/version.hpp"
#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/platform/thread.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/poller/poller.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/status.hpp"
#include "skiff/http/parse_types.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/target.hpp"
#include "skiff/http/fields.hpp"
#include "skiff/http/parser.hpp"
#include "skiff/http/chunked.hpp"
#include "skiff/http/request_parser.hpp"
#include "skiff/http/url.hpp"
#include "skiff/router/trie.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/policy.hpp"
#include "skiff/server/timer_wheel.hpp"
#include "skiff/server/connection.hpp"
#include "skiff/server/local_set.hpp"
#include "skiff/server/shared_set.hpp"
#include "skiff/server/shard_link.hpp"
#include "skiff/server/event_loop.hpp"
#include "skiff/server/runners.hpp"
#include "skiff/server/server.hpp"

#endif // SKIFF_SKIFF_HPP
