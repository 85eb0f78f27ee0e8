"""Hugging Face ViTForImageClassification at a tiny configuration, random
weights: the patch embedding is a convolution whose kernel tiles the image
(stride = kernel), then a CLS token, learned position embeddings, pre-LN
encoder blocks and a classifier on the CLS token. Dropout off."""
import torch
from transformers import ViTConfig, ViTForImageClassification

IMAGE, CLASSES, BATCH = 16, 5, 4


def make():
    torch.manual_seed(0)
    cfg = ViTConfig(image_size=IMAGE, patch_size=4, num_channels=3, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    num_labels=CLASSES, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                    attn_implementation="sdpa")
    m = ViTForImageClassification(cfg)
    return m, {"pixel_values": torch.randn(BATCH, 3, IMAGE, IMAGE),
               "labels": torch.randint(0, CLASSES, (BATCH,))}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"pixel_values": torch.randn(steps * BATCH, 3, IMAGE, IMAGE, generator=g),
            "labels": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}
