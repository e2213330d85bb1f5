package dev.modelcast.client.format

/**
 * Bytes that are not the JSON a manifest may be: [offset] is the byte where reading
 * stopped, [path] the member being read (`models.m.files[0]`, empty at the top level) and
 * [reason] what is wrong there; [tooDeep] when the document nests deeper than allowed (what a
 * caller may report as a rule of the format rather than as bytes that are not JSON); [duplicateKey] the
 * member name when an object repeats one (so a caller can name the member itself, `version`,
 * rather than the object holding it). [Release.decode] reports it as `ClientError.InvalidManifest`.
 */
class JsonException(val offset: Long, val path: String, val reason: String, val tooDeep: Boolean = false, val duplicateKey: String? = null) :
    Exception("not JSON: $reason at byte $offset" + (if (path.isEmpty()) "" else " (in $path)"))
