package dev.modelcast.client.format

/**
 * A requirement of a variant that a device does not meet. [requirement] is the stable code,
 * the `requires` key it is about (`min_memory`, `platforms`, `accelerators`,
 * `architectures`, `capabilities`, or an unknown key as written): what to match on.
 * [message] is the sentence for people, the Swift client's word for word
 * (`needs 8 GiB of memory; the device has 6 GiB`).
 */
data class UnmetRequirement(val requirement: String, val message: String)
