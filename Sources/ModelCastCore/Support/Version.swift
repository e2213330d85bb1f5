/// modelcast's own version, printed by `modelcast --version`.
package enum ModelCastVersion {
    package static let current = "0.1.0"
}
