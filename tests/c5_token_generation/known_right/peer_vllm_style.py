"""Correct alternative (peer check): the idiom of the public Triton decode-attention kernels (LightLLM's, as adopted
by SGLang and vLLM's triton backend), written anew with only the signature adapted. Stage 1 runs on a
(batch, head groups, splits) grid with the splits cut in TOKENS (cdiv(context, num_splits) each, not aligned to
blocks), walks BLOCK_N tokens at a time, looks each token's slot up in the block table (table[t // B]·B + t % B,
loads masked to the split), pads the group's query heads to 16 rows for tl.dot, and writes acc / e_sum and
e_max + log(e_sum) into one mid buffer [batch, heads, splits, d + 1] only for non-empty splits; stage 2 loops over
the splits, recomputes which are empty from the context length and skips them, and merges with a running
(e_max, e_sum) rescale."""

MODULE = "flash_decode"
ACCEPTED = ["flash_decode"]

_PEER_BLOCK_N = 16
_PEER_BLOCK_H = 16


@triton.jit
def _peer_stage1(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, mid_ptr, sm_scale, num_splits, group, head_dim, page,
                 stride_qb, stride_qh, stride_qd, stride_kn, stride_kb, stride_kh, stride_kd, stride_vn, stride_vb,
                 stride_vh, stride_vd, stride_tb, stride_tn, stride_mb, stride_mh, stride_ms,
                 BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    cur_batch = tl.program_id(0).to(tl.int64)
    cur_kv_head = tl.program_id(1).to(tl.int64)
    split_id = tl.program_id(2)
    cur_head = cur_kv_head * group + tl.arange(0, BLOCK_H)
    mask_h = tl.arange(0, BLOCK_H) < group
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < head_dim
    seq_len = tl.load(lens_ptr + cur_batch)
    per_split = tl.cdiv(seq_len, num_splits)
    split_start = per_split * split_id
    split_end = tl.minimum(split_start + per_split, seq_len)
    q = tl.load(q_ptr + cur_batch * stride_qb + cur_head[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=mask_h[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
    e_max = tl.zeros([BLOCK_H], dtype=tl.float32) - float("inf")
    e_sum = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], dtype=tl.float32)
    if split_end > split_start:
        for start_n in range(split_start, split_end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            mask_n = offs_n < split_end
            kv_page = tl.load(table_ptr + cur_batch * stride_tb + (offs_n // page) * stride_tn, mask=mask_n,
                              other=0).to(tl.int64)
            kv_off = offs_n % page
            k = tl.load(k_ptr + kv_page[:, None] * stride_kn + kv_off[:, None] * stride_kb + cur_kv_head * stride_kh
                        + offs_d[None, :] * stride_kd, mask=mask_n[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
            qk = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
            qk = tl.where(mask_h[:, None] & mask_n[None, :], qk, float("-inf"))
            v = tl.load(v_ptr + kv_page[:, None] * stride_vn + kv_off[:, None] * stride_vb + cur_kv_head * stride_vh
                        + offs_d[None, :] * stride_vd, mask=mask_n[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
            n_e_max = tl.maximum(tl.max(qk, 1), e_max)
            n_e_max = tl.where(mask_h, n_e_max, 0.0)  # padded head rows stay finite
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            acc *= re_scale[:, None]
            acc += tl.dot(p, v, input_precision="ieee")
            e_sum = e_sum * re_scale + tl.sum(p, 1)
            e_max = n_e_max
        base = mid_ptr + cur_batch * stride_mb + cur_head * stride_mh + split_id * stride_ms
        tl.store(base[:, None] + offs_d[None, :], acc / e_sum[:, None], mask=mask_h[:, None] & mask_d[None, :])
        tl.store(base + head_dim, e_max + tl.log(e_sum), mask=mask_h)


@triton.jit
def _peer_stage2(mid_ptr, lens_ptr, o_ptr, num_splits, n_heads, head_dim, stride_mb, stride_mh, stride_ms,
                 stride_ob, stride_oh, BLOCK_D: tl.constexpr):
    cur_batch = tl.program_id(0).to(tl.int64)
    cur_head = tl.program_id(1).to(tl.int64)
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < head_dim
    seq_len = tl.load(lens_ptr + cur_batch)
    per_split = tl.cdiv(seq_len, num_splits)
    e_sum = 0.0
    e_max = -float("inf")
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    base = mid_ptr + cur_batch * stride_mb + cur_head * stride_mh
    for split_id in range(0, num_splits):
        split_start = per_split * split_id
        split_end = tl.minimum(split_start + per_split, seq_len)
        if split_end > split_start:
            tv = tl.load(base + split_id * stride_ms + offs_d, mask=mask_d, other=0.0)
            tlogic = tl.load(base + split_id * stride_ms + head_dim)
            n_e_max = tl.maximum(tlogic, e_max)
            old_scale = tl.exp(e_max - n_e_max)
            acc *= old_scale
            exp_logic = tl.exp(tlogic - n_e_max)
            acc += exp_logic * tv
            e_sum = e_sum * old_scale + exp_logic
            e_max = n_e_max
    tl.store(o_ptr + cur_batch * stride_ob + cur_head * stride_oh + offs_d, (acc / e_sum).to(o_ptr.dtype.element_ty),
             mask=mask_d)


def flash_decode(q, k_cache, v_cache, block_table, context_lens, num_splits=4, *, sm_scale=None):
    batch, n_heads, d, block_size, n_kv, splits = _check_decode_args(q, k_cache, v_cache, block_table, context_lens,
                                                                     num_splits)
    scale = float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)
    group = n_heads // n_kv
    mid = torch.empty((batch, n_heads, splits, d + 1), dtype=torch.float32, device=q.device)
    o = torch.empty((batch, n_heads, d), dtype=q.dtype, device=q.device)
    block_d = max(16, triton.next_power_of_2(d))
    _peer_stage1[(batch, n_kv, splits)](
        q, k_cache, v_cache, block_table, context_lens, mid, scale, splits, group, d, block_size,
        *q.stride(), *k_cache.stride(), *v_cache.stride(), *block_table.stride(), mid.stride(0), mid.stride(1),
        mid.stride(2),
        BLOCK_N=_PEER_BLOCK_N, BLOCK_H=max(_PEER_BLOCK_H, triton.next_power_of_2(group)), BLOCK_D=block_d)
    _peer_stage2[(batch, n_heads)](mid, context_lens, o, splits, n_heads, d, mid.stride(0), mid.stride(1),
                                    mid.stride(2), o.stride(0), o.stride(1), BLOCK_D=block_d)
    return o
