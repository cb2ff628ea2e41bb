// The one place that picks the poller backend. Both backends have the same members:
// open, add, modify, remove, wait, wake (see epoll.hpp for the contract).
#ifndef SKIFF_POLLER_POLLER_HPP
#define SKIFF_POLLER_POLLER_HPP

#include "skiff/config.hpp"

#if defined(SKIFF_HAS_EPOLL)
#include "skiff/poller/epoll.hpp"
namespace skiff::detail { using default_poller = epoll_poller; }
#else
#include "skiff/poller/kqueue.hpp"
namespace skiff::detail { using default_poller = kqueue_poller; }
#endif // SKIFF_HAS_EPOLL

#endif // SKIFF_POLLER_POLLER_HPP
