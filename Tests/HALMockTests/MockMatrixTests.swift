import HAL
import HALMock
import Testing

@Suite("Mock matrix")
struct MockMatrixTests {
    @Test func aColumnReadsActiveOnlyThroughAPressedKeyOnADrivenRow() throws {
        let clock = ManualClock()
        let matrix = MockMatrix(rows: 4, columns: 3, clock: clock)
        var rows = matrix.rowLines
        var columns = matrix.columnLines
        matrix.press(row: 1, column: 2)
        #expect(try columns.read() == 0, "no row driven")
        try rows.setActive(0, true)
        #expect(try columns.read() == 0, "the key is on another row")
        try rows.setActive(1, true)
        #expect(try columns.read() == 0b100)
        try rows.setActive(1, false)
        #expect(matrix.drives == [.low, .highZ, .highZ, .highZ])
        #expect(matrix.reads == 3)
    }

    @Test func withoutDiodesThreeKeysMakeAGhostAndWithDiodesNot() {
        for diodes in [false, true] {
            let matrix = MockMatrix(rows: 2, columns: 2, diodes: diodes, clock: ManualClock())
            matrix.press(row: 0, column: 0)
            matrix.press(row: 0, column: 1)
            matrix.press(row: 1, column: 0)
            matrix.drive(1, .low)
            #expect(matrix.columnMask() == (diodes ? 0b01 : 0b11))
        }
    }

    @Test func theTimelineRecordsDrivesAndKeysWithTheirTimes() {
        let clock = ManualClock()
        let matrix = MockMatrix(rows: 2, columns: 2, clock: clock)
        clock.advance(by: .milliseconds(1))
        matrix.drive(0, .low)
        clock.advance(by: .milliseconds(1))
        matrix.press(row: 1, column: 1)
        #expect(matrix.timeline.map(\.time) == [.origin, Instant(nanoseconds: 1_000_000), Instant(nanoseconds: 2_000_000)])
        #expect(matrix.timeline.last?.drives == [.low, .highZ])
        #expect(matrix.timeline.last?.keysDown == [MockMatrix.Crossing(row: 1, column: 1)])
    }

    @Test func aLowAndAHighOutputJoinedByKeysAreAShortAndAnUndrivenRowIsNot() {
        let matrix = MockMatrix(rows: 3, columns: 2, clock: ManualClock())
        matrix.press(row: 0, column: 1)
        matrix.press(row: 2, column: 1)
        matrix.drive(0, .low)
        matrix.drive(1, .high)
        #expect(matrix.shorts.isEmpty, "row 1 has no key down")
        matrix.drive(2, .high)
        #expect(matrix.shorts == [MockMatrix.Short(time: .origin, lowRow: 0, highRow: 2)])
    }

    @Test func aRowOutsideTheMatrixIsAnError() {
        let matrix = MockMatrix(rows: 2, columns: 2, clock: ManualClock())
        var rows = matrix.rowLines
        #expect(throws: HALError(.invalidArgument, operation: "set matrix row 2")) { try rows.setActive(2, true) }
    }
}
