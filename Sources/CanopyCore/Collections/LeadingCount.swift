/// The number of leading indices of `0..<count` for which `isBelow` holds, for a predicate that
/// holds for a prefix of them (true, …, true, false, …, false): the binary search of the sorted
/// structures (a lower bound, a child to descend into, a partition rank).
///
/// - Complexity: O(log *count*) calls of `isBelow`.
@inlinable
package func leadingCount(_ count: Int, where isBelow: (Int) -> Bool) -> Int {
    var low = 0
    var high = count
    while low < high {
        let mid = (low &+ high) >> 1
        if isBelow(mid) { low = mid &+ 1 } else { high = mid }
    }
    return low
}
