#include "kernels/autograd/node.h"

#include <atomic>

namespace turnout {
namespace autograd {
namespace {

std::atomic<uint64_t> next_sequence_nr{0};

}  // namespace

Node::Node(std::vector<Edge> next_edges)
    : next_edges_(std::move(next_edges)),
      sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

}  // namespace autograd
}  // namespace turnout
