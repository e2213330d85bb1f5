#!/usr/bin/env python3
"""Writes small models that declare a licence, with each format's own writer, for the
tests of what `modelcast inspect` shows of it (Tests/ModelCastEndToEndTests/InspectLicenceCLITests.swift).

    scripts/make-licence-models.py OUTDIR

OUTDIR/
  licensed.gguf          general.license 'apache-2.0', general.license.name 'Apache License 2.0',
                         general.license.link 'https://www.apache.org/licenses/LICENSE-2.0'
  hostile.gguf           general.license: an escape sequence, a newline, a bidi override and
                         10 KB more ('A' * 10240)
  typed.gguf             general.license as an uint32 (7), not a string
  unlicensed.gguf        no licence key
  licensed.mlpackage     ML program, coremltools' model.license 'MIT'
  licensed.mlmodel       neural network, spec.description.metadata.license 'BSD-3-Clause'
  hostile.mlmodel        the same with the hostile licence
  licensed.onnx          metadata_props {'license': 'Apache-2.0', 'author': 'tests'}
  hostile.onnx           metadata_props {'license': the hostile licence}

Needs coremltools, gguf and onnx (scripts/setup installs them).
"""
import os, sys

import numpy as np

from coreml_quiet import quiet

with quiet():
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
import gguf
import onnx
from onnx import TensorProto, helper

HOSTILE = "\x1b[31mGPL\n\u202eevil" + "A" * 10240


def write_gguf(path, licence=None, name=None, link=None, typed=False):
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("licence test")
    if licence is not None:
        writer.add_license(licence)
    if name is not None:
        writer.add_string(gguf.Keys.General.LICENSE_NAME, name)
    if link is not None:
        writer.add_string(gguf.Keys.General.LICENSE_LINK, link)
    if typed:
        writer.add_uint32(gguf.Keys.General.LICENSE, 7)
    writer.add_tensor("token_embd.weight", np.ones((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_mlpackage(path, licence):
    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
    def prog(x):
        return mb.reduce_sum(x=x, axes=[1], keep_dims=True, name="y")

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16, skip_model_load=True)
    model.license = licence
    model.save(path)


def write_mlmodel(path, licence):
    builder = NeuralNetworkBuilder([("a", datatypes.Array(4))], [("y", None)])
    builder.add_activation("relu", "RELU", "a", "y")
    builder.spec.description.metadata.license = licence
    ct.utils.save_spec(builder.spec, path)


def write_onnx(path, props):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "licence-test",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, producer_name="make-licence-models", opset_imports=[helper.make_opsetid("", 13)])
    helper.set_model_props(model, props)
    onnx.save(model, path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    at = lambda name: os.path.join(out, name)
    write_gguf(at("licensed.gguf"), "apache-2.0", "Apache License 2.0", "https://www.apache.org/licenses/LICENSE-2.0")
    write_gguf(at("hostile.gguf"), HOSTILE)
    write_gguf(at("typed.gguf"), typed=True)
    write_gguf(at("unlicensed.gguf"))
    write_mlpackage(at("licensed.mlpackage"), "MIT")
    write_mlmodel(at("licensed.mlmodel"), "BSD-3-Clause")
    write_mlmodel(at("hostile.mlmodel"), HOSTILE)
    write_onnx(at("licensed.onnx"), {"license": "Apache-2.0", "author": "tests"})
    write_onnx(at("hostile.onnx"), {"license": HOSTILE})


if __name__ == "__main__":
    main()
