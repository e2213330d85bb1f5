package dev.modelcast.client.format

import java.time.Instant
import java.util.Locale

/**
 * A staged rollout (`rollout` of a manifest): the manifest's `models` are the candidate,
 * its `rollback` section the fallback, and each device decides which it runs by the
 * cohort rule (docs/releases.md, conformance/vectors/rollout):
 *
 *     bucket  = first 8 bytes of SHA-256(UTF-8(salt) ‖ ":" ‖ UTF-8(device_id)), big-endian, mod 10 000
 *     share   = the schedule's share at now (the last step whose `at` ≤ now; 0 before the first)
 *               when there is a schedule, else [basisPoints]
 *     the device runs the candidate ⇔ bucket < share
 *
 * Shares are in hundredths of a percent (basis points, 0…10 000). [Release.decode] builds
 * it; the constructor checks the same invariants for one built by hand.
 */
data class Rollout(
    /** Share of devices on the candidate; with a schedule, its share when the manifest was published. */
    val basisPoints: Int,
    /** 16 to 64 lowercase hexadecimal digits, fixed for the rollout's life: it decides the cohort. */
    val salt: String,
    val startedAt: Timestamp,
    /** Steps increasing in time and share; null for a fixed share. */
    val schedule: List<Step>? = null
) {
    /** From [at] on, [basisPoints] of the devices run the candidate. */
    data class Step(val at: Timestamp, val basisPoints: Int)

    init {
        require(basisPoints in 0..BUCKETS) { "basis points $basisPoints outside 0…10000" }
        require(isValidSalt(salt)) { "salt ${quotedValue(salt)} is not 16 to 64 lowercase hexadecimal digits" }
        if (schedule != null) {
            require(schedule.isNotEmpty() && schedule.size <= 1000) { "a schedule has 1 to 1000 steps" }
            require(schedule.all { it.basisPoints in 0..BUCKETS }) { "a step's basis points are outside 0…10000" }
            require(schedule.zipWithNext().all { (a, b) -> b.at > a.at && b.basisPoints > a.basisPoints }) { "steps must increase in time and share" }
        }
    }

    /** The share of devices on the candidate at [now], in basis points. */
    fun basisPointsAt(now: Instant): Int {
        val steps = schedule ?: return basisPoints
        var current = 0
        for (step in steps) {
            if (step.at.instant > now) break
            current = step.basisPoints
        }
        return current
    }

    /** True when the device [deviceId] runs the candidate at [now]. */
    fun selects(deviceId: String, now: Instant): Boolean = bucket(salt, deviceId) < basisPointsAt(now)

    /** Halted: no device runs the candidate, now or later. */
    val isHalted: Boolean get() = basisPoints == 0 && schedule == null

    /** True while some but not all devices run the candidate at [now] (or a schedule has yet to reach 100 %). */
    fun isInProgress(now: Instant): Boolean {
        val share = basisPointsAt(now)
        if (share >= BUCKETS) return false
        return share > 0 || schedule?.any { it.basisPoints > 0 } == true
    }

    companion object {
        /** Buckets the rule divides devices into (basis points). */
        const val BUCKETS: Int = 10_000

        /** The device's bucket, 0…9 999: SHA-256 of `salt:deviceId` (UTF-8, as given), first 8 bytes big-endian, mod 10 000. */
        @JvmStatic
        fun bucket(salt: String, deviceId: String): Int {
            val digest = Sha256Digest.hash("$salt:$deviceId".toByteArray(Charsets.UTF_8)).toByteArray()
            var value = 0L
            for (index in 0 until 8) value = (value shl 8) or (digest[index].toLong() and 0xFF)
            return java.lang.Long.remainderUnsigned(value, BUCKETS.toLong()).toInt()
        }

        /** A salt is 16 to 64 lowercase hexadecimal digits: the same bytes in every language's rule. */
        @JvmStatic
        fun isValidSalt(salt: String): Boolean = salt.length in 16..64 && salt.all { it in '0'..'9' || it in 'a'..'f' }

        /** `10`, `0.5`, `12.25`: basis points as a percentage, as messages write it. */
        @JvmStatic
        fun percentText(basisPoints: Int): String =
            if (basisPoints % 100 == 0) (basisPoints / 100).toString()
            else String.format(Locale.ROOT, "%.2f", basisPoints / 100.0).replace(Regex("0$"), "")
    }
}
