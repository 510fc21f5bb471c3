import Glibc
import HAL
import Testing

@testable import HALLinux

/// The GPIO matrix's lines without a kernel: the requests and reads go through the syscall script
/// (a scripted request succeeds without a line behind it; the VM tests drive real lines, vm/).
@Suite("GPIO matrix lines")
struct GPIOMatrixTests {
    static let chip = "/dev/gpiochip-missing"
    static let rows = [5, 6, 13, 19].map { GPIOLineLocation(chipPath: chip, offset: UInt32($0), name: "GPIO\($0)") }
    static let columns = [12, 16, 20].map { GPIOLineLocation(chipPath: chip, offset: UInt32($0), name: "GPIO\($0)") }

    /// Seven scripted requests: four rows, three columns.
    static let requests = [Syscall.Outcome](repeating: .succeed(0), count: 7)

    @Test func columnLevelsBecomeOneBitPerColumnInColumnOrder() throws {
        let (mask, unused) = try Syscall.withScript(Self.requests + [.succeed(1), .succeed(0), .succeed(1)]) { () throws(HALError) -> UInt32 in
            let lines = try GPIOMatrixLines(rows: Self.rows, columns: Self.columns)
            var columns = lines.columnLines
            return try columns.read()
        }
        #expect(mask == 0b101)
        #expect(unused == 0)
    }

    /// A released row is an input (open drain emulated by gpiolib on a Pi) and keeps its pad's
    /// pull unless the request sets one; a pulled-down row against a pulled-up column reads
    /// neither high nor low (phantom keys). The VM scenario keypad-pulldown-rows drives it.
    @Test func releasedRowsArePulledUpLikeTheColumnsWhateverThePadsResetPull() {
        #expect(GPIOMatrixLines.rowBias == .pullUp)
        #expect(GPIOMatrixLines.columnBias == .pullUp)
    }

    @Test func aMissingChipNamesTheFirstRow() {
        let error = thrownError { _ = try GPIOMatrixLines(rows: Self.rows, columns: Self.columns) }
        #expect(error?.kind == .notFound)
        #expect(error?.operation == "request keypad row 1 GPIO5 (line 5 of /dev/gpiochip-missing)")
    }

    @Test func aBusyColumnNamesTheColumnAndItsHolder() {
        let (error, _) = Syscall.withScript(Array(Self.requests.prefix(5)) + [.fail(EBUSY)]) {
            thrownError { _ = try GPIOMatrixLines(rows: Self.rows, columns: Self.columns) }
        }
        // The holder is asked of the (missing) chip, which fails: "another consumer".
        #expect(
            error
                == HALError(
                    .busy, operation: "request keypad column 2 GPIO16 (line 16 of /dev/gpiochip-missing): held by another consumer", errno: EBUSY))
    }

    @Test func aRowThatCannotBeSetIsNamed() {
        let (error, _) = Syscall.withScript(Self.requests + [.fail(EIO)]) {
            thrownError {
                let lines = try GPIOMatrixLines(rows: Self.rows, columns: Self.columns)
                var rows = lines.rowLines
                try rows.setActive(2, false)
            }
        }
        #expect(error == HALError(.io, operation: "set keypad row 3 GPIO13 (line 13 of /dev/gpiochip-missing)", errno: EIO))
    }

    @Test func theTimerIsReadableOnlyOnceArmedAndExpired() throws {
        let timer = try OneShotTimer()
        #expect(try timer.consume() == false, "disarmed: never readable")
        try timer.set(SystemClock().now() - .milliseconds(1))
        #expect(timer.deadline != nil)
        var ready = pollfd(fd: timer.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 1_000) == 1)
        #expect(try timer.consume() == true)
        #expect(timer.deadline == nil)
        try timer.set(SystemClock().now() + .seconds(60))
        try timer.set(nil)
        ready.revents = 0
        #expect(poll(&ready, 1, 0) == 0, "disarmed again")
    }
}
