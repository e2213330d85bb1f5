package dev.modelcast.client

import dev.modelcast.client.format.LicenceTerms

/**
 * Why a model the call covers is not downloaded nor installed now ([UpdatePlan.waiting]):
 * the other models go on, and a later call installs it once the reason is gone. [description]
 * is the sentence a person reads (`needs an unmetered network`), the Swift client's words.
 */
sealed class WaitReason {
    abstract val description: String

    override fun toString(): String = description

    /** The model's licence requires acceptance and [ModelUpdater.acceptLicence] has not been called for these terms (or was for others). */
    data class Licence(val spdx: String?, val url: String?) : WaitReason() {
        /** The terms to accept. */
        val terms: LicenceTerms get() = LicenceTerms(spdx, url)
        override val description: String
            // Both are printable ASCII without control characters (LicenceTerms' rules): shown as they are.
            get() = "licence " + listOfNotNull(spdx, url?.let { if (spdx == null) it else "($it)" }).joinToString(" ") + " not accepted"
    }

    /** The model downloads only on a [required] network (`unmetered`) and the app reports another. */
    data class Network(val required: String) : WaitReason() {
        override val description: String get() = "needs an $required network"
    }

    /** On a metered network the model still needs [bytes], more than its `cellular_max` ([cap]). */
    data class CellularCap(val bytes: Long, val cap: Long) : WaitReason() {
        override val description: String get() = "needs $bytes bytes, more than the $cap it may download on a metered network"
    }

    /** The model downloads only while the device charges, and the app reports it does not. */
    object Charging : WaitReason() {
        override val description: String get() = "needs the device to be charging"
    }

    /**
     * The model needs a condition the app has not reported ([DeviceConditions] null): the
     * client does not guess. [condition] is `network` or `charging`.
     */
    data class NotReported(val condition: String) : WaitReason() {
        override val description: String
            get() = if (condition == "network") "needs an unmetered network, and the app has not reported the network"
                    else "needs the device to be charging, and the app has not reported whether it is"
    }

    /**
     * A licence acceptance or download condition this client does not know (a newer
     * publisher's), [condition] describing it with its value (`network 'satellite'`): the
     * model is held back, not downloaded on a guess.
     */
    data class UnknownCondition(val condition: String) : WaitReason() {
        override val description: String get() = "has a condition this client does not know ($condition); it waits for a newer client"
    }
}
