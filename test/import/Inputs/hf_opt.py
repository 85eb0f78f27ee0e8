"""Hugging Face OPTForCausalLM at a tiny configuration, random weights: a
decoder with a padding row in its token embeddings (pad_token_id 1: no
gradient), learned positions (offset by 2, as OPT's), pre-LayerNorm blocks,
ReLU MLPs and a tied head. Dropout off, so that PyTorch and lpc train the
same function."""
import torch
from transformers import OPTConfig, OPTForCausalLM

VOCAB, SEQ, BATCH = 128, 16, 4


def make():
    torch.manual_seed(0)
    cfg = OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                    num_attention_heads=4, max_position_embeddings=SEQ, word_embed_proj_dim=32,
                    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, layerdrop=0.0,
                    use_cache=False, attn_implementation="sdpa")
    m = OPTForCausalLM(cfg)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return m, {"input_ids": ids, "labels": ids}


def batches(steps):
    # Every batch holds the padding id (1), so that the padding row's
    # missing gradient is exercised.
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (steps * BATCH, SEQ), generator=g)
    ids[:, 3::7] = 1
    return {"input_ids": ids, "labels": ids.clone()}
