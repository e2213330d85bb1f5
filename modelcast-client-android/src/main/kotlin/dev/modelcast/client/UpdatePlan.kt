package dev.modelcast.client

import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.VariantChoice

/**
 * What the manifest asks of this device, before anything is downloaded: for
 * [ModelUpdater.check], the plan of [ModelUpdater.update] with the same policy.
 */
data class UpdatePlan(
    val sequence: Long,
    /** True when a staged rollout put this device in the candidate's cohort (or there is no rollout). */
    val takesCandidate: Boolean,
    /**
     * Model name → the version this device should run, for the models the call covers (by
     * their download policy) and installs: a model whose variants this device meets none
     * of, a refused version and a waiting model are not here (see [variants], [refused] and [waiting]).
     */
    val versions: Map<String, String>,
    /** Bytes still to download for them (kept versions and finished downloads excluded). */
    val bytesToDownload: Long,
    /**
     * The models whose installed version the update changes, name → version: downloaded, or
     * a kept version switched back to (no download).
     */
    val installs: Map<String, String>,
    /**
     * For each covered model with variants, the variant this device takes (none: the model
     * is left as it is and nothing is downloaded for it) and why it passed over the ones
     * before it.
     */
    val variants: Map<String, VariantChoice>,
    /**
     * Every model of the manifest this device follows (the rollout's choice, filtered by
     * [ClientConfiguration.models]) → its download policy: the app's override
     * ([ClientConfiguration.downloadPolicies]), else the manifest's, else prefetch.
     */
    val policies: Map<String, DownloadPolicy>,
    /**
     * Covered models whose version in the manifest was reported unusable on this device
     * ([ModelUpdater.reportUnusable]): the device keeps the version it runs until the
     * manifest names another one.
     */
    val refused: Map<String, RefusedVersion>,
    /**
     * Covered models that wait, and why: a licence not accepted, a download condition not
     * met. Nothing of them is downloaded nor installed; the other models go on.
     */
    val waiting: Map<String, WaitReason> = emptyMap(),
    /** Models the update evicts to stay within [ClientConfiguration.storageBudget], in the order they go. */
    val evictions: List<String> = emptyList()
)

/** A version of a model this device refuses after [ModelUpdater.reportUnusable]. */
data class RefusedVersion(
    val model: String,
    val version: String,
    /** The variant it was, for a model with variants. */
    val variant: String?,
    /**
     * Its version directory's name (`VERSION-<digest of its files>`): a release of the same
     * version with other files is another version, and is not refused.
     */
    val id: String,
    /** The reason the app gave. */
    val reason: String
)
