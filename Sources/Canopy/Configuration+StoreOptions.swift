package import CanopyStorage

extension Database.Configuration {
    /// How a durable store opened with this configuration is set up; its periodic sync measures
    /// intervals on `journalClock`.
    package func storeOptions(journalClock: any JournalClock) -> DurableStore.Options {
        DurableStore.Options(
            checkpointThreshold: self.checkpointThreshold, journalPolicy: self.syncPolicy.journalPolicy,
            journalClock: journalClock, logger: self.logger)
    }
}

extension SyncPolicy {
    /// The journal's policy for this one.
    var journalPolicy: JournalWriter.Policy {
        switch self {
        case .always: return .always
        case .never: return .never
        case .periodic(let interval):
            let (seconds, attoseconds) = interval.components
            let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
            return .periodic(nanoseconds: UInt64(max(1_000_000, nanos)))
        }
    }
}
