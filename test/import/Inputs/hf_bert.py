"""Hugging Face BertForMaskedLM at a tiny configuration, random weights: an
encoder (bidirectional attention, no mask), word embeddings with a padding
row (nn.Embedding(padding_idx=pad_token_id): that row gets no gradient),
token-type and learned position embeddings, post-LayerNorm blocks, GELU, and
the MLM head tied to the word embeddings. Dropout off, so that PyTorch and
lpc train the same function."""
import torch
from transformers import BertConfig, BertForMaskedLM

VOCAB, SEQ, BATCH = 128, 16, 4


def make():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, attn_implementation="sdpa")
    m = BertForMaskedLM(cfg)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return m, {"input_ids": ids, "labels": ids}


def batches(steps):
    # Every batch holds the padding id (0) a few times, so that the padding
    # row's missing gradient is exercised.
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (steps * BATCH, SEQ), generator=g)
    ids[:, ::5] = 0
    return {"input_ids": ids, "labels": ids.clone()}
