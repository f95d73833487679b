"""Classic bug: the reservation forgets the γ draft slots a speculative round writes ahead: ceil((P + N − 1) / B)."""

MODULE = "tokengen"
REJECTED_BY = {'simulate_generation': ['correctness']}

_CorrectSim = TokenGenSim


class TokenGenSim(_CorrectSim):
    def _reserve_plain(self, prompt_len: int, max_new: int) -> int:
        return -(-(prompt_len + max_new - 1) // self.block_size)

    def run(self) -> dict:
        reqs, g = self.requests, self.gamma
        order = sorted(range(len(reqs)), key=lambda i: (reqs[i][0], i))
        arrivals = deque(order)
        waiting: deque[int] = deque()
        running: list[int] = []
        prefilled = [0] * len(reqs)
        emitted_at: list[list[float]] = [[] for _ in reqs]
        rounds = [0] * len(reqs)
        free = self.num_blocks
        clock, steps, done = 0.0, [], 0
        while done < len(reqs):
            if len(steps) >= self.max_steps:
                raise RuntimeError(f"TokenGenSim.run: {len(reqs) - done} requests unfinished after max_steps "
                                   f"{self.max_steps} steps")
            if not running and not waiting:
                clock = max(clock, reqs[arrivals[0]][0])
            while arrivals and reqs[arrivals[0]][0] <= clock:
                waiting.append(arrivals.popleft())
            left, scheduled, spec_ran = self.budget, {}, False
            for rid in running:
                p = reqs[rid][1]
                if prefilled[rid] < p:
                    rest = p - prefilled[rid]
                    n = min(rest, left) if self.chunked else (rest if rest <= left else 0)
                else:
                    n = 1 + g if left >= 1 + g else 0
                    spec_ran = spec_ran or (n > 0 and g > 0)
                if n > 0:
                    scheduled[rid] = n
                    left -= n
            while waiting and len(running) < self.max_num_seqs:
                rid = waiting[0]
                _, p, n_new = reqs[rid]
                if (left <= 0 if self.chunked else left < p) or self._reserve_plain(p, n_new) > free:
                    break
                waiting.popleft()
                running.append(rid)
                free -= self._reserve_plain(p, n_new)
                scheduled[rid] = min(p, left)
                left -= scheduled[rid]
            tokens = sum(scheduled.values())
            t_end = clock + self.t_fixed + self.t_token * tokens + (g * self.t_draft if spec_ran else 0.0)
            emitted, finished = {}, []
            for rid, n in scheduled.items():
                _, p, n_new = reqs[rid]
                if prefilled[rid] < p:
                    prefilled[rid] += n
                    k = 1 if prefilled[rid] == p else 0
                else:
                    a = self.accepted[rounds[rid] % len(self.accepted)] if g > 0 else 0
                    rounds[rid] += 1
                    k = min(a + 1, n_new - len(emitted_at[rid]))
                if k:
                    emitted[rid] = k
                    emitted_at[rid] += [t_end] * k
                    if len(emitted_at[rid]) == n_new:
                        finished.append(rid)
            for rid in finished:
                running.remove(rid)
                free += self._reserve_plain(reqs[rid][1], reqs[rid][2])
                done += 1
            steps.append({"t_start": clock, "t_end": t_end, "scheduled": scheduled, "emitted": emitted,
                          "finished": finished})
            clock = t_end
        per = []
        for (arrival, _, n), times in zip(reqs, emitted_at, strict=True):
            gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
            per.append({"ttft_s": times[0] - arrival, "tpot_s": (times[-1] - times[0]) / (n - 1) if n > 1 else 0.0,
                        "finish_s": times[-1], "tokens": n, "max_itl_s": max(gaps, default=0.0)})
        makespan = max(r["finish_s"] for r in per)
        multi = [r["tpot_s"] for r in per if r["tokens"] > 1]
        return {"steps": steps, "requests": per, "makespan_s": makespan,
                "throughput_tok_s": sum(r["tokens"] for r in per) / makespan if makespan > 0 else math.inf,
                "mean_ttft_s": sum(r["ttft_s"] for r in per) / len(per),
                "mean_tpot_s": sum(multi) / len(multi) if multi else 0.0,
                "max_itl_s": max(r["max_itl_s"] for r in per)}
