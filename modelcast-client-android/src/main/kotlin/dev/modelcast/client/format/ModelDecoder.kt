package dev.modelcast.client.format

// A model entry (`models.NAME`, `prototypes`, `rollback.models.NAME`, a variant), read and
// checked in the Swift client's order, each refusal naming the field.

/** The model [name] whose entry is [fields]. */
internal fun decodeModel(fields: JsonFields, name: String): ReleaseModel {
    val modelName = try { ModelName(name) } catch (error: ManifestValueException) { throw error.at(fields.path) }
    val version = fields.parsed("version", fields.string("version"), ::ModelVersion)
    val tree = fields.optionalString("tree")?.let { fields.parsed("tree", it, ::PathSegment) }
    val fileValues = fields.array("files")
    if (fileValues.isEmpty()) throw ManifestValueException(fields.pathOf("files"), null, "is empty (a model has at least one file)")
    val placements = HashSet<String>()
    val files = fileValues.mapIndexed { index, value ->
        val file = decodeFile(fields.item("files", index, value))
        val at = "${fields.pathOf("files")}[$index]"
        if ((file.path != null) != (tree != null)) {
            throw ManifestValueException("$at.path", file.path?.text,
                if (tree == null) "is set, but the model is not a tree (it has no tree directory)" else "is missing: every file of a tree model has a path")
        }
        // Case-insensitively: two files differing only in case overwrite each other on a case-insensitive disk.
        if (!placements.add(lowercased(file.placement.text))) {
            throw ManifestValueException(at, file.placement.text, "goes to the same place as another file of the model")
        }
        file
    }
    val meta = fields.optionalFields("meta")?.let { freeForm(JsonValue.Object(it.members), it.path) as JsonValue.Object }?.members ?: emptyMap()
    val modelInterface = fields.optionalFreeForm("interface")
    val download = fields.optionalString("download")?.let { fields.parsed("download", it, DownloadPolicy.Companion::parse) }
    val signature = fields.optionalFields("model_signature")?.let(::decodeModelSignature)
    val licence = fields.optionalFields("licence")?.let(::decodeLicence)
    val conditions = fields.optionalFields("download_conditions")?.let(::decodeDownloadConditions)
    val storage = fields.optionalFields("storage")?.let(::decodeStorage)
    val model = ReleaseModel(modelName, version, tree, files, null, emptyList(), download, signature, null, meta, modelInterface,
        licence, conditions, storage)
    return decodeVariants(fields, model)
}

/**
 * [model] with its variants: at most 32, unique names, each a plain model (no variants,
 * `variant` or `download` of its own); `variant` names one of them, and the model's own
 * version, files, tree, interface and model signature are that one's.
 */
private fun decodeVariants(fields: JsonFields, model: ReleaseModel): ReleaseModel {
    val variantText = fields.optionalString("variant")
    val values = fields.optionalArray("variants")
    if (values == null) {
        if (variantText != null) throw ManifestValueException(fields.pathOf("variant"), variantText, "is set, but the model has no variants")
        return model
    }
    if (values.size !in 1..32) throw ManifestValueException(fields.pathOf("variants"), null, "has ${values.size} variants, not 1 to 32")
    val names = HashSet<String>()
    val variants = values.mapIndexed { index, value ->
        val entry = fields.item("variants", index, value)
        val nameText = entry.string("name")
        val name = entry.parsed("name", nameText, ::ModelName)
        if (!names.add(lowercased(nameText))) throw ManifestValueException(entry.pathOf("name"), nameText, "is the name of an earlier variant")
        if (VARIANT_LESS_KEYS.any { entry.members[it].let { member -> member != null && member != JsonValue.Null } }) {
            throw ManifestValueException(entry.path, nameText,
                "has variants, variant, download, licence, download_conditions or storage of its own (only a model has them)")
        }
        val requires = entry.optionalFields("requires")
        val requirements = try {
            VariantRequirements.parse(requires?.let { freeForm(JsonValue.Object(it.members), it.path) as JsonValue.Object }?.members ?: emptyMap())
        } catch (error: ManifestValueException) {
            throw error.within(entry.pathOf("requires"))
        }
        val unit = decodeModel(entry, model.name.text).copy(variant = name, download = model.download, licence = model.licence,
            downloadConditions = model.downloadConditions, storage = model.storage)
        ReleaseVariant(name, requirements, unit)
    }
    val own = variants.firstOrNull { it.name.text == variantText }
        ?: throw ManifestValueException(fields.pathOf("variant"), variantText, "does not name one of the model's variants")
    val unit = own.model
    if (unit.version != model.version || unit.files != model.files || unit.tree != model.tree ||
        unit.modelInterface != model.modelInterface || unit.modelSignature != model.modelSignature) {
        throw ManifestValueException(fields.path, model.name.text,
            "has a version, files, tree, interface or model signature other than its variant ${quotedValue(own.name.text)}'s")
    }
    return model.copy(variants = variants, defaultVariant = own.name)
}

/** The members only a model's own entry has: every variant shares the model's. */
private val VARIANT_LESS_KEYS = listOf("variants", "variant", "download", "licence", "download_conditions", "storage")

/** One entry of `files`. */
private fun decodeFile(fields: JsonFields): ReleaseFile {
    val name = fields.parsed("name", fields.string("name"), ::PathSegment)
    val key = fields.parsed("key", fields.string("key"), ::RelativePath)
    val url = fields.parsed("url", fields.string("url"), ::HttpUrl)
    val sha256 = fields.parsed("sha256", fields.string("sha256"), ::Sha256Hex)
    val size = byteSize(fields, "size")
    val contentType = fields.string("content_type")
    fields.parsed("content_type", contentType) { checkPrintable(it, 255, "a Content-Type") }
    val path = fields.optionalString("path")?.let { fields.parsed("path", it, ::RelativePath) }
    val segments = fields.optionalFields("segments")?.let { index ->
        val indexKey = index.parsed("key", index.string("key"), ::RelativePath)
        val indexUrl = index.parsed("url", index.string("url"), ::HttpUrl)
        val indexSha256 = index.parsed("sha256", index.string("sha256"), ::Sha256Hex)
        val indexSize = byteSize(index, "size")
        if (indexSize < 48 || indexSize > SegmentIndex.MAX_ENCODED_SIZE) {
            throw ManifestValueException(index.pathOf("size"), indexSize.toString(), "is not the size of a segment index (48 bytes and up)")
        }
        SegmentIndexRef(indexKey, indexUrl, indexSha256, indexSize)
    }
    return ReleaseFile(name, key, url, sha256, size, contentType, path, segments)
}

/** `model_signature`: where the bundle is, and its digest and size (1 byte to 32 MiB). */
private fun decodeModelSignature(fields: JsonFields): ModelSignatureRef {
    val key = fields.parsed("key", fields.string("key"), ::RelativePath)
    val url = fields.parsed("url", fields.string("url"), ::HttpUrl)
    val sha256 = fields.parsed("sha256", fields.string("sha256"), ::Sha256Hex)
    val size = byteSize(fields, "size")
    if (size < 1 || size > ModelSignatureRef.MAXIMUM_SIZE) {
        throw ManifestValueException(fields.pathOf("size"), size.toString(), "is not the size of a model signature (1 to ${ModelSignatureRef.MAXIMUM_SIZE} bytes)")
    }
    return ModelSignatureRef(key, url, sha256, size)
}

/** A byte count: a whole number within 0…2^53. */
private fun byteSize(fields: JsonFields, key: String): Long {
    val value = fields.long(key)
    return try { ByteSize(value).bytes } catch (error: ManifestValueException) { throw error.at(fields.pathOf(key)) }
}
