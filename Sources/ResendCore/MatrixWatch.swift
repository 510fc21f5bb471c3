import HAL

/// When to scan a GPIO key matrix: the event-driven side of `MatrixScanner` that a backend (run's
/// matrix keypad) puts between the column lines' edge events, a one-shot timer and the loop.
///
/// - Idle (no key down): every row is driven, nothing is armed, and the backend blocks on the
///   columns' edge events: no periodic wake-ups. A column edge newer than the end of the last scan
///   starts a scan.
/// - A scan drives the rows one at a time, which itself makes the columns of held keys change:
///   those edges are stamped (by the kernel) before the scan's end, so `columnEdges` ignores them
///   instead of scanning again and again. (They only occur while a key is down, and then the watch
///   is polling anyway, see below.)
/// - While any key is down (`nextScan` set), column edges cannot tell everything: a second key in
///   the same column as a held one makes no edge, nor does releasing one of two keys in one
///   column. So the watch polls: it scans every `pollInterval` (5 ms by default) until every key
///   is up, and ignores column edges meanwhile (the next poll sees their cause). Releases are
///   therefore seen within one poll interval, whatever the column.
/// - After a scan that found no key, the columns are read once more with every row driven: a key
///   pressed during the scan (its edge stamped before the scan's end, so ignored) still pulls its
///   column low, and the watch then polls once more instead of missing it.
///
/// Keys held when the watch starts are taken as down without a press (like a button held at
/// start-up): their later release reaches the debouncer as the release of a key it never saw
/// pressed, which changes nothing.
public struct MatrixWatch<Rows: MatrixRowLines, Columns: MatrixColumnLines, Wait: Delay, Clock: MonotonicClock> {
    public var scanner: MatrixScanner<Rows, Columns, Wait>
    public let clock: Clock
    /// When the last scan ended (every row driven again), on `clock`; nil before the first.
    public private(set) var lastScanEnd: Instant?
    /// When the backend must call `timerFired` (arm its timer here); nil: wait for a column edge.
    public private(set) var nextScan: Instant?
    /// Scans made (at start, on an edge, on the timer).
    public private(set) var scans = 0
    /// Batches of column edges that started no scan (made by a scan, or seen while polling).
    public private(set) var ignoredEdges = 0

    public init(scanner: MatrixScanner<Rows, Columns, Wait>, clock: Clock) {
        self.scanner = scanner
        self.clock = clock
    }

    /// Drives every row (the idle state) and scans once to learn the keys already down (their
    /// changes are not reported).
    public mutating func start() throws(HALError) {
        try scanner.start()
        _ = try scan(now: clock.now())
    }

    /// Releases every row (at stop) and disarms.
    public mutating func stop() throws(HALError) {
        nextScan = nil
        try scanner.stop()
    }

    /// Column edges arrived, the newest stamped `newest` (nil when the backend has no stamp):
    /// scans at `now` unless the watch is polling or every edge predates the end of the last scan.
    /// Returns the raw key changes (for the debouncer).
    public mutating func columnEdges(newest: Instant?, now: Instant) throws(HALError) -> [KeyEvent] {
        if nextScan != nil {
            ignoredEdges += 1
            return []
        }
        if let newest, let end = lastScanEnd, newest <= end {
            ignoredEdges += 1
            return []
        }
        return try scan(now: now)
    }

    /// `key`'s level by a scan at `now` (`MatrixScanner.level(of:now:)`): what the loop asks to
    /// repair a lost change; nil for a key not in the layout or an ambiguous scan. The scan's own
    /// column edges end before `lastScanEnd`, so they start no scan of their own.
    public mutating func level(of key: Key, now: Instant) throws(HALError) -> ButtonLevel? {
        let level = try scanner.level(of: key, now: now)
        lastScanEnd = clock.now()
        return level
    }

    /// The backend's timer expired at `now`: scans when one is due.
    public mutating func timerFired(now: Instant) throws(HALError) -> [KeyEvent] {
        guard let due = nextScan, due <= now else { return [] }
        return try scan(now: now)
    }

    private mutating func scan(now: Instant) throws(HALError) -> [KeyEvent] {
        let events = try scanner.scan(now: now)
        scans += 1
        // Before the read below: a key that comes down after this instant makes a newer edge, one
        // that came down before it is seen by the read. No gap between the two.
        lastScanEnd = clock.now()
        nextScan = scanner.nextScan
        if nextScan == nil, try scanner.columns.read() != 0 {
            // Every row is driven, yet a column is low: a key came down during the scan.
            nextScan = now + scanner.pollInterval
        }
        return events
    }
}
