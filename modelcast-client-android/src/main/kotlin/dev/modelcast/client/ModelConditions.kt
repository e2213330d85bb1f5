package dev.modelcast.client

import dev.modelcast.client.format.ChargingRequirement
import dev.modelcast.client.format.LicenceAcceptance
import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.format.NetworkRequirement
import dev.modelcast.client.format.ReleaseModel

// Whether a model the call would install waits: a licence the user has not accepted, or a
// download condition the device does not meet now. Judged before anything is requested, so
// a waiting model costs no artifact request.

/**
 * Why [model] (a unit about to be installed, which still needs [bytes] downloaded) waits,
 * or null when it may go on. The licence is asked for any install (a switch to a kept
 * version too: the user accepts what they run); the conditions only when bytes are to be
 * downloaded. With the app silent ([DeviceConditions] null fields), a model with a
 * condition waits: spending data or battery it asked not to spend is the one thing not undone.
 */
internal fun waitReason(model: ReleaseModel, bytes: Long, accepted: Map<String, LicenceTerms>, now: DeviceConditions): WaitReason? {
    val licence = model.licence
    if (licence != null && licence.acceptance == LicenceAcceptance.REQUIRED && accepted[model.name.text] != licence.terms) {
        return WaitReason.Licence(licence.terms.spdx, licence.terms.url)
    }
    if (bytes <= 0) return null
    val conditions = model.downloadConditions ?: return null
    conditions.unknown.entries.firstOrNull()?.let { (key, value) -> return WaitReason.UnknownCondition("download_conditions.$key ${quoted(value)}") }
    if (conditions.network == NetworkRequirement.UNMETERED && now.network != NetworkClass.UNMETERED) {
        return WaitReason.Network(NetworkRequirement.UNMETERED.wireName, now.network)
    }
    val cap = conditions.cellularMax
    if (cap != null && now.network != NetworkClass.UNMETERED && bytes > cap) return WaitReason.CellularCap(bytes, cap)
    if (conditions.charging == ChargingRequirement.REQUIRED && now.charging != true) return WaitReason.Charging(now.charging)
    return null
}

/** The error [ModelUpdater.request] throws for a model that waits for [reason]. */
internal fun waitingError(model: String, reason: WaitReason): ClientError =
    if (reason is WaitReason.Licence) ClientError.LicenceNotAccepted(model, reason.spdx, reason.url) else ClientError.ConditionsNotMet(model, reason)
