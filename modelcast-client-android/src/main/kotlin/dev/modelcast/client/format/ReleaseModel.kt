package dev.modelcast.client.format

/**
 * A model of a release, parsed: a unit a device can install (its version, tree directory
 * and files) and, for a model with variants, the variants it chooses from ([choice]).
 *
 * For a model with variants, the model's own [version] and [files] are those of its
 * [defaultVariant] (what clients that do not know variants install). For a variant's unit
 * ([ReleaseVariant.model]) [variant] names the variant and [download], [licence],
 * [downloadConditions] and [storage] are the model's.
 * [Release.decode] makes them; one built by hand is held to the same structural rules.
 */
data class ReleaseModel(
    val name: ModelName,
    val version: ModelVersion,
    /** A tree model's directory name (`TinyClassifier.mlpackage`); every file then has a path. */
    val tree: PathSegment?,
    /** At least one; no two go to the same place (compared case-insensitively). */
    val files: List<ReleaseFile>,
    /** The variant this unit is; null for a model's own entry. */
    val variant: ModelName?,
    /** The variants in the order devices prefer them; empty when the model has none. */
    val variants: List<ReleaseVariant>,
    /** When devices download it; null when the manifest leaves it to the app. */
    val download: DownloadPolicy?,
    /** Its OpenSSF model signature, when the release names one. */
    val modelSignature: ModelSignatureRef?,
    /** The `variant` field: which variant the model's own fields are. null without variants. */
    val defaultVariant: ModelName?,
    /** Profile fields and free-form metadata (`meta`). */
    val meta: Map<String, JsonValue>,
    /** The model's interface as `modelcast inspect` read it (`interface`), when there is one. */
    val modelInterface: JsonValue?,
    /** Its `licence`, when the manifest names one (a variant's unit carries its model's). */
    val licence: ModelLicence? = null,
    /** Its `download_conditions`, when the manifest sets any (a variant's unit carries its model's). */
    val downloadConditions: DownloadConditions? = null,
    /** Its `storage`, when the manifest says (a variant's unit carries its model's). */
    val storage: ModelStorage? = null
) {
    // What decoding refuses with the Swift client's words, held again for a value built by hand
    // (or by copy): no instance breaks the rules a device relies on.
    init {
        require(files.isNotEmpty()) { "a model has at least one file" }
        require(files.all { (it.path != null) == (tree != null) }) { "the files of a tree model, and only those, have a path" }
        require(files.map { lowercased(it.placement.text) }.toSet().size == files.size) { "two files go to the same place" }
        require(variants.size <= 32 && variants.map { lowercased(it.name.text) }.toSet().size == variants.size) { "1 to 32 variants with unique names" }
        require(if (defaultVariant == null) variants.isEmpty() else variants.any { it.name == defaultVariant }) { "the default variant is one of the variants" }
        require(variants.all { it.model.variants.isEmpty() }) { "a variant has no variants of its own" }
    }
}

/** A variant of a model: its name, what it needs of a device, and the unit a device installs when it takes it. */
data class ReleaseVariant(val name: ModelName, val requirements: VariantRequirements, val model: ReleaseModel)

/** The release devices fall back to (`rollback`): during a staged rollout, the devices outside the cohort. */
data class ReleaseRollback(
    /** Sequence of the release pointed back to (0…2^53). */
    val sequence: Long,
    /** Its models, by name order. */
    val models: List<ReleaseModel>
) {
    init {
        require(sequence in 0..ByteSize.MAXIMUM) { "sequence $sequence is outside 0…2^53" }
    }
}
