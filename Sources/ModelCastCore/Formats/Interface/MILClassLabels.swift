import Foundation

/// An ML program classifier's labels. coremltools makes a classifier by ending the program
/// with a `classify` operation whose `classes` input holds the labels: a list of scalar
/// tensors given in place (what coremltools writes), or the name of a `const` operation
/// whose `val` attribute holds them. Only the function's active block is searched (the one
/// its `opset` names); every operation is read as far as its type, the rest skipped.
enum MILClassLabels {
    typealias MIL = CoreMLSpec.MIL
    /// Block specializations (opsets) a function may have.
    static let maxBlocks = 64

    /// Feeds the labels of `function`'s `classify` operation into `digest`; false when the
    /// program has no such operation (a regressor, or any other model).
    static func read(_ program: ProtobufReader, function: String, into digest: ClassLabelDigest) throws -> Bool {
        guard let function = try mapEntry(program, field: MIL.programFunctions, key: function, "functions") else {
            throw program.fail("the ML program has no function \(quotedValue(function))")
        }
        let block = try activeBlock(function)
        guard let classify = try operation(in: block, where: { type, _ in type == "classify" }) else { return false }
        guard let argument = try mapEntry(classify, field: MIL.operationInputs, key: "classes", "inputs") else {
            throw classify.fail("the classify operation has no classes input")
        }
        switch try binding(argument) {
        case .value(let value):
            try labels(in: value, into: digest)
        case .name(let name):
            guard let const = try operation(in: block, where: { type, op in try type == "const" && firstOutput(op) == name }) else {
                throw classify.fail("the classes input names \(quotedValue(name)), which no const operation defines")
            }
            guard let value = try mapEntry(const, field: MIL.operationAttributes, key: "val", "attributes") else {
                throw const.fail("the const operation \(quotedValue(name)) has no val")
            }
            try labels(in: value, into: digest)
        }
        return true
    }

    /// The block a function runs: the block specialization its `opset` names.
    static func activeBlock(_ function: ProtobufReader) throws -> ProtobufReader {
        var reader = function
        var opset: String?
        var blocks: [(key: String, field: ProtobufField)] = []
        while let field = try reader.next() {
            switch field.number {
            case MIL.functionOpset: opset = try reader.string(field, "opset")
            case MIL.functionBlocks:
                guard blocks.count < maxBlocks else { throw reader.fail("more than \(maxBlocks) block specializations") }
                let entry = try reader.message(field, "block_specializations")
                blocks.append((try entryKey(entry), field))
            default: continue
            }
        }
        guard let opset, let block = blocks.last(where: { $0.key == opset }) else {
            throw function.fail("the function has no block for its opset \(quotedValue(opset ?? ""))")
        }
        guard let value = try entryValue(reader.message(block.field, "block_specializations[\(quotedValue(opset))]")) else {
            throw function.fail("the block for opset \(quotedValue(opset)) is empty")
        }
        return value
    }

    /// The first operation of `block` whose type (and message) satisfy `matches`.
    static func operation(in block: ProtobufReader, where matches: (String, ProtobufReader) throws -> Bool) throws -> ProtobufReader? {
        var reader = block
        var index = 0
        while let field = try reader.next() {
            guard field.number == MIL.blockOperations else { continue }
            let operation = try reader.message(field, "operations[\(index)]")
            index += 1
            if try matches(operationType(operation), operation) { return operation }
        }
        return nil
    }

    static func operationType(_ operation: ProtobufReader) throws -> String {
        var reader = operation
        var type = ""
        while let field = try reader.next() {
            if field.number == MIL.operationType { type = try reader.string(field, "type", limit: 256) }
        }
        return type
    }

    /// The name of an operation's first output.
    static func firstOutput(_ operation: ProtobufReader) throws -> String? {
        var reader = operation
        while let field = try reader.next() {
            guard field.number == MIL.operationOutputs else { continue }
            var output = try reader.message(field, "outputs[0]")
            while let part = try output.next() {
                if part.number == MIL.namedValueName { return try output.string(part, "name") }
            }
            return nil
        }
        return nil
    }
}

extension MILClassLabels {
    enum Binding {
        case name(String)
        case value(ProtobufReader)
    }

    /// An Argument's single binding.
    static func binding(_ argument: ProtobufReader) throws -> Binding {
        var reader = argument
        var result: Binding?
        while let field = try reader.next() {
            guard field.number == MIL.argumentBindings else { continue }
            guard result == nil else { throw argument.fail("the classes input has more than one binding") }
            var binding = try reader.message(field, "arguments[0]")
            while let part = try binding.next() {
                switch part.number {
                case MIL.bindingName: result = .name(try binding.string(part, "name"))
                case MIL.bindingValue: result = .value(try binding.message(part, "value"))
                default: continue
                }
            }
        }
        guard let result else { throw argument.fail("the classes input has no binding") }
        return result
    }

    /// The labels of a Value: an immediate tensor of strings or integers, or a list of such
    /// values (one label each, as coremltools writes them).
    static func labels(in value: ProtobufReader, into digest: ClassLabelDigest, inList: Bool = false) throws {
        var reader = value
        while let field = try reader.next() {
            switch field.number {
            case MIL.valueBlobFile: throw reader.fail("the class labels are in a weight file, which modelcast does not read")
            case MIL.valueImmediate: break
            default: continue
            }
            var immediate = try reader.message(field, "immediateValue")
            while let part = try immediate.next() {
                switch part.number {
                case MIL.immediateTensor: try tensorLabels(immediate.message(part, "tensor"), into: digest)
                case MIL.immediateList where !inList:
                    var list = try immediate.message(part, "list")
                    while let item = try list.next() {
                        guard item.number == CoreMLSpec.listValues else { continue }
                        try labels(in: list.message(item, "values[\(digest.count)]"), into: digest, inList: true)
                    }
                case MIL.immediateList: throw immediate.fail("class labels nested in lists of lists")
                default: continue
                }
            }
        }
    }

    /// A TensorValue's strings, long integers or integers.
    static func tensorLabels(_ tensor: ProtobufReader, into digest: ClassLabelDigest) throws {
        var reader = tensor
        while let field = try reader.next() {
            switch field.number {
            case MIL.tensorStrings: try CoreMLClassLabels.strings(reader.message(field, "strings"), field: CoreMLSpec.listValues, into: digest)
            case MIL.tensorLongInts: try CoreMLClassLabels.integers(reader.message(field, "longInts"), field: CoreMLSpec.listValues, into: digest)
            case MIL.tensorInts: try CoreMLClassLabels.integers(reader.message(field, "ints"), field: CoreMLSpec.listValues, into: digest)
            default: continue
            }
        }
    }

    /// The value of the entry of a map field whose key is `key` (the last such entry, as
    /// protobuf maps keep), or nil.
    static func mapEntry(_ message: ProtobufReader, field number: UInt32, key: String, _ name: String) throws -> ProtobufReader? {
        var reader = message
        var found: ProtobufReader?
        var index = 0
        while let field = try reader.next() {
            guard field.number == number else { continue }
            let entry = try reader.message(field, "\(name)[\(index)]")
            index += 1
            if try entryKey(entry) == key { found = try entryValue(entry) }
        }
        return found
    }

    static func entryKey(_ entry: ProtobufReader) throws -> String {
        var reader = entry
        var key = ""
        while let field = try reader.next() {
            if field.number == CoreMLSpec.mapKey { key = try reader.string(field, "key") }
        }
        return key
    }

    static func entryValue(_ entry: ProtobufReader) throws -> ProtobufReader? {
        var reader = entry
        var value: ProtobufReader?
        while let field = try reader.next() {
            if field.number == CoreMLSpec.mapValue { value = try reader.message(field, "value") }
        }
        return value
    }
}
