"""Hugging Face models fed padded batches with their attention_mask (1:
token, 0: padding), as a tokenizer gives them: the padding mask is computed
from the batch in the graph (a per-batch key mask, with the causal one for
decoders). BertForSequenceClassification and LlamaForCausalLM (padding on the
left, padded labels ignored with -100), tiny configurations, random weights
with a larger spread than the default (initializer_range 0.3, so that the
attention is not uniform: ignoring the mask moves the first loss by 7-11%), dropout
off."""
import torch
from transformers import (BertConfig, BertForSequenceClassification, LlamaConfig,
                          LlamaForCausalLM)

VOCAB, SEQ, BATCH, CLASSES = 96, 12, 4, 3


def _mask(n, g, left=False):
    lens = torch.randint(3, SEQ + 1, (n,), generator=g)
    lens[0] = SEQ  # one unpadded row
    if left:
        return (torch.arange(SEQ)[None] >= SEQ - lens[:, None]).long()
    return (torch.arange(SEQ)[None] < lens[:, None]).long()


def bert():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, attn_implementation="sdpa",
                     num_labels=CLASSES, initializer_range=0.3)
    g = torch.Generator().manual_seed(2)
    return BertForSequenceClassification(cfg), {
        "input_ids": torch.randint(0, VOCAB, (BATCH, SEQ), generator=g),
        "attention_mask": _mask(BATCH, g),
        "labels": torch.randint(0, CLASSES, (BATCH,), generator=g)}


def bert_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    return {"input_ids": torch.randint(0, VOCAB, (n, SEQ), generator=g),
            "attention_mask": _mask(n, g),
            "labels": torch.randint(0, CLASSES, (n,), generator=g)}


def llama():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
                      attn_implementation="sdpa", use_cache=False, initializer_range=0.3)
    b = llama_batches(1)
    return LlamaForCausalLM(cfg), b


def llama_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    ids = torch.randint(0, VOCAB, (n, SEQ), generator=g)
    # Padding on the left: on the right, the causal mask alone already keeps
    # every real token from the padding after it.
    mask = _mask(n, g, left=True)
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
