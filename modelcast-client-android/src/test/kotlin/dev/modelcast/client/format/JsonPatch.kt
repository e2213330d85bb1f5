package dev.modelcast.client.format

/**
 * The RFC 6902 operations the hostile manifest table writes (add, replace, remove, move),
 * applied as the Swift conformance test applies them: `add` to an object sets the member
 * (in place or last); to an array, `-` appends and an index replaces that item.
 */
object JsonPatch {
    fun apply(document: JsonValue, operation: JsonValue): JsonValue {
        val path = tokens(operation("path").text)
        return when (operation("op").text) {
            "move" -> {
                val from = tokens(operation("from").text)
                val value = valueAt(document, from) ?: error("move from ${operation("from").text}: nothing there")
                adding(removing(document, from), value, path)
            }
            "remove" -> removing(document, path)
            "add", "replace" -> adding(document, operation("value"), path)
            else -> error("unknown patch operation $operation")
        }
    }

    private fun tokens(pointer: String): List<String> =
        pointer.split("/").drop(1).map { it.replace("~1", "/").replace("~0", "~") }

    private fun valueAt(value: JsonValue, path: List<String>): JsonValue? {
        if (path.isEmpty()) return value
        val next = when (value) {
            is JsonValue.Object -> value[path[0]]
            is JsonValue.Array -> path[0].toIntOrNull()?.let { value.items.getOrNull(it) }
            else -> null
        }
        return next?.let { valueAt(it, path.drop(1)) }
    }

    private fun adding(target: JsonValue, value: JsonValue, path: List<String>): JsonValue {
        if (path.isEmpty()) return value
        val rest = path.drop(1)
        return when (target) {
            is JsonValue.Object -> target.setting(path[0], if (rest.isEmpty()) value else adding(target[path[0]] ?: JsonValue.Null, value, rest))
            is JsonValue.Array -> {
                val items = ArrayList(target.items)
                if (path[0] == "-" && rest.isEmpty()) items.add(value)
                else {
                    val index = path[0].toInt()
                    items[index] = if (rest.isEmpty()) value else adding(items[index], value, rest)
                }
                JsonValue.Array(items)
            }
            else -> error("patch path through a scalar at ${path[0]}")
        }
    }

    private fun removing(target: JsonValue, path: List<String>): JsonValue {
        if (path.isEmpty()) return target
        val rest = path.drop(1)
        return when (target) {
            is JsonValue.Object -> {
                val members = LinkedHashMap(target.members)
                if (rest.isEmpty()) members.remove(path[0]) else members[path[0]] = removing(members.getValue(path[0]), rest)
                JsonValue.Object(members)
            }
            is JsonValue.Array -> {
                val items = ArrayList(target.items)
                val index = path[0].toInt()
                if (rest.isEmpty()) items.removeAt(index) else items[index] = removing(items[index], rest)
                JsonValue.Array(items)
            }
            else -> error("patch path through a scalar at ${path[0]}")
        }
    }
}
