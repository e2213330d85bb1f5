package dev.modelcast.client.format

/**
 * A model of a release, parsed: a unit a device can install (its version, tree directory
 * and files) and, for a model with variants, the variants it chooses from ([choice]).
 *
 * For a model with variants, the model's own [version] and [files] are those of its
 * [defaultVariant] (what clients that do not know variants install). For a variant's unit
 * ([ReleaseVariant.model]) [variant] names the variant and [download] is the model's policy.
 */
data class ReleaseModel internal constructor(
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
    val modelInterface: JsonValue?
) {
    init {
        require(files.isNotEmpty()) { "a model has at least one file" }
    }
}

/** A variant of a model: its name, what it needs of a device, and the unit a device installs when it takes it. */
data class ReleaseVariant internal constructor(val name: ModelName, val requirements: VariantRequirements, val model: ReleaseModel)

/** The release devices fall back to (`rollback`): during a staged rollout, the devices outside the cohort. */
data class ReleaseRollback internal constructor(
    /** Sequence of the release pointed back to (0…2^53). */
    val sequence: Long,
    /** Its models, by name order. */
    val models: List<ReleaseModel>
)
