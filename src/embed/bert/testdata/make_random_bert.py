#!/usr/bin/env python3
"""Writes a small random BERT sentence-transformers model and NumPy reference embeddings.

    make_random_bert.py OUT_DIR [--dtype F32|F16|BF16] [--prefix] [--seed N] [--max-seq-length N]
                        [--hidden 32 --layers 2 --heads 4 --intermediate 64 --max-pos 40]

OUT_DIR receives model.safetensors (written by hand: no torch or safetensors package is needed),
config.json, vocab.txt, sentence_bert_config.json, tokenizer_config.json, 1_Pooling/config.json
and reference.json: {"texts": [...], "ids": [[...]], "embeddings": [[...]]}, computed here with an
independent implementation of the BERT tokenizer (unicodedata) and the encoder (NumPy, float64)
from the weights as stored (F16/BF16 values are rounded before the reference uses them).
embed_bert_test compares BertEmbedder against reference.json to 1e-5.
"""
import argparse
import json
import math
import os
import struct
import unicodedata

import numpy as np

HIDDEN, LAYERS, HEADS, INTERMEDIATE, MAX_POS, TYPE_VOCAB = 32, 2, 4, 64, 40, 2
EPS = 1e-12

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ("the quick brown fox jump over lazy dog hello world un cafe naive memory store agent user "
         "prefer dark mode and is a an to of in on it at be this that with for as was were").split()
PIECES = "##s ##ed ##ing ##aff ##able ##ly ##er ##est ##o ##a".split()
CJK = ["中", "国", "人", "日", "本"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["¿", "«", "»", "—"]


def vocabulary():
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    digits = [str(d) for d in range(10)]
    tokens = SPECIAL + PUNCT + letters + ["##" + c for c in letters] + digits + ["##" + d for d in digits]
    tokens += WORDS + PIECES + CJK + ["é", "ß"]
    seen, out = set(), []
    for t in tokens:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


# --- tokenizer: the steps of bert_tokenizer.h, written independently -----------------------------

def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def is_whitespace(ch):
    return ch in " \t\n\r" or ch.isspace()


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in [
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)])


def words_of(text, lower=True):
    normalized = []
    for ch in text:
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        if is_whitespace(ch):
            normalized.append(" ")
        elif is_cjk(ch):
            normalized += [" ", ch, " "]
        elif lower:
            stripped = "".join(c for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn")
            normalized += [c.lower() for c in stripped]
        else:
            normalized.append(ch)
    words = []
    for chunk in "".join(normalized).split():
        current = ""
        for ch in chunk:
            if is_punctuation(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


def wordpiece(word, vocab):
    if len(word) > 100:
        return [vocab["[UNK]"]]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while end > start:
            piece = ("##" if start > 0 else "") + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        ids.append(found)
        start = end
    return ids


def encode(text, vocab, max_seq_length):
    ids = []
    for w in words_of(text):
        ids += wordpiece(w, vocab)
    return [vocab["[CLS]"]] + ids[:max_seq_length - 2] + [vocab["[SEP]"]]


# --- encoder --------------------------------------------------------------------------------------

def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def forward(ids, w, prefix):
    g = lambda name: w[prefix + name]
    x = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[:len(ids)]
    x = x + g("embeddings.token_type_embeddings.weight")[0]
    x = layer_norm(x, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
    d = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        lin = lambda name, t: t @ g(p + name + ".weight").T + g(p + name + ".bias")
        q, k, v = (lin("attention.self." + n, x) for n in ("query", "key", "value"))
        heads = []
        for h in range(HEADS):
            s = q[:, h * d:(h + 1) * d] @ k[:, h * d:(h + 1) * d].T / math.sqrt(d)
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            s /= s.sum(axis=-1, keepdims=True)
            heads.append(s @ v[:, h * d:(h + 1) * d])
        a = lin("attention.output.dense", np.concatenate(heads, axis=-1))
        x = layer_norm(x + a, g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias"))
        f = lin("output.dense", gelu(lin("intermediate.dense", x)))
        x = layer_norm(x + f, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias"))
    pooled = x.mean(axis=0)
    return pooled / np.linalg.norm(pooled)


# --- weights and the safetensors file -------------------------------------------------------------

def random_weights(rng, vocab_size):
    shapes = {
        "embeddings.word_embeddings.weight": (vocab_size, HIDDEN),
        "embeddings.position_embeddings.weight": (MAX_POS, HIDDEN),
        "embeddings.token_type_embeddings.weight": (TYPE_VOCAB, HIDDEN),
        "embeddings.LayerNorm.weight": (HIDDEN,), "embeddings.LayerNorm.bias": (HIDDEN,),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + n + ".weight"], shapes[p + n + ".bias"] = (HIDDEN, HIDDEN), (HIDDEN,)
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (INTERMEDIATE, HIDDEN), (INTERMEDIATE,)
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (HIDDEN, INTERMEDIATE), (HIDDEN,)
        for n in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + n + ".weight"], shapes[p + n + ".bias"] = (HIDDEN,), (HIDDEN,)
    shapes["pooler.dense.weight"], shapes["pooler.dense.bias"] = (HIDDEN, HIDDEN), (HIDDEN,)
    weights = {}
    for name, shape in shapes.items():
        if name.endswith("LayerNorm.weight"):
            weights[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            weights[name] = 0.5 * rng.standard_normal(shape)
    return weights


def encode_tensor(array, dtype):
    """Returns (stored bytes, the float64 values those bytes hold)."""
    if dtype == "F32":
        a = array.astype("<f4")
        return a.tobytes(), a.astype(np.float64)
    if dtype == "F16":
        a = array.astype("<f2")
        return a.tobytes(), a.astype(np.float64)
    bits = array.astype("<f4").view("<u4")
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")  # round to nearest even
    return rounded.tobytes(), (rounded.astype("<u4") << 16).view("<f4").astype(np.float64)


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, _, data in tensors:
            f.write(data)


TEXTS = [
    "the quick brown fox",
    "Hello, World! The lazy dog jumped over the fox.",
    "Café naïve ÉLÉGANT straße",
    "中国人 use 日本 memory\tstore\nagent",
    "unaffable foxes, unaffably: jumping!!!",
    "",
    "   \t\n  ",
    "qwxz zzzz 12345 is a test of unknown 🙂 emoji and #hashtag @user",
    "a" * 101 + " " + "b" * 100,
    "control\x00\x07chars\u200bhere and\u00a0nbsp",
    "«quoted» ¿que? — dash",
    " ".join(["the user prefers dark mode"] * 12),
]


def main():
    global HIDDEN, LAYERS, HEADS, INTERMEDIATE, MAX_POS
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    parser.add_argument("--prefix", action="store_true", help='name tensors "bert.embeddings..."')
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=HIDDEN)
    parser.add_argument("--layers", type=int, default=LAYERS)
    parser.add_argument("--heads", type=int, default=HEADS)
    parser.add_argument("--intermediate", type=int, default=INTERMEDIATE)
    parser.add_argument("--max-pos", type=int, default=MAX_POS)
    args = parser.parse_args()
    HIDDEN, LAYERS, HEADS, INTERMEDIATE, MAX_POS = args.hidden, args.layers, args.heads, args.intermediate, args.max_pos
    os.makedirs(os.path.join(args.out_dir, "1_Pooling"), exist_ok=True)
    rng = np.random.default_rng(args.seed)
    tokens = vocabulary()
    vocab = {t: i for i, t in enumerate(tokens)}
    prefix = "bert." if args.prefix else ""

    tensors, stored = [], {}
    for name, value in random_weights(rng, len(tokens)).items():
        data, as_read = encode_tensor(value, args.dtype)
        tensors.append((prefix + name, args.dtype, value.shape, data))
        stored[prefix + name] = as_read
    position_ids = np.arange(MAX_POS, dtype="<i8").reshape(1, MAX_POS)  # a non-float buffer, ignored
    tensors.append((prefix + "embeddings.position_ids", "I64", position_ids.shape, position_ids.tobytes()))
    write_safetensors(os.path.join(args.out_dir, "model.safetensors"), tensors)

    config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": HIDDEN,
              "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE,
              "max_position_embeddings": MAX_POS, "vocab_size": len(tokens), "type_vocab_size": TYPE_VOCAB,
              "layer_norm_eps": EPS, "hidden_act": "gelu", "position_embedding_type": "absolute"}
    files = {
        "config.json": config,
        "sentence_bert_config.json": {"max_seq_length": args.max_seq_length, "do_lower_case": False},
        "tokenizer_config.json": {"do_lower_case": True, "strip_accents": None, "model_max_length": 512},
        "1_Pooling/config.json": {"word_embedding_dimension": HIDDEN, "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False},
    }
    for name, value in files.items():
        with open(os.path.join(args.out_dir, name), "w") as f:
            json.dump(value, f, indent=2)
    with open(os.path.join(args.out_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")

    ids = [encode(t, vocab, args.max_seq_length) for t in TEXTS]
    embeddings = [forward(np.array(i), stored, prefix).tolist() for i in ids]
    with open(os.path.join(args.out_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"texts": TEXTS, "ids": ids, "embeddings": embeddings}, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
