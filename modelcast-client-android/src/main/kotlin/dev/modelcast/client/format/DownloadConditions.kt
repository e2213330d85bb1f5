package dev.modelcast.client.format

/** The network a model may be downloaded on (`download_conditions.network`). */
enum class NetworkRequirement(val wireName: String) {
    /** Any network (the default); a metered one within `cellular_max`. */
    ANY("any"),
    /** Only an unmetered network (Wi-Fi, Ethernet): never over cellular. */
    UNMETERED("unmetered");

    override fun toString(): String = wireName
}

/** Whether a model is downloaded only while the device charges (`download_conditions.charging`). */
enum class ChargingRequirement(val wireName: String) {
    /** Charging or not (the default). */
    ANY("any"),
    /** Only while the device is charging. */
    REQUIRED("required");

    override fun toString(): String = wireName
}

/**
 * When a device may download a model (`download_conditions`): on which [network], at most
 * how many bytes over a metered one ([cellularMax], 0…2^53; null: no cap), and whether only
 * while [charging].
 *
 * A value of `network` or `charging` this client does not know (a newer publisher's) is not
 * a bad manifest: it is kept in [unknown] (the key → the value as written), and the model
 * waits (its known requirements are then the defaults, which the unknown one may only narrow).
 */
data class DownloadConditions(
    val network: NetworkRequirement = NetworkRequirement.ANY,
    val cellularMax: Long? = null,
    val charging: ChargingRequirement = ChargingRequirement.ANY,
    val unknown: Map<String, String> = emptyMap()
) {
    init {
        require(cellularMax == null || cellularMax in 0..ByteSize.MAXIMUM) { "cellular_max $cellularMax is outside 0…2^53" }
        require(unknown.keys.all { it == "network" || it == "charging" }) { "only network and charging values can be unknown" }
    }
}
