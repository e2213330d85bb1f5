// Facts of the GGUF format, transcribed as data from the format's published
// constants (ggml's type table and llama.cpp's file-type enum).

/// A ggml tensor type: its name and storage (elements per block, bytes per block).
struct GGMLType {
    let name: String
    let blockSize: Int64
    let typeSize: Int64
}

enum GGUFTables {
    /// ggml tensor types by id.
    static let tensorTypes: [UInt32: GGMLType] = [
        0: GGMLType(name: "F32", blockSize: 1, typeSize: 4),
        1: GGMLType(name: "F16", blockSize: 1, typeSize: 2),
        2: GGMLType(name: "Q4_0", blockSize: 32, typeSize: 18),
        3: GGMLType(name: "Q4_1", blockSize: 32, typeSize: 20),
        6: GGMLType(name: "Q5_0", blockSize: 32, typeSize: 22),
        7: GGMLType(name: "Q5_1", blockSize: 32, typeSize: 24),
        8: GGMLType(name: "Q8_0", blockSize: 32, typeSize: 34),
        9: GGMLType(name: "Q8_1", blockSize: 32, typeSize: 40),
        10: GGMLType(name: "Q2_K", blockSize: 256, typeSize: 84),
        11: GGMLType(name: "Q3_K", blockSize: 256, typeSize: 110),
        12: GGMLType(name: "Q4_K", blockSize: 256, typeSize: 144),
        13: GGMLType(name: "Q5_K", blockSize: 256, typeSize: 176),
        14: GGMLType(name: "Q6_K", blockSize: 256, typeSize: 210),
        15: GGMLType(name: "Q8_K", blockSize: 256, typeSize: 292),
        16: GGMLType(name: "IQ2_XXS", blockSize: 256, typeSize: 66),
        17: GGMLType(name: "IQ2_XS", blockSize: 256, typeSize: 74),
        18: GGMLType(name: "IQ3_XXS", blockSize: 256, typeSize: 98),
        19: GGMLType(name: "IQ1_S", blockSize: 256, typeSize: 50),
        20: GGMLType(name: "IQ4_NL", blockSize: 32, typeSize: 18),
        21: GGMLType(name: "IQ3_S", blockSize: 256, typeSize: 110),
        22: GGMLType(name: "IQ2_S", blockSize: 256, typeSize: 82),
        23: GGMLType(name: "IQ4_XS", blockSize: 256, typeSize: 136),
        24: GGMLType(name: "I8", blockSize: 1, typeSize: 1),
        25: GGMLType(name: "I16", blockSize: 1, typeSize: 2),
        26: GGMLType(name: "I32", blockSize: 1, typeSize: 4),
        27: GGMLType(name: "I64", blockSize: 1, typeSize: 8),
        28: GGMLType(name: "F64", blockSize: 1, typeSize: 8),
        29: GGMLType(name: "IQ1_M", blockSize: 256, typeSize: 56),
        30: GGMLType(name: "BF16", blockSize: 1, typeSize: 2),
        34: GGMLType(name: "TQ1_0", blockSize: 256, typeSize: 54),
        35: GGMLType(name: "TQ2_0", blockSize: 256, typeSize: 66),
        39: GGMLType(name: "MXFP4", blockSize: 32, typeSize: 17),
        40: GGMLType(name: "NVFP4", blockSize: 64, typeSize: 36),
        41: GGMLType(name: "Q1_0", blockSize: 128, typeSize: 18),
    ]

    /// `general.file_type` values (llama.cpp's file types) by id, as quantization names.
    static let fileTypes: [UInt32: String] = [
        0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
        10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
        16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
        22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
        28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
        37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 1024: "GUESSED",
    ]
}
