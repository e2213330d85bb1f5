#!/usr/bin/env python3
"""Writes small models with each format's own writer, for the interface-contract tests
(Tests/ModelCastCoreTests/ModelInterfaceTests.swift), and what each writer says their
interface is.

    scripts/make-interface-models.py OUTDIR

OUTDIR/
  coreml/classifier.mlpackage          ML program classifier: image input 'image' 32×32 RGB, 5 classes
  coreml/classifier-size.mlpackage     the same, image 48×48
  coreml/classifier-classes.mlpackage  the same, 6 classes
  coreml/regressor.mlpackage           ML program regressor: multi-array 'x' 1×8 → 'y'
  coreml/regressor-shape.mlpackage     the same, 'x' 1×16
  coreml/regressor-output.mlpackage    the same, with a second output 'z' (an added output)
  coreml/regressor-reordered.mlpackage the same two outputs in the other order ('z', 'y')
  coreml/nn-classifier.mlmodel         neural network classifier (bare .mlmodel), 3 string labels
  coreml/flexible.mlmodel              neural network with enumerated shapes, a shape range
  coreml/flexible-image.mlmodel        neural network with a BGR image and a size range
  gguf/llm.gguf                        llama: context 4096, embedding 64, 100 tokens, a chat template
  gguf/llm-reordered.gguf              the same keys written in another order
  gguf/llm-vocab.gguf                  101 tokens
  gguf/llm-template.gguf               another chat template
  gguf/llm-named-templates.gguf        a default and a named (tool_use) chat template
  onnx/graph.onnx                      inputs 'x' (batch×3×224×224), 'mask', 'W' (an initializer too);
                                       outputs 'logits', 'tokens' (a sequence)
  onnx/graph-shape.onnx                'x' batch×3×256×256
  onnx/graph-output.onnx               a third output 'pooled' (an added output)
  onnx/graph-reordered.onnx            the outputs in the other order ('tokens', 'logits')
  expected.json                        {relative path: interface in modelcast's JSON form}, made
                                       from what each writer reports (coremltools' spec, onnx's
                                       ModelProto, gguf-py's reader), not by modelcast

Needs coremltools, gguf and onnx (scripts/setup installs them). Every model is
deterministic, except Core ML's conversion date in its metadata (not part of an interface).
"""
import hashlib, json, os, struct, sys

import numpy as np

from coreml_quiet import quiet

with quiet():
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder, flexible_shape_utils as fsu
import gguf
import onnx
from onnx import TensorProto, helper

# ---- Core ML ------------------------------------------------------------------------------

def labels_sha256(labels):
    """The documented digest: each label's UTF-8 length (8 bytes, little-endian) and bytes."""
    h = hashlib.sha256()
    for label in labels:
        data = str(label).encode()
        h.update(struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


COLOR = {10: "GRAYSCALE", 20: "RGB", 30: "BGR", 40: "GRAYSCALE_FLOAT16"}
DTYPE = {65568: "FLOAT32", 65600: "DOUBLE", 131104: "INT32", 131080: "INT8", 65552: "FLOAT16"}


def size_range(r):
    return [r.lowerBound, None if r.upperBound < 0 else r.upperBound]


def feature_json(feature):
    """A FeatureDescription as modelcast's JSON form, read from coremltools' own spec object."""
    t = feature.type
    kind = t.WhichOneof("Type")
    out = {"name": feature.name}
    if t.isOptional:
        out["optional"] = True
    if kind in ("int64Type", "doubleType", "stringType"):
        out["type"] = kind[:-4]
    elif kind == "imageType":
        i = t.imageType
        out.update(type="image", width=i.width, height=i.height, color_space=COLOR[i.colorSpace])
        flex = i.WhichOneof("SizeFlexibility")
        if flex == "enumeratedSizes":
            out["sizes"] = [[s.width, s.height] for s in i.enumeratedSizes.sizes]
        elif flex == "imageSizeRange":
            out["size_range"] = {"width": size_range(i.imageSizeRange.widthRange), "height": size_range(i.imageSizeRange.heightRange)}
    elif kind == "multiArrayType":
        a = t.multiArrayType
        out.update(type="multiArray", data_type=DTYPE[a.dataType], shape=list(a.shape))
        flex = a.WhichOneof("ShapeFlexibility")
        if flex == "enumeratedShapes":
            out["shapes"] = [list(s.shape) for s in a.enumeratedShapes.shapes]
        elif flex == "shapeRange":
            out["shape_range"] = [size_range(r) for r in a.shapeRange.sizeRanges]
    elif kind == "dictionaryType":
        out.update(type="dictionary", key_type=t.dictionaryType.WhichOneof("KeyType")[:-7])
    else:
        raise ValueError(f"no expectation written for feature type {kind}")
    return out


def coreml_json(spec, labels=None):
    d = spec.description
    out = {"format": "coreml", "inputs": [feature_json(f) for f in d.input], "outputs": [feature_json(f) for f in d.output]}
    if labels is not None:
        classifier = {"class_count": len(labels), "labels_sha256": labels_sha256(labels)}
        if d.predictedFeatureName:
            classifier["predicted_feature"] = d.predictedFeatureName
        if d.predictedProbabilitiesName:
            classifier["probabilities_output"] = d.predictedProbabilitiesName
        out["classifier"] = classifier
    return out


def ml_program_classifier(path, size, classes):
    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 3, size, size))])
    def prog(image):
        x = mb.reduce_mean(x=image, axes=[2, 3])
        x = mb.linear(x=x, weight=np.arange(3 * classes, dtype=np.float32).reshape(classes, 3) / 10)
        return mb.softmax(x=x, axis=-1, name="probs")

    labels = [f"class{i}" for i in range(classes)]
    model = ct.convert(prog, convert_to="mlprogram", classifier_config=ct.ClassifierConfig(labels),
                       inputs=[ct.ImageType(name="image", shape=(1, 3, size, size), color_layout=ct.colorlayout.RGB)],
                       minimum_deployment_target=ct.target.iOS16, skip_model_load=True)
    model.save(path)
    return coreml_json(model.get_spec(), labels)


def ml_program_regressor(path, width, outputs=("y",)):
    @mb.program(input_specs=[mb.TensorSpec(shape=(1, width))])
    def prog(x):
        made = {"y": lambda: mb.linear(x=x, weight=np.ones((2, width), dtype=np.float32), name="y"),
                "z": lambda: mb.reduce_sum(x=x, axes=[1], keep_dims=True, name="z")}
        results = tuple(made[name]() for name in outputs)
        return results if len(results) > 1 else results[0]

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16, skip_model_load=True)
    model.save(path)
    return coreml_json(model.get_spec())


def nn_classifier(path):
    builder = NeuralNetworkBuilder([("features", datatypes.Array(4))], [("probs", datatypes.Array(3))], mode="classifier")
    builder.add_inner_product("ip", W=np.ones((3, 4)), b=None, input_channels=4, output_channels=3, has_bias=False,
                              input_name="features", output_name="probs")
    labels = ["cat", "dog", "bird"]
    builder.set_class_labels(labels, predicted_feature_name="label", prediction_blob="probs")
    ct.utils.save_spec(builder.spec, path)
    return coreml_json(builder.spec, labels)


def nn_flexible(path):
    builder = NeuralNetworkBuilder([("a", datatypes.Array(8)), ("b", datatypes.Array(8))], [("y", None)],
                                   disable_rank5_shape_mapping=True)
    builder.add_add_broadcastable("add", ["a", "b"], "y")
    fsu.add_multiarray_ndshape_enumeration(builder.spec, "a", [(8,), (16,)])
    fsu.set_multiarray_ndshape_range(builder.spec, "b", lower_bounds=[1], upper_bounds=[-1])
    ct.utils.save_spec(builder.spec, path)
    return coreml_json(builder.spec)


def nn_flexible_image(path):
    builder = NeuralNetworkBuilder([("image", datatypes.Array(3, 16, 16))], [("y", None)])
    builder.add_activation("relu", "RELU", "image", "y")
    builder.set_pre_processing_parameters(image_input_names=["image"], is_bgr=True)
    fsu.update_image_size_range(builder.spec, "image", fsu.NeuralNetworkImageSizeRange(height_range=(8, 64), width_range=(8, -1)))
    ct.utils.save_spec(builder.spec, path)
    return coreml_json(builder.spec)

# ---- GGUF ---------------------------------------------------------------------------------

TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}</s>{% endfor %}<|assistant|>"


def write_gguf(path, tokens=100, template=TEMPLATE, reorder=False, named=False):
    writer = gguf.GGUFWriter(path, "llama")
    vocab = ["<unk>", "<s>", "</s>"] + [f"tok{i}" for i in range(tokens - 3)]
    tokenizer = [
        lambda: writer.add_tokenizer_model("llama"),
        lambda: writer.add_token_list(vocab),
        lambda: writer.add_token_scores([float(-i) for i in range(tokens)]),
        lambda: writer.add_token_types([2, 3, 3] + [1] * (tokens - 3)),
        lambda: writer.add_bos_token_id(1),
        lambda: writer.add_eos_token_id(2),
        lambda: writer.add_chat_template([{"name": "default", "template": template}, {"name": "tool_use", "template": "{{ tools }}"}]
                                         if named else template),
    ]
    sizes = [lambda: writer.add_context_length(4096), lambda: writer.add_embedding_length(64), lambda: writer.add_block_count(1)]
    for add in (list(reversed(tokenizer)) + sizes if reorder else sizes + tokenizer):
        add()
    writer.add_name("interface test")
    writer.add_tensor("token_embd.weight", np.ones((tokens, 64), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return gguf_json(path)


def gguf_json(path):
    """The interface as gguf-py's reader sees the file: each key's raw parts are its GGUF
    encoding (name length, name, type, value), so a value digest is the SHA-256 of the parts
    after the name, and a set digest the documented keyed combination."""
    reader = gguf.GGUFReader(path)
    fields = reader.fields

    def value(key):
        field = fields[key]
        return field.parts[field.data[0]].tolist()[0]

    def digest(keys):
        if not keys:
            return None
        h = hashlib.sha256()
        for key in sorted(keys, key=lambda k: k.encode()):
            name = key.encode()
            inner = hashlib.sha256(b"".join(p.tobytes() for p in fields[key].parts[2:])).digest()
            h.update(struct.pack("<Q", len(name)) + name + inner)
        return h.hexdigest()

    arch = bytes(fields["general.architecture"].parts[-1]).decode()
    templates = [k for k in fields if k == "tokenizer.chat_template" or k.startswith("tokenizer.chat_template.")]
    tokenizer = [k for k in fields if k.startswith("tokenizer.") and k not in templates and k != "tokenizer.chat_templates"]
    out = {"format": "gguf", "architecture": arch, "context_length": value(f"{arch}.context_length"),
           "embedding_length": value(f"{arch}.embedding_length"),
           "vocabulary_size": len(fields["tokenizer.ggml.tokens"].data),
           "tokenizer_sha256": digest(tokenizer), "chat_template_sha256": digest(templates)}
    return {k: v for k, v in out.items() if v is not None}

# ---- ONNX ---------------------------------------------------------------------------------

ELEM = {v: k for k, v in TensorProto.DataType.items()}


def onnx_type_json(t):
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        tensor = getattr(t, kind)
        out = {"type": kind[:-5], "element_type": ELEM[tensor.elem_type]}
        if tensor.HasField("shape"):
            out["shape"] = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
                            for d in tensor.shape.dim]
        return out
    if kind == "sequence_type":
        return {"type": "sequence", "element": onnx_type_json(t.sequence_type.elem_type)}
    raise ValueError(f"no expectation written for ONNX type {kind}")


def write_onnx(path, side, outputs=("logits", "tokens")):
    weight = helper.make_tensor("W", TensorProto.FLOAT, [10, 3], np.ones(30, dtype=np.float32))
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, side, side]),
        helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", None]),
        # An input that is also an initializer: a weight with a default, not an app's input.
        helper.make_tensor_value_info("W", TensorProto.FLOAT, [10, 3]),
    ]
    infos = {
        "logits": helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10]),
        "tokens": helper.make_tensor_sequence_value_info("tokens", TensorProto.INT64, None),
        "pooled": helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", 3]),
    }
    outputs = [infos[name] for name in outputs]
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["pooled"], axes=[2, 3], keepdims=0),
        helper.make_node("Gemm", ["pooled", "W"], ["logits"], transB=1),
        helper.make_node("SequenceEmpty", [], ["tokens"], dtype=TensorProto.INT64),
    ]
    graph = helper.make_graph(nodes, "interface-test", inputs, outputs, initializer=[weight])
    model = helper.make_model(graph, producer_name="make-interface-models", opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    loaded = onnx.load(path)
    names = {t.name for t in loaded.graph.initializer}
    return {"format": "onnx",
            "inputs": [dict(name=v.name, **onnx_type_json(v.type)) for v in loaded.graph.input if v.name not in names],
            "outputs": [dict(name=v.name, **onnx_type_json(v.type)) for v in loaded.graph.output]}

# -------------------------------------------------------------------------------------------

def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for sub in ("coreml", "gguf", "onnx"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    at = lambda *parts: os.path.join(out, *parts)
    expected = {
        "coreml/classifier.mlpackage": ml_program_classifier(at("coreml", "classifier.mlpackage"), 32, 5),
        "coreml/classifier-size.mlpackage": ml_program_classifier(at("coreml", "classifier-size.mlpackage"), 48, 5),
        "coreml/classifier-classes.mlpackage": ml_program_classifier(at("coreml", "classifier-classes.mlpackage"), 32, 6),
        "coreml/regressor.mlpackage": ml_program_regressor(at("coreml", "regressor.mlpackage"), 8),
        "coreml/regressor-shape.mlpackage": ml_program_regressor(at("coreml", "regressor-shape.mlpackage"), 16),
        "coreml/regressor-output.mlpackage": ml_program_regressor(at("coreml", "regressor-output.mlpackage"), 8, ("y", "z")),
        "coreml/regressor-reordered.mlpackage": ml_program_regressor(at("coreml", "regressor-reordered.mlpackage"), 8, ("z", "y")),
        "coreml/nn-classifier.mlmodel": nn_classifier(at("coreml", "nn-classifier.mlmodel")),
        "coreml/flexible.mlmodel": nn_flexible(at("coreml", "flexible.mlmodel")),
        "coreml/flexible-image.mlmodel": nn_flexible_image(at("coreml", "flexible-image.mlmodel")),
        "gguf/llm.gguf": write_gguf(at("gguf", "llm.gguf")),
        "gguf/llm-reordered.gguf": write_gguf(at("gguf", "llm-reordered.gguf"), reorder=True),
        "gguf/llm-vocab.gguf": write_gguf(at("gguf", "llm-vocab.gguf"), tokens=101),
        "gguf/llm-template.gguf": write_gguf(at("gguf", "llm-template.gguf"), template=TEMPLATE + "\n"),
        "gguf/llm-named-templates.gguf": write_gguf(at("gguf", "llm-named-templates.gguf"), named=True),
        "onnx/graph.onnx": write_onnx(at("onnx", "graph.onnx"), 224),
        "onnx/graph-shape.onnx": write_onnx(at("onnx", "graph-shape.onnx"), 256),
        "onnx/graph-output.onnx": write_onnx(at("onnx", "graph-output.onnx"), 224, ("logits", "tokens", "pooled")),
        "onnx/graph-reordered.onnx": write_onnx(at("onnx", "graph-reordered.onnx"), 224, ("tokens", "logits")),
    }
    with open(at("expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
