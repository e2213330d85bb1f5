package dev.modelcast.client

import dev.modelcast.client.format.LicenceTerms

/**
 * Why a model the call covers is not downloaded nor installed now ([UpdatePlan.waiting]):
 * the other models go on, and a later call installs it once the reason is gone. [description]
 * is the sentence a person reads (`needs an unmetered network`), values escaped.
 */
sealed class WaitReason {
    abstract val description: String

    override fun toString(): String = description

    /** The model's licence requires acceptance and [ModelUpdater.acceptLicence] has not been called for these terms. */
    data class Licence(val spdx: String?, val url: String?) : WaitReason() {
        /** The terms to accept. */
        val terms: LicenceTerms get() = LicenceTerms(spdx, url)
        override val description: String
            // Both are printable ASCII without control characters (LicenceTerms' rules): shown as they are.
            get() = "licence " + listOfNotNull(spdx, url?.let { "($it)" }).joinToString(" ") + " not accepted"
    }

    /** The model downloads only on a [required] network (`unmetered`); the device is on [current], null when the app has not said. */
    data class Network(val required: String, val current: NetworkClass?) : WaitReason() {
        override val description: String
            get() = "needs an $required network" + if (current == null) " (the app has not reported the network)" else " (the device is on $current)"
    }

    /** On a metered network (or one the app has not reported) the model still needs [bytes], more than its cellular cap of [cap]. */
    data class CellularCap(val bytes: Long, val cap: Long) : WaitReason() {
        override val description: String get() = "needs $bytes bytes, more than its cap of $cap bytes on a metered network"
    }

    /** The model downloads only while the device charges; [charging] is what the app said (null: nothing). */
    data class Charging(val charging: Boolean?) : WaitReason() {
        override val description: String
            get() = "needs the device to be charging" + if (charging == null) " (the app has not reported charging)" else ""
    }

    /** The manifest sets a download condition this client does not know ([condition] names it and its value). */
    data class UnknownCondition(val condition: String) : WaitReason() {
        override val description: String get() = "has a download condition this client does not know: $condition"
    }
}
