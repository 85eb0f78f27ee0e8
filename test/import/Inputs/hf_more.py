"""More Hugging Face architectures at tiny configurations, random weights,
dropout off, nothing downloaded: GPT-NeoX (partial rotary embeddings,
parallel attention + MLP residual), Gemma (grouped-query attention with its
own head_dim, RMSNorm of (1 + weight), scaled embeddings, GELU-tanh gated
MLP), DistilBERT for sequence classification (an encoder, a pooled
first-token head, integer class labels), mBART with padded labels, LongT5
(transient-global attention), CANINE (hashed characters) and DeBERTa-v2."""
import torch
from transformers import (DistilBertConfig, DistilBertForSequenceClassification, GemmaConfig,
                          GemmaForCausalLM, GPTNeoXConfig, GPTNeoXForCausalLM)

VOCAB, SEQ, BATCH, CLASSES = 96, 16, 2, 3


def _lm(model):
    ids = torch.randint(3, VOCAB, (BATCH, SEQ))
    return model, {"input_ids": ids, "labels": ids.clone()}


def neox():
    torch.manual_seed(0)
    return _lm(GPTNeoXForCausalLM(GPTNeoXConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=SEQ, rotary_pct=0.25, use_cache=False,
        attention_dropout=0.0, hidden_dropout=0.0, attn_implementation="sdpa")))


def gemma():
    torch.manual_seed(0)
    return _lm(GemmaForCausalLM(GemmaConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=1, head_dim=8, intermediate_size=48, max_position_embeddings=SEQ,
        use_cache=False, attn_implementation="sdpa")))


def distilbert():
    torch.manual_seed(0)
    m = DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
        max_position_embeddings=SEQ, num_labels=CLASSES, dropout=0.0, attention_dropout=0.0,
        seq_classif_dropout=0.0, attn_implementation="sdpa"))
    return m, {"input_ids": torch.randint(3, VOCAB, (BATCH, SEQ)),
               "labels": torch.randint(0, CLASSES, (BATCH,))}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, VOCAB, (steps * BATCH, SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}


def distilbert_batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"input_ids": torch.randint(3, VOCAB, (steps * BATCH, SEQ), generator=g),
            "labels": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}


# As the configs come: use_cache on (the model returns its key/value cache, a
# DynamicCache torch.export cannot flatten: lpc-import exports with it off),
# and BERT's dropout (0.1) in training mode with an in-place op, so that the
# program is functionalized and dropout reaches the importer as
# aten.native_dropout.
def qwen2_default():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    m = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, max_position_embeddings=SEQ))
    assert m.config.use_cache
    return _lm(m)


def bert_dropout():
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    m = BertForSequenceClassification(BertConfig(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=SEQ, num_labels=CLASSES))
    return m, {"input_ids": torch.randint(3, VOCAB, (BATCH, SEQ)),
               "labels": torch.randint(0, CLASSES, (BATCH,))}


# Phi-3 as configured by default: use_cache on, and rotary embeddings over
# the whole head, so the "pass" part of each query and key is an empty slice
# that is concatenated back.
def phi3_default():
    from transformers import Phi3Config, Phi3ForCausalLM
    torch.manual_seed(0)
    return _lm(Phi3ForCausalLM(Phi3Config(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, max_position_embeddings=SEQ,
        pad_token_id=0, bos_token_id=1, eos_token_id=2)))


# mBART builds its decoder inputs by gathering each sequence's last real
# token at (number of non-padding tokens - 1): a count of a boolean tensor
# used as an integer index.
def mbart():
    from transformers import MBartConfig, MBartForConditionalGeneration
    torch.manual_seed(0)
    m = MBartForConditionalGeneration(MBartConfig(
        vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48,
        decoder_ffn_dim=48, max_position_embeddings=SEQ + 2, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2))
    return m, mbart_batches(1)


def mbart_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    ids = torch.randint(3, VOCAB, (n, SEQ), generator=g)
    labels = torch.randint(3, VOCAB, (n, SEQ // 2), generator=g)
    labels[1::2, -3:] = 0   # padded labels: the last real token is found by the count
    return {"input_ids": ids, "labels": labels}


# LongT5 with transient-global attention: global block ids by floor of a
# cumsum, a boolean mask compared with 0, one_hot (any), integer abs in its
# relative position buckets. Padded inputs with their attention mask.
def longt5():
    from transformers import LongT5Config, LongT5ForConditionalGeneration
    torch.manual_seed(0)
    m = LongT5ForConditionalGeneration(LongT5Config(
        vocab_size=VOCAB, d_model=32, d_ff=48, num_layers=1, num_decoder_layers=1, num_heads=4,
        d_kv=8, dropout_rate=0.0, local_radius=4, global_block_size=4,
        encoder_attention_type="transient-global", pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0))
    return m, longt5_batches(1)


def longt5_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    ids = torch.randint(3, VOCAB, (n, SEQ), generator=g)
    mask = torch.ones(n, SEQ, dtype=torch.long)
    mask[1::2, -5:] = 0
    ids[mask == 0] = 0
    return {"input_ids": ids, "attention_mask": mask,
            "labels": torch.randint(3, VOCAB, (n, SEQ // 2), generator=g)}


# CANINE: characters hashed into buckets ((id + 1) * prime % buckets, in
# integers), downsampled by a strided convolution, upsampled by repetition.
def canine():
    from transformers import CanineConfig, CanineForSequenceClassification
    torch.manual_seed(0)
    m = CanineForSequenceClassification(CanineConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=48,
        max_position_embeddings=64, num_hash_buckets=61, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=CLASSES, downsampling_rate=4))
    return m, canine_batches(1)


def canine_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    # Unicode code points, up to the last plane: the hash's products exceed 2^24.
    return {"input_ids": torch.randint(32, 0x10FFFF, (n, SEQ), generator=g),
            "labels": torch.randint(0, CLASSES, (n,), generator=g)}


# DeBERTa-v2 (disentangled attention: content-to-position and
# position-to-content terms, log-bucketed relative positions gathered per
# query) for sequence classification; problem_type set, as its default loss
# indexes by labels.nonzero(), which torch.export cannot trace.
def deberta_v2():
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification
    torch.manual_seed(0)
    m = DebertaV2ForSequenceClassification(DebertaV2Config(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=SEQ, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=CLASSES, pad_token_id=0,
        relative_attention=True, position_buckets=8, max_relative_positions=16,
        pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True,
        position_biased_input=False, problem_type="single_label_classification"))
    return m, distilbert_batches(1)
