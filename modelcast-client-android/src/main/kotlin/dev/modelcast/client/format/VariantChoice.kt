package dev.modelcast.client.format

/**
 * Which variant of [model] a device takes, and why it passed over the ones before it.
 * [chosen] is the unit to install (the variant's version and files, [ReleaseModel.variant]
 * naming it), the model itself when it has no variants, or null when the device meets no
 * variant (it keeps what it has).
 */
data class VariantChoice(val model: String, val chosen: ReleaseModel?, val skipped: List<Skipped>) {
    /** A variant passed over, in the manifest's order, with each requirement it failed. */
    data class Skipped(val variant: String, val unmet: List<UnmetRequirement>) {
        /** Why, one sentence per unmet requirement. */
        val reasons: List<String> get() = unmet.map { it.message }
    }
}

/** The variant [device] takes: the first, in the manifest's order, whose requirements it meets. */
fun ReleaseModel.choice(device: DeviceProfile): VariantChoice {
    if (variants.isEmpty()) return VariantChoice(name.text, this, emptyList())
    val skipped = ArrayList<VariantChoice.Skipped>()
    for (variant in variants) {
        val unmet = variant.requirements.unmetRequirements(device)
        if (unmet.isEmpty()) return VariantChoice(name.text, variant.model, skipped)
        skipped.add(VariantChoice.Skipped(variant.name.text, unmet))
    }
    return VariantChoice(name.text, null, skipped)
}
