extension Duration {
    /// Whole milliseconds for libuv timers, rounded up so a timer never fires early; negative
    /// durations become 0 and huge ones saturate.
    var roundedUpMilliseconds: UInt64 {
        let (seconds, attoseconds) = self.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let fraction = UInt64((attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond)
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000)
        guard !overflow, whole <= UInt64.max - fraction else { return .max }
        return whole + fraction
    }
}
