"""Mixture-of-experts models at tiny configurations, random weights,
nothing downloaded: Mixtral (softmax router, top-2 of 4 experts), Qwen2-MoE
(top-2 of 6 with a sigmoid-gated shared expert) and DeepSeek-V3 (a sigmoid
router with a bias correction that first picks expert groups: topk over the
groups, then a scatter that masks the rest), Llama-4 (complex rotary
embeddings, a router that scatters its top-k logits) and RWKV (a negative
padding). TopkNet: torch.topk, max and
min over a dim with their indices, and scatter of a value, in their forms
(largest and smallest, integers, another dim). GPT-OSS: experts in the
other layout, with biases and a clamped gate."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ, BATCH = 96, 16, 2


def _lm(model):
    ids = torch.randint(3, VOCAB, (BATCH, SEQ))
    return model, {"input_ids": ids, "labels": ids.clone()}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, VOCAB, (steps * BATCH, SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}


def llama4():
    """Llama-4: rotary embeddings in complex numbers (view_as_complex, a
    complex multiply, view_as_real), a router that scatters its top-k logits
    into -inf, and experts run densely by the model itself."""
    from transformers import Llama4TextConfig, Llama4ForCausalLM
    torch.manual_seed(0)
    return _lm(Llama4ForCausalLM(Llama4TextConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, intermediate_size=48, intermediate_size_mlp=64,
        num_local_experts=4, interleave_moe_layer_step=1, max_position_embeddings=SEQ,
        pad_token_id=0, bos_token_id=1, eos_token_id=2)))


def rwkv():
    """RWKV: a time shift written as a padding of (1, -1) along the
    sequence (a negative padding crops)."""
    from transformers import RwkvConfig, RwkvForCausalLM
    torch.manual_seed(0)
    return _lm(RwkvForCausalLM(RwkvConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, context_length=SEQ,
        bos_token_id=1, eos_token_id=2)))


def mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM
    torch.manual_seed(0)
    return _lm(MixtralForCausalLM(MixtralConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, max_position_embeddings=SEQ,
        num_local_experts=4, num_experts_per_tok=2)))


def gpt_oss():
    """GPT-OSS: experts stored [E, in, out] (the other layout), biases on
    both projections, a clamped gate (its own _apply_gate), attention sinks
    and a sliding window."""
    from transformers import GptOssConfig, GptOssForCausalLM
    torch.manual_seed(0)
    return _lm(GptOssForCausalLM(GptOssConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, intermediate_size=48, max_position_embeddings=SEQ,
        num_local_experts=4, num_experts_per_tok=2, sliding_window=8)))


def qwen2_moe():
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM
    torch.manual_seed(0)
    return _lm(Qwen2MoeForCausalLM(Qwen2MoeConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, moe_intermediate_size=24,
        shared_expert_intermediate_size=32, num_experts=6, num_experts_per_tok=2,
        max_position_embeddings=SEQ)))


def deepseek_v3():
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
    torch.manual_seed(0)
    return _lm(DeepseekV3ForCausalLM(DeepseekV3Config(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=48, moe_intermediate_size=16,
        num_hidden_layers=2, first_k_dense_replace=1, num_attention_heads=4,
        num_key_value_heads=4, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=3,
        n_group=4, topk_group=2, q_lora_rank=16, kv_lora_rank=16, qk_nope_head_dim=8,
        qk_rope_head_dim=8, v_head_dim=8, max_position_embeddings=SEQ)))


class TopkNet(nn.Module):
    """topk, largest and smallest, of floats and of integers, over the last
    dim and another one; max and min over a dim with their indices; scatter
    of a value and of a source at computed indices, along either dim. Values carry gradient; indices
    pick elements. No ties: PyTorch leaves the order of equal values
    unspecified (its CPU kernel does not keep the first one first)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x, t, y):
        h = torch.tanh(self.a(x))                            # [n, 8]
        v, i = torch.topk(h, 3)                              # [n, 3]
        w, j = torch.topk(h, 2, dim=0, largest=False)        # [2, 8]
        ti, tj = torch.topk(t, 2, dim=0)                     # integers
        hi, hj = h.max(dim=1, keepdim=True)
        lo, lj = h.min(dim=0)
        rows = torch.arange(h.shape[0])[:, None]
        z = (v * torch.tensor([1.0, 0.5, 0.25])).sum(-1) + h[rows, i].sum(-1) * 0.3
        z = z + w.sum() * 0.1 + hi[:, 0] * 0.2 + h[rows[:, 0], hj[:, 0]] * 0.1 + lo[lj].sum() * 0.05
        z = z + (ti.float() * 1e-3).sum() + h[tj].sum() * 0.01
        mask = torch.zeros_like(h).scatter(1, i[:, :2], 1.0)       # the 2 largest of each row
        g = (h * mask).sum(-1) + h.scatter(1, j.T[:5], -1.0).sum(-1) * 0.2
        top = torch.full_like(h, -2.0).scatter(1, i, v)           # Llama-4's router
        g = g + torch.sigmoid(top).sum(-1) + h.scatter(0, j, w * 2.0).sum(-1) * 0.1
        return F.cross_entropy(self.b(h) + (z + g)[:, None] * torch.tensor([1.0, -1.0, 0.5]), y)


def topknet():
    torch.manual_seed(0)
    return TopkNet(), topknet_batches(1)


def topknet_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * 5
    return {"x": torch.randn(n, 6, generator=g), "t": torch.randint(0, 1000, (n,), generator=g),
            "y": torch.randint(0, 3, (n,), generator=g)}


def _toy_experts(**flags):
    """An experts layer under transformers' @use_experts_implementation, the
    forms no tiny stock config shows together: experts without a gate
    (act(x W_up^T) W_down^T), with biases, and a norm after each expert.
    Its own forward is the sparse dispatch, written out per expert."""
    from transformers import PretrainedConfig
    from transformers.integrations.moe import use_experts_implementation

    @use_experts_implementation(**flags)
    class Experts(nn.Module):
        def __init__(self, config):
            super().__init__()
            e, d, f = 4, 12, 10
            self.num_experts = e
            self.up_proj = nn.Parameter(torch.randn(e, f, d) * 0.3)
            self.down_proj = nn.Parameter(torch.randn(e, d, f) * 0.3)
            self.up_proj_bias = nn.Parameter(torch.randn(e, f) * 0.1)
            self.down_proj_bias = nn.Parameter(torch.randn(e, d) * 0.1)
            self.act_fn = nn.SiLU()
            self.post_expert_norm = nn.LayerNorm(d)

        def forward(self, x, top_k_index, top_k_weights):
            out = torch.zeros_like(x)
            for e in range(self.num_experts):
                tok, pos = torch.where(top_k_index == e)
                h = x[tok] @ self.up_proj[e].T
                if self.has_bias:
                    h = h + self.up_proj_bias[e]
                y = self.act_fn(h) @ self.down_proj[e].T
                if self.has_bias:
                    y = y + self.down_proj_bias[e]
                if self.has_post_expert_norm:
                    y = self.post_expert_norm(y)
                out = out.index_add(0, tok, y * top_k_weights[tok, pos, None])
            return out

    return Experts(PretrainedConfig())


class ToyMoE(nn.Module):
    """A router (softmax, top-2 of 4, renormalized) over toy experts, then a
    classifier."""

    def __init__(self, **flags):
        super().__init__()
        self.inp = nn.Linear(6, 12)
        self.router = nn.Linear(12, 4, bias=False)
        self.experts = _toy_experts(has_gate=False, **flags)
        self.out = nn.Linear(12, 3)

    def forward(self, x, t, y):
        h = torch.tanh(self.inp(x))
        w, i = torch.topk(self.router(h).softmax(-1), 2)
        h = h + self.experts(h, i, w / w.sum(-1, keepdim=True))
        return F.cross_entropy(self.out(h), y)


def toy_moe_bias():
    torch.manual_seed(0)
    return ToyMoE(has_bias=True), topknet_batches(1)


def toy_moe_norm():
    torch.manual_seed(0)
    return ToyMoE(has_post_expert_norm=True), topknet_batches(1)
