package import CanopyCore
import Synchronization

extension DurableStore {
    /// Writes a checkpoint of the current tree now (after the current one, if one is running);
    /// `completion` fires on the loop thread when it is on disk.
    package func checkpoint(root: @escaping () -> Node, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        self.loop.assertOnLoop()
        if let refusal = self.refusal { return completion(refusal) }
        self.checkpointWaiters.append(completion)
        if !self.checkpointRunning { self.startCheckpoint(root: root()) }
    }

    func startCheckpoint(root: Node? = nil) {
        self.loop.assertOnLoop()
        guard let root = root ?? self.currentRoot?() else { return }
        self.flush()  // the records the checkpoint covers go before the rotation
        let sequence = self.nextSequence &- 1
        self.checkpointRunning = true
        let waiters = self.checkpointWaiters
        self.checkpointWaiters = []
        let channel = self.channel
        let writer = self.writer
        self.writer.rotate(firstSequence: sequence &+ 1) { error in
            // On the writer thread: every record before the rotation is encoded by now.
            let encoded = writer.encodedByteCount
            channel.post { store in
                if error == nil { store.journalBase = (writer.emptySegmentBytes, encoded) }
                store.rotated(error: error, root: root, sequence: sequence, waiters: waiters)
            }
        }
    }

    func rotated(error: DatabaseError?, root: Node, sequence: UInt64, waiters: [@Sendable (DatabaseError?) -> Void]) {
        self.loop.assertOnLoop()
        if let error {
            self.checkpointRunning = false
            for waiter in waiters { waiter(error) }
            return
        }
        let writer = self.writer
        self.loop.runInThreadPool(
            { () -> Result<Int, DatabaseError> in
                do throws(DatabaseError) {
                    return .success(try writer.writeCheckpoint(root: root, sequence: sequence))
                } catch {
                    return .failure(error)
                }
            },
            then: { [self] result in
                self.checkpointRunning = false
                var failure: DatabaseError?
                switch result {
                case .success(let bytes):
                    self.checkpointSequence = sequence
                    self.checkpointBytes = bytes
                case .failure(let error):
                    failure = error
                }
                for waiter in waiters { waiter(failure) }
                guard !self.closed, self.broken == nil else { return }
                if !self.checkpointWaiters.isEmpty || self.journalBytes >= self.checkpointThreshold { self.startCheckpoint() }
            })
    }
}
