/// Carries a user closure (or other non-Sendable value) to the loop thread.
// @unchecked Sendable: the value is only used on the loop thread, which the API documents as the
// thread every callback runs on; the caller hands it over and does not use it concurrently.
package struct LoopCallback<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
