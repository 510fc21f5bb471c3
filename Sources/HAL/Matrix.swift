/// The row lines of a key matrix: outputs that are either driven to their active level or
/// released to high impedance. Never driven to the inactive level.
///
/// Why: pressing two keys in one column connects two rows through that column. If an undriven row
/// were pushed to the inactive level (push-pull high) while another row is driven active (low), the
/// two outputs would short through the keys. A released row is high-Z instead (an open-drain output
/// let go, or the line switched to input), so any number of keys may be held.
///
/// `active` is logical: for the usual keypad, with pull-ups on the columns, active is low; the
/// backend inverts. Line indices are 0..<count, in the order the rows were configured. `setActive`
/// does not block beyond the write itself.
public protocol MatrixRowLines {
    /// The number of rows.
    var count: Int { get }
    /// Drives row `index` active (true) or releases it to high impedance (false).
    mutating func setActive(_ index: Int, _ active: Bool) throws(HALError)
}

/// The column lines of a key matrix: inputs with a bias (pull-up for active-low rows), read all at
/// once. Bit i of `read()` is set when column i is at its active level, i.e. a driven row reaches
/// it through a pressed key. At most 32 columns. Reading does not block beyond the read itself;
/// waiting for an edge on a column is the event source's job.
public protocol MatrixColumnLines {
    /// The number of columns (at most 32).
    var count: Int { get }
    /// The columns' logical levels as a bit mask (bit i = column i active).
    mutating func read() throws(HALError) -> UInt32
}
