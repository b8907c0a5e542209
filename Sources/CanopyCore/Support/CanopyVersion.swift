/// The version of Canopy (semantic versioning: until 1.0, a minor version may change the API; the
/// release notes, the DocC article *Release Notes*, list what each version adds and what a user
/// must change). `canopy --version`, `canopy serve`'s start-up line and the `canopy_build_info`
/// series of `/.metrics` show it.
public enum CanopyVersion {
    /// This build's version, e.g. `"0.1.0"`.
    public static let current = "0.1.0"
}
