#!/usr/bin/env python3
"""Writes llama-shaped GGUF files with llama.cpp's own writer (the `gguf` package), for
the segment-index tests and bench/delta: a base model and the variants a retrain makes.

    delta_models.py gguf OUT [--layers N] [--width W] [--vocab V] [--seed S]
                             [--template TEXT] [--retrain-attention] [--quantize TYPE]
    delta_models.py shape MIB   prints "LAYERS WIDTH VOCAB" for a base model of about MIB MiB

--template          the chat template (tokenizer.chat_template) written in the metadata
--retrain-attention new values for every attention projection (attn_q/k/v/output), same sizes
--quantize          write every 2-D tensor as this type instead of F16 (Q8_0): a re-quantization
The weights are a deterministic function of --seed and each tensor's name.
"""
import argparse, hashlib, sys
import numpy as np
import gguf


def weights(name, shape, seed, salt=""):
    digest = hashlib.sha256(f"{seed}:{salt}:{name}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def write_gguf(args):
    writer = gguf.GGUFWriter(args.out, "llama")
    writer.add_name("modelcast-delta-test")
    writer.add_context_length(2048)
    writer.add_embedding_length(args.width)
    writer.add_block_count(args.layers)
    writer.add_feed_forward_length(args.width * 2)
    writer.add_head_count(max(1, args.width // 64))
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"tok{index:05d}".encode() for index in range(args.vocab)])
    writer.add_token_scores([float(-index) for index in range(args.vocab)])
    writer.add_token_types([1] * args.vocab)
    writer.add_chat_template(args.template)
    quant = getattr(gguf.GGMLQuantizationType, args.quantize) if args.quantize else None

    def add(name, shape, retrained=False):
        data = weights(name, shape, args.seed, "retrained" if retrained else "")
        if quant is not None and len(shape) == 2:
            writer.add_tensor(name, gguf.quants.quantize(data, quant), raw_dtype=quant)
        else:
            writer.add_tensor(name, data.astype(np.float16))

    add("token_embd.weight", (args.vocab, args.width))
    for layer in range(args.layers):
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            add(f"blk.{layer}.{part}.weight", (args.width, args.width), retrained=args.retrain_attention)
        add(f"blk.{layer}.ffn_gate.weight", (args.width * 2, args.width))
        add(f"blk.{layer}.ffn_up.weight", (args.width * 2, args.width))
        add(f"blk.{layer}.ffn_down.weight", (args.width, args.width * 2))
        add(f"blk.{layer}.attn_norm.weight", (args.width,))
        add(f"blk.{layer}.ffn_norm.weight", (args.width,))
    add("output_norm.weight", (args.width,))
    add("output.weight", (args.vocab, args.width))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def shape(mib):
    """Layers, width and vocabulary of an F16 model of at least `mib` MiB (wider above 48 and 512 MiB)."""
    width, vocab = (2048, 32000) if mib >= 512 else (512, 8000) if mib >= 48 else (256, 4000)
    fixed = 2 * (2 * vocab * width + width)
    per_layer = 2 * (10 * width * width + 2 * width)
    need = mib * 1048576 - fixed
    return max(1, -(-need // per_layer)), width, vocab


def main():
    if sys.argv[1:2] == ["shape"]:
        print(*shape(int(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["gguf"])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--template", default="{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}")
    parser.add_argument("--retrain-attention", action="store_true")
    parser.add_argument("--quantize", default=None)
    write_gguf(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
