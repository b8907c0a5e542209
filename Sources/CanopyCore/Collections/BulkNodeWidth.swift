/// How many of the `remaining` items of a level being bulk-built the next node takes: at most
/// `capacity`, and half of them where taking `capacity` would leave the last node under
/// `minWidth` (the tail is split evenly so that no node is underfull).
@inlinable
package func bulkNodeWidth(remaining: Int, capacity: Int, minWidth: Int) -> Int {
    remaining > capacity && remaining < capacity + minWidth ? remaining / 2 : Swift.min(capacity, remaining)
}
