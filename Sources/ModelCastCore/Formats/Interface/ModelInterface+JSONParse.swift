import Foundation

/// Reading the JSON form back (the live manifest's copy, hostile input): only what
/// `jsonValue()` writes is accepted, so `ModelInterface(json: i.jsonValue()) == i`. Each
/// format's object is read by its own reader (`CoreMLInterfaceJSONReader`,
/// `GGUFInterfaceJSONReader`, `ONNXInterfaceJSONReader`).
extension ModelInterface {
    /// Parses an interface's JSON form; `field` names it in errors (`models.m.interface`).
    /// Throws `ManifestValueError` naming the offending member and value.
    package init(json: JSONValue, field: String = "interface") throws {
        let format = try InterfaceJSONObject(json, field: field, allowed: Set(Self.members.values.flatMap { $0 }).union(["format"]))
        let name = try format.string("format")
        guard let allowed = Self.members[name] else {
            throw InterfaceJSONObject.refuse(format.path("format"), .string(name), "is not a known interface format (coreml, gguf, onnx)")
        }
        let object = try InterfaceJSONObject(json, field: field, allowed: allowed.union(["format"]))
        switch name {
        case "coreml": self = .coreML(try CoreMLInterfaceJSONReader.read(object))
        case "gguf": self = .gguf(try GGUFInterfaceJSONReader.read(object))
        default: self = .onnx(try ONNXInterfaceJSONReader.read(object))
        }
    }

    /// The members each format's object may have besides `format`.
    static let members: [String: Set<String>] = [
        "coreml": CoreMLInterfaceJSONReader.members,
        "gguf": GGUFInterfaceJSONReader.members,
        "onnx": ONNXInterfaceJSONReader.members,
    ]
}
