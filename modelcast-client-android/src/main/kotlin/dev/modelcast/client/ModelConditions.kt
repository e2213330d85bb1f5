package dev.modelcast.client

import dev.modelcast.client.format.ChargingRequirement
import dev.modelcast.client.format.LicenceAcceptance
import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.format.NetworkRequirement
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.format.quotedValue

// Whether a model the call would install waits: a licence the user has not accepted, or a
// download condition the device does not meet now. Judged before anything is requested, so
// a waiting model costs no artifact request.

/**
 * Why [model] (a unit about to be installed, which still needs [bytes] downloaded) waits,
 * or null when it may go on. The licence is asked for any install (a switch to a kept
 * version too: the user accepts what they run); the conditions only when bytes are to be
 * downloaded. A model over its cellular cap needs an unmetered network as much as one that
 * says so. With the app silent ([DeviceConditions] null fields), a model with a condition
 * waits: spending data or battery it asked not to spend is the one thing not undone. The
 * Swift client's order and reasons (UpdateCheck.waitReason).
 */
internal fun waitReason(model: ReleaseModel, bytes: Long, accepted: Map<String, LicenceTerms>, now: DeviceConditions): WaitReason? {
    val licence = model.licence
    when (val acceptance = licence?.acceptance) {
        null, LicenceAcceptance.None -> {}
        LicenceAcceptance.Required -> if (accepted[model.name.text] != licence.terms) return WaitReason.Licence(licence.terms.spdx, licence.terms.url)
        is LicenceAcceptance.Unknown -> return WaitReason.UnknownCondition("licence acceptance ${quotedValue(acceptance.wireName)}")
    }
    if (bytes <= 0) return null
    val conditions = model.downloadConditions ?: return null
    conditions.unknown["network"]?.let { return WaitReason.UnknownCondition("network ${quotedValue(it)}") }
    conditions.unknown["charging"]?.let { return WaitReason.UnknownCondition("charging ${quotedValue(it)}") }
    val cap = conditions.cellularMax
    val overCap = cap != null && bytes > cap
    if (conditions.network == NetworkRequirement.UNMETERED || overCap) {
        when (now.network) {
            NetworkClass.UNMETERED -> {}
            NetworkClass.CELLULAR ->
                return if (conditions.network == NetworkRequirement.UNMETERED) WaitReason.Network(NetworkRequirement.UNMETERED.wireName)
                       else WaitReason.CellularCap(bytes, cap ?: 0)
            null -> return WaitReason.NotReported("network")
        }
    }
    if (conditions.charging == ChargingRequirement.REQUIRED) {
        when (now.charging) {
            true -> {}
            false -> return WaitReason.Charging
            null -> return WaitReason.NotReported("charging")
        }
    }
    return null
}

/** The error [ModelUpdater.request] throws for a model that waits for [reason]. */
internal fun waitingError(model: String, reason: WaitReason): ClientError =
    if (reason is WaitReason.Licence) ClientError.LicenceNotAccepted(model, reason.spdx, reason.url) else ClientError.ConditionsNotMet(model, reason)
