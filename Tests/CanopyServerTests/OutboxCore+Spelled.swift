@testable import CanopyServer

extension OutboxCore.FinishAction {
    /// How the outbox state-machine tests spell it.
    var spelled: String {
        switch self {
        case .resume(let drop): "resume(drop: \(drop))"
        case .wait: "wait"
        }
    }
}
