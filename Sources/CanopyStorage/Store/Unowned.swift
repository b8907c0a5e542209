/// An unowned reference, so the channel does not keep the store alive.
struct Unowned<Object: AnyObject>: @unchecked Sendable {  // @unchecked: only dereferenced on the loop thread
    unowned let object: Object
    init(_ object: Object) { self.object = object }
}
