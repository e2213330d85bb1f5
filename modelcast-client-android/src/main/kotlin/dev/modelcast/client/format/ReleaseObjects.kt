package dev.modelcast.client.format

/**
 * One stored object a release names: a file devices install, a file's segment index, or a
 * model-signature bundle. [Release.objects] is the one enumeration of them (what a verifier
 * downloads, what a cache keeps).
 */
data class ReleaseObject(
    val kind: Kind,
    val section: Section,
    /** The model naming it (`detector`), or `prototypes`. */
    val model: String,
    /** The unit naming it: a model (`detector`), a variant (`detector@ane`) or `prototypes`. */
    val unit: String,
    /** That unit's entry: its version, files and model signature. */
    val entry: ReleaseModel,
    /** For an artifact or a segment index, the artifact's file name; null for a bundle. */
    val file: PathSegment?,
    /** For an artifact or a segment index, where a device puts the artifact (`TREE/PATH` in a tree); null for a bundle. */
    val place: String?,
    val key: RelativePath,
    val url: HttpUrl,
    val size: Long,
    val sha256: Sha256Hex,
    val contentType: String
) {
    /** What the object is to a device. */
    enum class Kind(val label: String) { ARTIFACT("artifact"), SEGMENT_INDEX("segment index"), MODEL_SIGNATURE("model signature") }

    /** Which part of the manifest names it: the release's own models and prototypes, or the rollback section. */
    enum class Section { RELEASE, FALLBACK }

    /** How a message names it: `segment index of detector 2.0.0 model.gguf (rollback section)`. */
    val label: String
        get() {
            val what = when (kind) {
                Kind.ARTIFACT -> "$unit ${entry.version} ${file ?: key}"
                Kind.SEGMENT_INDEX -> "segment index of $unit ${entry.version} ${file ?: key}"
                Kind.MODEL_SIGNATURE -> "model signature of $unit ${entry.version}"
            }
            return if (section == Section.FALLBACK) "$what (rollback section)" else what
        }
}

/**
 * Every object the release names, each key once, where first named: the models (each
 * variant as `NAME@VARIANT`, then the model's own entry), the prototypes, then the rollback
 * section's models; for each unit its files, each file's segment index, then its bundle.
 */
val Release.objects: List<ReleaseObject>
    get() {
        val seen = HashSet<String>()
        val objects = ArrayList<ReleaseObject>()
        fun add(item: ReleaseObject) { if (seen.add(item.key.text)) objects.add(item) }
        fun addUnit(unit: ReleaseModel, model: String, label: String, section: ReleaseObject.Section) {
            for (file in unit.files) {
                val place = (unit.tree?.let { "$it/" } ?: "") + file.placement.text
                add(ReleaseObject(ReleaseObject.Kind.ARTIFACT, section, model, label, unit, file.name, place, file.key, file.url, file.size, file.sha256, file.contentType))
                file.segments?.let { index ->
                    add(ReleaseObject(ReleaseObject.Kind.SEGMENT_INDEX, section, model, label, unit, file.name, place, index.key, index.url, index.size, index.sha256,
                        SegmentIndexRef.CONTENT_TYPE))
                }
            }
            unit.modelSignature?.let { bundle ->
                add(ReleaseObject(ReleaseObject.Kind.MODEL_SIGNATURE, section, model, label, unit, null, null, bundle.key, bundle.url, bundle.size, bundle.sha256,
                    ModelSignatureRef.CONTENT_TYPE))
            }
        }
        fun addModels(models: List<ReleaseModel>, section: ReleaseObject.Section) {
            for (model in models) {
                val name = model.name.text
                for (variant in model.variants) addUnit(variant.model, name, "$name@${variant.name}", section)
                // A model's own entry repeats its default variant's objects, already listed, unless it differs.
                addUnit(model, name, name, section)
            }
        }
        addModels(models, ReleaseObject.Section.RELEASE)
        prototypes?.let { addUnit(it, "prototypes", "prototypes", ReleaseObject.Section.RELEASE) }
        rollback?.let { addModels(it.models, ReleaseObject.Section.FALLBACK) }
        return objects
    }
