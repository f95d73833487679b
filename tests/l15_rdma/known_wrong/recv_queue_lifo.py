"""The receive queue used as a stack: a SEND takes the newest RECV instead of the oldest."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}



class _Stack(deque):
    def popleft(self):
        return self.pop()


deque = _Stack  # simulate_verbs builds its queues from the module's name
