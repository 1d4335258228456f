#!/usr/bin/env python3
"""Writes a tiny llama-architecture model with random weights over a vocabulary shipped with llama.cpp, for the
local-llm test: a real server, a real chat template with tool calling, and nothing downloaded. Its replies are
noise (random text), which the agent loop must survive like any other reply.

Usage: tiny_model.py VOCAB.gguf TEMPLATE.jinja OUT.gguf [--layers N] [--embd N] [--context N]
"""
import argparse

import numpy as np

import gguf


def copy_tokenizer(reader, writer):
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        kind = gguf.GGUFValueType(field.types[0])
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(name, field.contents(), kind, gguf.GGUFValueType(field.types[1]))
        else:
            writer.add_key_value(name, field.contents(), kind)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vocab")
    parser.add_argument("template")
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--embd", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=16384)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    reader = gguf.GGUFReader(args.vocab)
    n_vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    rng = np.random.default_rng(args.seed)
    embd, ffn, heads = args.embd, args.embd * 2, args.heads

    def weight(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer = gguf.GGUFWriter(args.out, "llama")
    writer.add_name("evoteam-tiny-random")
    writer.add_context_length(args.context)
    writer.add_embedding_length(embd)
    writer.add_block_count(args.layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_rope_dimension_count(embd // heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    copy_tokenizer(reader, writer)
    with open(args.template, encoding="utf-8") as template:
        writer.add_chat_template(template.read())

    # numpy shapes are (rows, columns); GGUF stores them reversed, as llama.cpp expects.
    writer.add_tensor("token_embd.weight", weight(n_vocab, embd))
    writer.add_tensor("output_norm.weight", np.ones(embd, dtype=np.float32))
    for layer in range(args.layers):
        prefix = "blk.%d." % layer
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(prefix + name + ".weight", weight(embd, embd))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(embd, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", weight(ffn, embd))
        writer.add_tensor(prefix + "ffn_up.weight", weight(ffn, embd))
        writer.add_tensor(prefix + "ffn_down.weight", weight(embd, ffn))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
