/// What a character display shows: exactly `rows` lines of exactly `columns` characters each
/// (as produced by `ScreenLayout.frame`). One `Character` is one display cell; mapping characters
/// to the controller's character ROM is the display driver's job.
public struct ScreenText: Hashable, Sendable {
    public var lines: [String]
    /// The cell that shows the key the user just pressed (the code field's cursor), when this frame
    /// answers a key; nil otherwise. Not something the screen shows: a display that cannot write
    /// every cell at once writes the changed cells from there on first, so the key's echo is on
    /// the glass before the rest of the frame.
    public var focus: ScreenCell?

    public init(lines: [String], focus: ScreenCell? = nil) {
        self.lines = lines
        self.focus = focus
    }
}

/// A cell of the screen: `row` and `column` from 0, counted in cells (Unicode scalars, as
/// `ScreenLayout.fit` counts them).
public struct ScreenCell: Hashable, Sendable {
    public var row: Int
    public var column: Int

    public init(row: Int, column: Int) {
        self.row = row
        self.column = column
    }
}

/// The geometry of the character display and where the controller's texts go on it:
/// line 1 shows the status, line 2 the button's label, further rows stay blank.
public struct ScreenLayout: Hashable, Sendable {
    /// Characters per line (16 or 20 on the usual HD44780 modules).
    public var columns: Int
    /// Lines on the display (2 or 4 on the usual HD44780 modules).
    public var rows: Int

    /// The status line and the label line need two rows.
    public static let minimumRows = 2
    /// A display needs at least one column to show anything.
    public static let minimumColumns = 1

    /// The common 16 columns by 2 rows module (1602).
    public static let sixteenByTwo = ScreenLayout(columns: 16, rows: 2)
    /// The common 20 columns by 4 rows module (2004).
    public static let twentyByFour = ScreenLayout(columns: 20, rows: 4)

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// True when the geometry can hold the status and the label (at least 1 column, 2 rows).
    /// Check this when reading a configuration; `frame` treats an invalid layout as a bug.
    public var isValid: Bool {
        columns >= ScreenLayout.minimumColumns && rows >= ScreenLayout.minimumRows
    }

    /// The screen for a status and a label: line 1 `status`, line 2 `label`, other rows blank;
    /// each line padded with spaces or cut to exactly `columns` characters.
    public func frame(status: String, label: String) -> ScreenText {
        precondition(isValid, "ScreenLayout.frame: a layout needs at least 1 column and 2 rows")
        var lines = [fit(status), fit(label)]
        while lines.count < rows {
            lines.append(fit(""))
        }
        return ScreenText(lines: lines)
    }

    /// `text` cut or padded with spaces to exactly `columns` cells: one per Unicode scalar, as
    /// the driver writes them (a character of several scalars, "e\u{301}", takes several cells).
    func fit(_ text: String) -> String {
        let width = text.unicodeScalars.count
        if width > columns {
            return String(String.UnicodeScalarView(text.unicodeScalars.prefix(columns)))
        }
        return text + String(repeating: " ", count: columns - width)
    }
}
