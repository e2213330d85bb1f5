/// modelcast's own version, printed by `modelcast --version`.
public enum ModelCastVersion {
    public static let current = "0.1.0"
}
