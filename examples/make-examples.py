#!/usr/bin/env python3
"""Builds the tiny example models in examples/models/ (deterministic bytes).

    python3 examples/make-examples.py [OUTPUT_DIR]

- TinyClassifier.mlpackage/  a directory shaped like a Core ML package
  (Manifest.json naming a root model under Data/com.apple.CoreML/, plus weights)
- retrained/TinyClassifier.mlpackage/  the same package with other weights (only
  weights/weight.bin differs): the second version of a tree publish
- tiny-llm.gguf              a valid GGUF v3 file (llama architecture, Q8_0 + F32 tensors)
- tiny-llm-mmproj.gguf       its companion vision projector (clip architecture)

Nothing here is a real network: the tensors hold a fixed pseudo-random pattern so
the files are small, valid, and identical on every machine.
"""
import json
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")

# GGUF value types and ggml tensor types used below.
T_UINT32, T_FLOAT32, T_STRING, T_ARRAY = 4, 6, 8, 9
GGML_F32, GGML_Q8_0 = 0, 8
ALIGNMENT = 32


def pattern(n, seed):
    """n deterministic bytes (a linear congruential sequence)."""
    out = bytearray(n)
    x = seed
    for i in range(n):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        out[i] = (x >> 16) & 0xFF
    return bytes(out)


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == T_STRING:
        out += gguf_string(value)
    elif vtype == T_UINT32:
        out += struct.pack("<I", value)
    elif vtype == T_FLOAT32:
        out += struct.pack("<f", value)
    elif vtype == T_ARRAY:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        for item in items:
            out += gguf_string(item) if etype == T_STRING else struct.pack("<I", item)
    return out


def write_gguf(path, metadata, tensors, seed):
    """tensors: list of (name, shape, ggml_type); data is a fixed pattern."""
    sizes = []
    for name, shape, ttype in tensors:
        count = 1
        for d in shape:
            count *= d
        sizes.append(count * 4 if ttype == GGML_F32 else count // 32 * 34)
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, vtype, value in metadata:
        header += gguf_kv(key, vtype, value)
    offset = 0
    offsets = []
    for (name, shape, ttype), size in zip(tensors, sizes):
        offsets.append(offset)
        header += gguf_string(name) + struct.pack("<I", len(shape))
        header += b"".join(struct.pack("<Q", d) for d in shape)
        header += struct.pack("<IQ", ttype, offset)
        offset += (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    header += b"\0" * ((-len(header)) % ALIGNMENT)
    data = b""
    for i, size in enumerate(sizes):
        data += pattern(size, seed + i)
        if i < len(sizes) - 1:
            data += b"\0" * ((-len(data)) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(header + data)


def varint(n):
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def array_feature(name, shape):
    """FeatureDescription: name (1), type (3) = FeatureType.multiArrayType (5) of FLOAT32."""
    packed = b"".join(varint(d) for d in shape)
    array = field(1, packed) + varint(2 << 3) + varint(65568)
    return field(1, name.encode()) + field(3, field(5, array))


def model_spec(size):
    """Model: specificationVersion (1) = 7, description (2) with one input (1) and one output (10)."""
    description = field(1, array_feature("image", [1, 3, 8, 8])) + field(10, array_feature("scores", [1, 4]))
    spec = varint(1 << 3) + varint(7) + field(2, description)
    padding = size - len(spec) - 4  # field 900's key (2 bytes) and length (2 bytes)
    return spec + field(900, pattern(padding, 7))


def write_mlpackage(root, weights_seed=11):
    core = os.path.join(root, "Data", "com.apple.CoreML")
    os.makedirs(os.path.join(core, "weights"), exist_ok=True)
    manifest = {
        "fileFormatVersion": "1.0.0",
        "itemInfoEntries": {
            "5E0A5D53-1B6B-4F0C-9A3E-2B8F1D1E7C01": {
                "author": "com.apple.CoreML",
                "description": "CoreML Model Specification",
                "name": "model.mlmodel",
                "path": "com.apple.CoreML/model.mlmodel",
            },
            "9C4D2F6A-7E1B-4C3D-8F2A-6B5E4D3C2B10": {
                "author": "com.apple.CoreML",
                "description": "CoreML Model Weights",
                "name": "weights",
                "path": "com.apple.CoreML/weights",
            },
        },
        "rootModelIdentifier": "5E0A5D53-1B6B-4F0C-9A3E-2B8F1D1E7C01",
    }
    with open(os.path.join(root, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    # A Core ML model specification with only a description (no network): specificationVersion 7,
    # input 'image' FLOAT32 1x3x8x8, output 'scores' FLOAT32 1x4 (Model.proto's field numbers),
    # padded to 512 bytes with a field Core ML does not define (readers skip it by its length).
    with open(os.path.join(core, "model.mlmodel"), "wb") as f:
        f.write(model_spec(512))
    with open(os.path.join(core, "weights", "weight.bin"), "wb") as f:
        f.write(pattern(16384, weights_seed))


def main():
    os.makedirs(OUT, exist_ok=True)
    write_mlpackage(os.path.join(OUT, "TinyClassifier.mlpackage"))
    # The same package after a retrain that changed only the weights (a tree re-publish
    # uploads that one file).
    write_mlpackage(os.path.join(OUT, "retrained", "TinyClassifier.mlpackage"), weights_seed=12)
    write_gguf(
        os.path.join(OUT, "tiny-llm.gguf"),
        [
            ("general.architecture", T_STRING, "llama"),
            ("general.name", T_STRING, "tiny-llm example"),
            ("general.file_type", T_UINT32, 7),  # MOSTLY_Q8_0
            ("general.alignment", T_UINT32, ALIGNMENT),
            ("llama.context_length", T_UINT32, 128),
            ("llama.embedding_length", T_UINT32, 64),
            ("tokenizer.ggml.tokens", T_ARRAY, (T_STRING, ["<s>", "</s>", "hello", "world"])),
        ],
        [
            ("token_embd.weight", [64, 4], GGML_Q8_0),
            ("output_norm.weight", [64], GGML_F32),
        ],
        seed=1,
    )
    write_gguf(
        os.path.join(OUT, "tiny-llm-mmproj.gguf"),
        [
            ("general.architecture", T_STRING, "clip"),
            ("general.name", T_STRING, "tiny-llm vision projector"),
            ("general.file_type", T_UINT32, 0),  # ALL_F32
        ],
        [("mm.0.weight", [32, 8], GGML_F32)],
        seed=5,
    )
    print(OUT)


if __name__ == "__main__":
    main()
