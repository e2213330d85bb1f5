package dev.modelcast.client

/** The kind of network the device is on, as the app tells it (`ConnectivityManager`'s `NET_CAPABILITY_NOT_METERED`). */
enum class NetworkClass(val wireName: String) {
    /** Wi-Fi, Ethernet: no per-byte cost. */
    UNMETERED("unmetered"),
    /** Cellular or any metered network. */
    CELLULAR("cellular");

    override fun toString(): String = wireName
}

/**
 * What the app says of the device now, for a model's `download_conditions`: the [network]
 * and whether it is [charging]. null is "the app has not said": a model that needs an
 * unmetered network (or a metered one within a cap) or charging then waits, so a client that
 * was never told never spends a user's cellular data or battery on a model that asked it not to.
 * Set it in [ClientConfiguration.conditions] or per call with [ModelUpdater.setConditions].
 */
data class DeviceConditions @JvmOverloads constructor(val network: NetworkClass? = null, val charging: Boolean? = null)
