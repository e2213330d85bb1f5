package dev.modelcast.client

import dev.modelcast.client.install.ClientState
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.trust.KeySet
import java.util.Base64

/**
 * The key set the manifest must be proven by, with the state as it now is; a null key set
 * when the app ships none ([ClientConfiguration.trustedKeySet]). The chain is walked from the
 * newest key set verified before (or the app's, when it ships a newer one); the newest link
 * verified is kept in the state, saved at once (before the manifest is fetched, so a refused
 * manifest does not undo it). When a step rotated a manifest key out, the sequence floor of
 * every manifest URL becomes exactly that key set's floor for the URL's channel
 * (`sequence_floors`, [dev.modelcast.client.trust.KeySetChain.resetsSequenceFloors]), replacing one a leaked key may
 * have raised; and every ETag is dropped, as a 304 would stand for a manifest proven under
 * the older set. The newest key set must not have expired ([ClientError.KeySetRefused]).
 * The Swift client's `UpdateCheck.trustedKeySet`.
 */
internal fun ModelUpdater.trustedKeySet(state: ClientState, cancellation: Cancellation?): Pair<KeySet?, ClientState> {
    val shipped = configuration.shippedKeySet() ?: return Pair(null, state)
    // The state's key set was verified from the app's; a newer app may ship a newer one.
    val stored = state.keySet?.let { saved ->
        try { KeySet.parse(Base64.getDecoder().decode(saved.document)) } catch (unreadable: Exception) { null }
    }
    val start = if (stored != null && stored.version > shipped.version) stored else shipped
    val walk = KeySetWalk(configuration, http).walk(start, cancellation)
    var updated = state
    val bytes = walk.newestBytes
    if (bytes != null) {
        var sequences = updated.sequences
        // Each manifest URL is one channel's stream: it takes that channel's floor.
        walk.floorReset?.let { reset ->
            sequences = sequences.mapValues { (url, _) -> reset.sequenceFloor(ClientConfiguration.channelOf(url)) } +
                (configuration.manifestUrl to reset.sequenceFloor(configuration.channel))
        }
        updated = updated.copy(keySet = ClientState.VerifiedKeySet(walk.newest.version, Base64.getEncoder().encodeToString(bytes)),
            sequences = sequences, etags = emptyMap(), trusted = emptyMap())
        updated.save(statePath)
    }
    walk.failure?.let { throw it }
    try {
        walk.newest.checkFresh(configuration.clock())
    } catch (error: Exception) {
        throw ClientError.KeySetRefused(walk.newest.path, walk.newest.version, error.message ?: error.toString())
    }
    return Pair(walk.newest, updated)
}
