package dev.modelcast.client.format

/**
 * Bytes that are not the JSON a manifest may be: [offset] is the byte where reading
 * stopped, [path] the member being read (`models.m.files[0]`, empty at the top level) and
 * [reason] what is wrong there. [Release.decode] reports it as `ClientError.InvalidManifest`.
 */
class JsonException(val offset: Long, val path: String, val reason: String) :
    Exception("not JSON: $reason at byte $offset" + (if (path.isEmpty()) "" else " (in $path)"))
