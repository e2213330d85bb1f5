package dev.modelcast.client.format

/**
 * The `rollout` block, read and checked in the Swift client's order: the percentages (at
 * most two decimals), the salt, the number of steps, then the first of the block's
 * problems (shares within 0–100 %, times, steps increasing), each named as it names them.
 */
internal fun decodeRollout(fields: JsonFields): Rollout {
    val basisPoints = hundredths(fields, "percent", fields.pathOf("percent"))
    val salt = fields.string("salt")
    val startedAt = fields.string("started_at")
    val rawSteps = fields.optionalArray("schedule")?.mapIndexed { index, value ->
        val step = fields.item("schedule", index, value)
        step.string("at") to hundredths(step, "percent", step.pathOf("percent"))
    }
    if (!Rollout.isValidSalt(salt)) throw ManifestValueException(fields.pathOf("salt"), salt, "is not 16 to 64 lowercase hexadecimal digits")
    if (rawSteps != null && rawSteps.size > 1000) throw ManifestValueException(fields.pathOf("schedule"), null, "has more than 1000 steps (${rawSteps.size})")

    val problems = ArrayList<String>()
    if (basisPoints !in 0..Rollout.BUCKETS) problems.add("percent ${Rollout.percentText(basisPoints)} is outside 0–100")
    val start = Timestamp.parse(startedAt)
    if (start == null) problems.add("started_at ${quotedValue(startedAt)} is not an RFC 3339 time")
    val steps = ArrayList<Rollout.Step>()
    if (rawSteps != null) {
        if (rawSteps.isEmpty()) problems.add("schedule has no steps")
        var previous: Rollout.Step? = null
        for ((index, raw) in rawSteps.withIndex()) {
            val (atText, share) = raw
            if (Timestamp.parse(atText) == null) {
                problems.add("schedule[$index].at ${quotedValue(atText)} is not an RFC 3339 time")
                continue
            }
            val step = Rollout.Step(Timestamp(atText), share)
            if (share !in 0..Rollout.BUCKETS) problems.add("schedule[$index].percent ${Rollout.percentText(share)} is outside 0–100")
            if (previous != null && !(step.at > previous.at && share > previous.basisPoints)) {
                problems.add("schedule[$index] (${Rollout.percentText(share)}% at $atText) does not come after the step before it in both time and percent")
            }
            previous = step
            steps.add(step)
        }
    }
    problems.firstOrNull()?.let { throw ManifestValueException(fields.path, null, it) }
    return Rollout(basisPoints, salt, Timestamp(startedAt), if (rawSteps == null) null else steps)
}

/** A percentage with at most two decimals as basis points (`0.5` → 50), as the Swift client rounds it. */
private fun hundredths(fields: JsonFields, key: String, path: String): Int {
    val percent = fields.double(key)
    val scaled = percent * 100
    if (scaled.isNaN() || scaled.isInfinite() || Math.abs(scaled - roundHalfAway(scaled)) >= 1e-6 || Math.abs(scaled) >= 1e9) {
        throw ManifestValueException(path, Json.write(fields.members.getValue(key)), "has more than two decimals")
    }
    return roundHalfAway(scaled).toInt()
}

/** Rounds to the nearest integer, halves away from zero (Swift's `rounded()`). */
private fun roundHalfAway(value: Double): Double {
    val floor = Math.floor(value)
    val fraction = value - floor
    return when {
        fraction > 0.5 -> floor + 1
        fraction < 0.5 -> floor
        value >= 0 -> floor + 1
        else -> floor
    }
}
