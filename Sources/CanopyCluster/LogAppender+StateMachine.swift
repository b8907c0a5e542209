package import CanopyCore

extension LogAppender {
    /// What a ``LogAppender`` does next, as transitions that return actions (the appender runs
    /// them): one batch in flight at a time, and every record queued meanwhile in the next batch.
    ///
    /// `Entry` is what the appender keeps per record (its bytes, position and waiter).
    package struct StateMachine<Entry> {
        package enum State {
            case idle
            /// A batch is in flight; `queued` goes in the next one.
            case appending(queued: [Entry])
            /// An append failed: every later record fails with the same error.
            case failed(DatabaseError)
            case closed
        }

        package enum Action {
            case none
            /// Append these records as one batch.
            case append([Entry])
            /// The batch committed: complete its records, and append `next` if any were queued.
            case committed(next: [Entry]?)
            /// Fail these records with the error.
            case fail([Entry], DatabaseError)
        }

        package private(set) var state: State = .idle

        package init() {}

        /// A record was handed in.
        package mutating func enqueue(_ entry: Entry) -> Action {
            switch self.state {
            case .idle:
                self.state = .appending(queued: [])
                return .append([entry])
            case .appending(var queued):
                queued.append(entry)
                self.state = .appending(queued: queued)
                return .none
            case .failed(let error):
                return .fail([entry], error)
            case .closed:
                return .fail([entry], DatabaseError(.closed, "The log appender is closed."))
            }
        }

        /// The batch in flight committed.
        package mutating func batchCommitted() -> Action {
            switch self.state {
            case .appending(let queued):
                if queued.isEmpty {
                    self.state = .idle
                    return .committed(next: nil)
                }
                self.state = .appending(queued: [])
                return .committed(next: queued)
            case .closed:
                return .committed(next: nil)
            case .idle, .failed:
                preconditionFailure("LogAppender: a batch committed with none in flight")
            }
        }

        /// The batch in flight failed (fenced, or its outcome could not be learnt): the appender
        /// fails from now on, and the records queued behind the batch fail with it.
        package mutating func batchFailed(_ error: DatabaseError) -> Action {
            switch self.state {
            case .appending(let queued):
                self.state = .failed(error)
                return .fail(queued, error)
            case .closed:
                return .none
            case .idle, .failed:
                preconditionFailure("LogAppender: a batch failed with none in flight")
            }
        }

        /// The appender closes: queued records fail; a batch in flight still completes.
        package mutating func close() -> Action {
            switch self.state {
            case .appending(let queued):
                self.state = .closed
                return .fail(queued, DatabaseError(.closed, "The log appender is closed."))
            case .idle, .failed:
                self.state = .closed
                return .none
            case .closed:
                return .none
            }
        }
    }
}
