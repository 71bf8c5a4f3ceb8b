package framework

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Every spec and setup node is made interruptible. Ginkgo abandons a node
// whose body takes no context the moment an interrupt (SIGINT, SIGTERM) or
// the run's --timeout arrives, and moves on to the cleanup nodes while the
// body still runs. When that body then calls DeferCleanup, as New's
// BeforeEach does, Ginkgo finds no current node and exits the process with
// code 1: an interrupted run reads as a failed one. A node that takes a
// context is instead given its grace period to return, and it returns
// promptly: the run's context is cancelled by the same signal, so the
// body's next request to the target fails at once.
var _ = ginkgo.AddTreeConstructionNodeArgsTransformer(interruptible)

// interruptibleNodes are the node types whose body runs inside a spec and
// may take a SpecContext.
const interruptibleNodes = types.NodeTypeIt | types.NodeTypeBeforeEach | types.NodeTypeJustBeforeEach |
	types.NodeTypeAfterEach | types.NodeTypeJustAfterEach | types.NodeTypeBeforeAll | types.NodeTypeAfterAll

// interruptible replaces a node's context-free body, func(), with one that
// takes Ginkgo's SpecContext; anything else passes unchanged.
func interruptible(nt types.NodeType, _ ginkgo.Offset, text string, args []any) (string, []any, []error) {
	if !nt.Is(interruptibleNodes) {
		return text, args, nil
	}
	out := make([]any, len(args))
	for i, a := range args {
		if body, ok := a.(func()); ok {
			a = func(ginkgo.SpecContext) { body() }
		}
		out[i] = a
	}
	return text, out, nil
}
