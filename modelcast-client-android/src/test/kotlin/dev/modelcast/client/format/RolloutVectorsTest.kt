package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Test

/** conformance/vectors/rollout: buckets, decisions at a percentage as a manifest writes it, and a schedule over time. */
class RolloutVectorsTest {
    private val vectors = Vectors.load("rollout/rollout.json")

    /** The rollout of base.json carrying [block] (and a rollback section), read as a device reads a manifest. */
    private fun rollout(block: JsonValue): Rollout {
        val base = Vectors.load("manifest/base.json")
        val manifest = base.setting("rollout", block).setting("rollback", obj("sequence" to JsonValue.Integer(1), "models" to base("models")))
        val rollout = Release.decode(Json.write(manifest).toByteArray(Charsets.UTF_8), "rollout vector").rollout
        assertNotNull(rollout)
        return rollout!!
    }

    @Test
    fun buckets() {
        val buckets = vectors("buckets").items
        assertEquals(67, buckets.size, "bucket vectors")
        for (vector in buckets) {
            assertEquals(vector("bucket").integer.toInt(), Rollout.bucket(vector("salt").text, vector("device_id").text), vector.toString())
        }
    }

    @Test
    fun decisions() {
        val published = Timestamp("2026-06-01T00:00:00Z").instant
        val decisions = vectors("decisions").items
        assertEquals(120, decisions.size, "decision vectors")
        for (vector in decisions) {
            // The percentage as the manifest writes it (0.5, 99.99), read as the client reads it.
            val rollout = rollout(obj("percent" to vector("percent"), "salt" to vector("salt"), "started_at" to str("2026-01-01T00:00:00Z")))
            assertEquals(vector("basis_points").integer.toInt(), rollout.basisPoints, vector.toString())
            assertEquals(vector("bucket").integer.toInt(), Rollout.bucket(rollout.salt, vector("device_id").text), vector.toString())
            assertEquals(vector("candidate").flag, rollout.selects(vector("device_id").text, published), vector.toString())
        }
    }

    @Test
    fun schedule() {
        val schedule = vectors("schedule")
        val rollout = rollout(schedule("rollout"))
        val evaluations = schedule("evaluations").items
        assertEquals(30, evaluations.size, "schedule evaluations")
        for (vector in evaluations) {
            val at = Timestamp(vector("at").text).instant
            assertEquals(vector("basis_points").integer.toInt(), rollout.basisPointsAt(at), vector.toString())
            assertEquals(vector("candidate").flag, rollout.selects(vector("device_id").text, at), vector.toString())
        }
    }
}
