/// What a program printed on its two streams, as a user would read it. A class so that the
/// closures a console is built from and the test see one record; `@unchecked Sendable` because a
/// test runs those closures synchronously on its own thread.
public final class Capture: @unchecked Sendable {
    public var out: [String] = []
    public var err: [String] = []

    public init() {}

    /// Keeps standard output's `text` as lines: split at each newline (so "a\nb" is two lines;
    /// a text ending in a newline leaves an empty last line).
    public func printOut(_ text: String) { out += Capture.lines(text) }

    /// Keeps standard error's `text` as lines, as `printOut` does.
    public func printErr(_ text: String) { err += Capture.lines(text) }

    /// `text` split at each newline, empty pieces kept.
    public static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
