// What a sharded loop needs beyond its own connections: the server's stop flag, and, when
// one acceptor hands connections round-robin (no SO_REUSEPORT, or options::reuse_port off),
// an inbox of accepted descriptors. Only the sharded policy instantiates it.
#ifndef SKIFF_SERVER_SHARD_LINK_HPP
#define SKIFF_SERVER_SHARD_LINK_HPP

#include <atomic>   // std::atomic<bool> stop flag
#include <cstddef>  // std::size_t
#include <mutex>    // std::mutex guarding the inbox
#include <vector>   // std::vector of descriptors and peers

namespace skiff::detail {

template <class Loop>
struct shard_link {
    const std::atomic<bool>* stop = nullptr;
    std::mutex lock;            // guards inbox
    std::vector<int> inbox;     // descriptors handed over by the acceptor
    std::vector<Loop*> peers;   // on the accepting loop only: every loop, itself included
    std::size_t next = 0;       // round-robin position in peers
};

struct no_link {};

} // namespace skiff::detail

#endif // SKIFF_SERVER_SHARD_LINK_HPP
