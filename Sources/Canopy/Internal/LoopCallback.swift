/// Carries a user closure (or other non-Sendable value) to the loop thread.
// @unchecked Sendable: the value is only used on the loop thread, which the API documents as the
// thread every callback runs on; the caller hands it over and does not use it concurrently.
struct LoopCallback<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
