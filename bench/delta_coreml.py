#!/usr/bin/env python3
"""Writes real Core ML packages (.mlpackage, ML program, FP16 weights) with coremltools'
MIL builder, for the segment-index tests and bench/delta: a base model and the variant a
retrained classifier head makes.

    delta_coreml.py OUT.mlpackage [--layers N] [--width W] [--classes C] [--seed S]
                                  [--retrain-head]

The program is an MLP stack: `--layers` square linear layers of `--width` (each followed by
a ReLU, every other one by a layer norm, like a transformer's feed-forward blocks), then a
classifier head, a linear layer of `--classes` × `--width`. Every weight is a deterministic
function of --seed and the layer's name, so the same flags write the same weight.bin.
--retrain-head gives the head (only the last linear layer) new values, same shapes.

Sizes (FP16): each square layer is 2·W² bytes. The defaults (4 layers of 768, 1000 classes)
make a package of about 6 MB; `--layers 24 --width 1536` makes about 110 MB.
"""
import argparse, hashlib, os, sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from coreml_quiet import quiet  # noqa: E402 (found through the path above)

with quiet():
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb


def weights(name, shape, seed, salt=""):
    digest = hashlib.sha256(f"{seed}:{salt}:{name}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def build(args):
    width, classes = args.width, args.classes

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, width))])
    def prog(x):
        for layer in range(args.layers):
            name = f"block{layer}.linear"
            x = mb.linear(x=x, weight=weights(name + ".weight", (width, width), args.seed),
                          bias=weights(name + ".bias", (width,), args.seed), name=name)
            x = mb.relu(x=x, name=f"block{layer}.relu")
            if layer % 2 == 1:
                x = mb.layer_norm(x=x, axes=[-1], gamma=np.ones(width, np.float32) + weights(f"block{layer}.norm", (width,), args.seed),
                                  beta=np.zeros(width, np.float32), name=f"block{layer}.norm")
        salt = "retrained" if args.retrain_head else ""
        return mb.linear(x=x, weight=weights("head.weight", (classes, width), args.seed, salt),
                         bias=weights("head.bias", (classes,), args.seed, salt), name="head")

    return ct.convert(prog, convert_to="mlprogram", compute_precision=ct.precision.FLOAT16,
                      minimum_deployment_target=ct.target.iOS16, skip_model_load=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the .mlpackage directory to write")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--retrain-head", action="store_true")
    args = parser.parse_args()
    if args.layers < 0 or args.width < 1 or args.classes < 1:
        parser.error("--layers must be 0 or more, --width and --classes 1 or more")
    model = build(args)
    model.save(args.out)


if __name__ == "__main__":
    sys.exit(main())
