"""L17 · the control plane's share of a message, one-hop vs two-hop MoE dispatch, fire-and-forget vs handshake puts."""

from __future__ import annotations

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from grader.kit import assert_number, assert_parts, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l17_inter_node"
control_share = learner(UNIT, "inter_node", "control_share")
moe_dispatch = learner(UNIT, "inter_node", "moe_dispatch")
dispatch_time_us = learner(UNIT, "inter_node", "dispatch_time_us")
signalled_puts_us = learner(UNIT, "inter_node", "signalled_puts_us")

REL = 1e-9  # floats against the closed form
IBRC_ALPHA_S = 6e-6  # lecture §1.2: 1.0 + 3.0 + 0.3 + 1.2 + 0.5 µs
NIC_BPS = 45e9  # lecture §1.3: effective 400G NIC


def printed(got, value: str, what: str):
    """`got` rounds to the printed figure `value` (within half a unit of its last digit)."""
    decimals = len(value.split(".")[1]) if "." in value else 0
    assert_number(got, float(value), what, rel=0.0, abs_tol=0.5 * 10.0**-decimals + 1e-12)


# ---- control_share -------------------------------------------------------------------------------


@grade(control_share, "correctness", points=2,
       hint="What fraction of α + S/β is α? Compare a 256 MB bucket with a 14 KB decode message.")
def test_control_share_worked_examples():
    """6 µs at 45 GB/s: 256 MB → 0.1 %, 14,000 B → 95.07 %, 14 KiB → 94.96 %, 256 MiB; IBGDA's 1 µs → 76.3 %."""
    printed(control_share(IBRC_ALPHA_S, 256_000_000, NIC_BPS), "0.0010536", "control_share(6e-6, 256_000_000, 45e9)")
    printed(control_share(IBRC_ALPHA_S, 14_000, NIC_BPS), "0.9507042", "control_share(6e-6, 14_000, 45e9)")
    printed(control_share(IBRC_ALPHA_S, 14_336, NIC_BPS), "0.9495808", "control_share(6e-6, 14_336, 45e9) (14 KiB)")
    printed(control_share(IBRC_ALPHA_S, 268_435_456, NIC_BPS), "0.0010048",
            "control_share(6e-6, 268_435_456, 45e9) (256 MiB)")
    printed(control_share(1e-6, 14_000, NIC_BPS), "0.7627119", "control_share(1e-6, 14_000, 45e9) (IBGDA)")
    assert_number(control_share(0.0, 4096, NIC_BPS), 0.0, "control_share(0.0, 4096, 45e9): no control latency")
    assert_number(control_share(IBRC_ALPHA_S, 0, NIC_BPS), 1.0, "control_share(6e-6, 0, 45e9): an empty message")


@grade(control_share, "correctness", points=2,
       hint="As the message grows, does the control plane's share grow or shrink? And as α grows?")
@settings(max_examples=50)
@given(alpha=st.floats(0, 1e-3), size=st.integers(0, 2**34), beta=st.floats(1e6, 1e12), more=st.integers(1, 2**30))
def test_control_share_properties(alpha, size, beta, more):
    """The closed form; in [0, 1]; non-increasing in the message size, non-decreasing in α."""
    assume(alpha > 0 or size > 0)
    got = control_share(alpha, size, beta)
    assert_number(got, alpha / (alpha + size / beta), f"control_share({alpha!r}, {size}, {beta!r})", rel=REL)
    assert 0.0 <= got <= 1.0, f"control_share({alpha!r}, {size}, {beta!r}) = {got!r}: a share lies in [0, 1]"
    bigger = control_share(alpha, size + more, beta)
    assert bigger <= got * (1 + 1e-12), f"a bigger message ({size + more} B) gave a larger share: {bigger!r} > {got!r}"
    slower = control_share(alpha * 2 + 1e-9, size, beta)
    assert slower >= got * (1 - 1e-12), f"a larger α gave a smaller share: {slower!r} < {got!r}"


@grade(control_share, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: sizes are exact ints, α is ≥ 0 and β > 0, and 0/0 is no share.")
def test_control_share_rejects_bad_arguments():
    assert_rejects_all(control_share, [
        ((-1e-6, 14_000, NIC_BPS), "alpha_s"), ((math.nan, 14_000, NIC_BPS), "alpha_s"),
        ((True, 14_000, NIC_BPS), "alpha_s"), ((6e-6, 14e3, NIC_BPS), "msg_bytes"), ((6e-6, -1, NIC_BPS), "msg_bytes"),
        ((6e-6, 14_000, 0.0), "beta_bytes_per_s"), ((6e-6, 14_000, math.inf), "beta_bytes_per_s"),
        ((6e-6, 14_000, -45e9), "beta_bytes_per_s"), ((0.0, 0, NIC_BPS), "alpha_s"), ((0.0, 0, NIC_BPS), "msg_bytes"),
    ])


# ---- moe_dispatch --------------------------------------------------------------------------------


def want_dispatch(t, h, e, g, n):
    m = t * h * e
    return {"msg_bytes": m, "nic_bytes_per_gpu": (n - 1) * g * m, "one_hop_flows_per_gpu": (n - 1) * g,
            "one_hop_flows_total": n * g * (n - 1) * g, "two_hop_flows_per_gpu": n - 1,
            "two_hop_flows_total": n * g * (n - 1), "two_hop_msg_bytes": g * m,
            "nvlink_forwards_per_gpu": (n - 1) * (g - 1), "nvlink_bytes_per_gpu": (n - 1) * (g - 1) * m}


def check_dispatch(got, want, what):
    assert isinstance(got, dict), f"{what} returned {got!r}, expected a dict"
    missing = sorted(set(want) - set(got))
    assert not missing, f"{what} has no keys {missing}"
    assert_parts({k: got[k] for k in want}, want, what)


@grade(moe_dispatch, "correctness", points=3,
       hint="EP = 64 on 8 nodes: how many remote GPUs does each GPU send to, and how many remote nodes?")
def test_moe_dispatch_worked_example():
    """8 tokens of 7168 bf16 on 8×8 GPUs: 114,688 B per message; 56 vs 7 messages per GPU; 49 NVLink forwards."""
    want = {"msg_bytes": 114_688, "nic_bytes_per_gpu": 6_422_528, "one_hop_flows_per_gpu": 56,
            "one_hop_flows_total": 3584, "two_hop_flows_per_gpu": 7, "two_hop_flows_total": 448,
            "two_hop_msg_bytes": 917_504, "nvlink_forwards_per_gpu": 49, "nvlink_bytes_per_gpu": 5_619_712}
    check_dispatch(moe_dispatch(8, 7168, 2, 8, 8), want, "moe_dispatch(8, 7168, 2, 8, 8)")
    check_dispatch(moe_dispatch(1, 4096, 2, 1, 2), want_dispatch(1, 4096, 2, 1, 2),
                   "moe_dispatch(1, 4096, 2, 1, 2) (one GPU per node: nothing to forward)")


@grade(moe_dispatch, "correctness", points=2,
       hint="Does aggregating per node change how many bytes leave a GPU's NIC, or only how many messages carry them?")
@settings(max_examples=50)
@given(t=st.integers(1, 4096), h=st.integers(1, 16384), e=st.integers(1, 4), g=st.integers(1, 16),
       n=st.integers(2, 512))
def test_moe_dispatch_any_shape(t, h, e, g, n):
    """The closed forms; NIC bytes the same on both paths; totals = per-GPU × N·g."""
    got = moe_dispatch(t, h, e, g, n)
    what = f"moe_dispatch({t}, {h}, {e}, {g}, {n})"
    check_dispatch(got, want_dispatch(t, h, e, g, n), what)
    assert got["one_hop_flows_per_gpu"] * got["msg_bytes"] == got["nic_bytes_per_gpu"], what
    assert got["two_hop_flows_per_gpu"] * got["two_hop_msg_bytes"] == got["nic_bytes_per_gpu"], what
    assert got["one_hop_flows_total"] == got["one_hop_flows_per_gpu"] * n * g, what
    assert got["two_hop_flows_total"] == got["two_hop_flows_per_gpu"] * n * g, what


DISPATCH_BAD = [
    ((0, 7168, 2, 8, 8), "tokens"), ((8.0, 7168, 2, 8, 8), "tokens"), ((8, 0, 2, 8, 8), "hidden"),
    ((8, 7168, 0, 8, 8), "elem_bytes"), ((8, 7168, 2.0, 8, 8), "elem_bytes"), ((8, 7168, 2, 0, 8), "gpus_per_node"),
    ((8, 7168, 2, True, 8), "gpus_per_node"), ((8, 7168, 2, 8, 1), "n_nodes"), ((8, 7168, 2, 8, 8.0), "n_nodes"),
]


@grade(moe_dispatch, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: counts are exact ints, and an inter-node dispatch needs 2 nodes.")
def test_moe_dispatch_rejects_bad_arguments():
    assert_rejects_all(moe_dispatch, DISPATCH_BAD)


# ---- dispatch_time_us ----------------------------------------------------------------------------


def want_times(t, h, e, g, n, a, b, bn):
    m = t * h * e
    one = (n - 1) * g * (a + m / b)
    two = (n - 1) * (a + g * m / b) + (n - 1) * (g - 1) * m / bn
    return one, two


def check_times(got, one, two, what):
    assert isinstance(got, dict), f"{what} returned {got!r}, expected a dict"
    for key in ("one_hop_us", "two_hop_us", "speedup"):
        assert key in got, f"{what} has no key {key!r}"
    assert_number(got["one_hop_us"], one, f"{what}['one_hop_us']", rel=REL)
    assert_number(got["two_hop_us"], two, f"{what}['two_hop_us']", rel=REL)
    assert_number(got["speedup"], one / two, f"{what}['speedup']", rel=REL)


@grade(dispatch_time_us, "correctness", points=3,
       hint="Each message on the NIC costs α plus its bytes over β. How many messages does each path post?")
def test_dispatch_time_worked_examples():
    """IBRC α = 6 µs: 478.72 vs 197.21 µs (2.43×); IBGDA α = 1 µs: 198.72 vs 162.21 µs (1.23×)."""
    got = dispatch_time_us(8, 7168, 2, 8, 8, 6.0, 45e3, 450e3)
    what = "dispatch_time_us(8, 7168, 2, 8, 8, 6.0, 45e3, 450e3)"
    printed(got["one_hop_us"], "478.72284", f"{what}['one_hop_us']")
    printed(got["two_hop_us"], "197.21109", f"{what}['two_hop_us']")
    printed(got["speedup"], "2.427464", f"{what}['speedup']")
    got = dispatch_time_us(8, 7168, 2, 8, 8, 1.0, 45e3, 450e3)
    what = "dispatch_time_us(8, 7168, 2, 8, 8, 1.0, 45e3, 450e3) (IBGDA)"
    printed(got["one_hop_us"], "198.72284", f"{what}['one_hop_us']")
    printed(got["two_hop_us"], "162.21109", f"{what}['two_hop_us']")
    printed(got["speedup"], "1.225088", f"{what}['speedup']")


@grade(dispatch_time_us, "correctness", points=2,
       hint="What does two-hop save per forwarded share, and what does the forward cost on NVLink?")
@settings(max_examples=50)
@given(t=st.integers(1, 512), h=st.integers(1, 16384), e=st.integers(1, 4), g=st.integers(1, 16), n=st.integers(2, 64),
       a=st.floats(0, 20), b=st.floats(1e3, 1e5), bn=st.floats(1e3, 2e6))
def test_dispatch_time_any_shape(t, h, e, g, n, a, b, bn):
    """The formulas; one − two = (N−1)(g−1)(α − m/β_nvl): two-hop wins exactly when α exceeds a share's NVLink time."""
    got = dispatch_time_us(t, h, e, g, n, a, b, bn)
    one, two = want_times(t, h, e, g, n, a, b, bn)
    check_times(got, one, two, f"dispatch_time_us({t}, {h}, {e}, {g}, {n}, {a!r}, {b!r}, {bn!r})")
    m = t * h * e
    gap = (n - 1) * (g - 1) * (a - m / bn)
    assert math.isclose(got["one_hop_us"] - got["two_hop_us"], gap, rel_tol=1e-6, abs_tol=1e-6 * one), (
        f"one_hop_us − two_hop_us = {got['one_hop_us'] - got['two_hop_us']!r}, expected (N−1)(g−1)(α − m/β_nvl) = "
        f"{gap!r}")


@grade(dispatch_time_us, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: counts as in moe_dispatch, α ≥ 0, bandwidths > 0.")
def test_dispatch_time_rejects_bad_arguments():
    ok = (8, 7168, 2, 8, 8)
    rows = [((*args, 6.0, 45e3, 450e3), name) for args, name in DISPATCH_BAD]
    rows += [((*ok, -1.0, 45e3, 450e3), "alpha_us"), ((*ok, math.inf, 45e3, 450e3), "alpha_us"),
             ((*ok, 6.0, 0.0, 450e3), "nic_bytes_per_us"), ((*ok, 6.0, "45e3", 450e3), "nic_bytes_per_us"),
             ((*ok, 6.0, 45e3, 0), "nvlink_bytes_per_us"), ((*ok, 6.0, 45e3, math.nan), "nvlink_bytes_per_us")]
    assert_rejects_all(dispatch_time_us, rows)


# ---- signalled_puts_us ---------------------------------------------------------------------------


@grade(signalled_puts_us, "correctness", points=2,
       hint="A fire-and-forget put never waits for the target. What does waiting for an ACK after each put add?")
def test_signalled_puts_worked_examples():
    """1000 puts of 14,000 B at α = 1 µs, 45 GB/s, RTT 10 µs: 1316.11 µs, 11,316.11 µs with a handshake (8.6×)."""
    ff = signalled_puts_us(1000, 14_000, 1.0, 45e3, 10.0, False)
    hs = signalled_puts_us(1000, 14_000, 1.0, 45e3, 10.0, True)
    printed(ff, "1316.1111", "signalled_puts_us(1000, 14_000, 1.0, 45e3, 10.0, False)")
    printed(hs, "11316.1111", "signalled_puts_us(1000, 14_000, 1.0, 45e3, 10.0, True)")
    printed(hs / ff, "8.6", "handshake / fire-and-forget")
    printed(signalled_puts_us(1, 0, 0.0, 45e3, 8.0, False), "4.0", "signalled_puts_us(1, 0, 0.0, 45e3, 8.0, False)")


@grade(signalled_puts_us, "correctness", points=2,
       hint="How many round trips does each path pay, and when does the last byte land?")
@settings(max_examples=50)
@given(n=st.integers(0, 10**6), s=st.integers(0, 2**24), a=st.floats(0, 20), b=st.floats(1e2, 1e6),
       rtt=st.floats(0, 50))
def test_signalled_puts_properties(n, s, a, b, rtt):
    """Both formulas; handshake − fire-and-forget = n·rtt."""
    ff = signalled_puts_us(n, s, a, b, rtt, False)
    hs = signalled_puts_us(n, s, a, b, rtt, True)
    assert_number(ff, n * (a + s / b) + rtt / 2, f"signalled_puts_us({n}, {s}, {a!r}, {b!r}, {rtt!r}, False)", rel=REL)
    assert_number(hs, n * (a + s / b + rtt) + rtt / 2, f"signalled_puts_us({n}, {s}, {a!r}, {b!r}, {rtt!r}, True)",
                  rel=REL)
    assert math.isclose(hs - ff, n * rtt, rel_tol=1e-9, abs_tol=1e-9 * max(hs, 1.0)), (
        f"handshake − fire-and-forget = {hs - ff!r}, expected n·rtt = {n * rtt!r}")


@grade(signalled_puts_us, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument; handshake is a bool, not 0/1 or 'yes'.")
def test_signalled_puts_rejects_bad_arguments():
    assert_rejects_all(signalled_puts_us, [
        ((-1, 14_000, 1.0, 45e3, 10.0, False), "n_msgs"), ((1000.0, 14_000, 1.0, 45e3, 10.0, False), "n_msgs"),
        ((1000, 14e3, 1.0, 45e3, 10.0, False), "msg_bytes"), ((1000, 14_000, -1.0, 45e3, 10.0, False), "alpha_us"),
        ((1000, 14_000, 1.0, 0.0, 10.0, False), "beta_bytes_per_us"),
        ((1000, 14_000, 1.0, 45e3, -10.0, False), "rtt_us"), ((1000, 14_000, 1.0, 45e3, math.nan, False), "rtt_us"),
        ((1000, 14_000, 1.0, 45e3, 10.0, 1), "handshake"), ((1000, 14_000, 1.0, 45e3, 10.0, "no"), "handshake"),
        ((1000, 14_000, 1.0, 45e3, 10.0, None), "handshake"),
    ])
    assert_rejects(signalled_puts_us, (1000, 14_000, 1.0, 45e3, 10.0, 0), "handshake")
